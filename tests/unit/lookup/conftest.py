"""Fixtures of the lookup tests: a real PostgreSQL (tests/postgres.py) and SQLite files."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from server_ext.lookup.caches import clear_caches
from tests.postgres import postgres  # noqa: F401  (the session fixture)


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    """Each test starts with no cache in this process (caches live in a module global)."""
    clear_caches()
    yield
    clear_caches()
