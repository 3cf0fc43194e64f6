"""The jdbc sink's tests use the real PostgreSQL of tests/postgres.py and SQLite files."""

from tests.postgres import postgres  # noqa: F401  (the session fixture)
