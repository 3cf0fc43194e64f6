"""Differential conformance suite: the same random queries on Apache Flink 2.3 and on this
product, final tables compared (see README.md in this folder)."""
