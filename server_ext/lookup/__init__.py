"""Lookup joins: sources (PostgreSQL, SQLite), caches (NONE / PARTIAL / FULL) and the
operator that ``mapInArrow`` runs (``operator.LookupJoinFunction``); ``spec.py`` is the
contract with the client. Import the submodules directly: this package imports nothing
heavy so that the client can read ``spec`` without pyarrow or a database driver."""
