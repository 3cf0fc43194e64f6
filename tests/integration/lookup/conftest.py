"""The lookup integration tests use the real PostgreSQL of tests/postgres.py."""

from tests.postgres import postgres  # noqa: F401  (the session fixture)
