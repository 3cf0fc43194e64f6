"""The logical plan: immutable nodes that derive their row types and validate their input."""
