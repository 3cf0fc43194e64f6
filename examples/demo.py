"""All the examples in one run, on one embedded Spark Connect server (one start-up).

The demo's code lives in the package, ``tableapi/demo.py``, so that ``python -m tableapi``
runs it too; ``regular_join.py``, ``interval_join.py``, ``computed_columns.py``,
``streaming_join.py``, ``temporal_join.py`` and ``lookup_join.py`` next to this file are the
same programs, one per file and with more comments.

Run it with ``python examples/demo.py`` or ``python examples/demo.py sc://localhost:15002``.
"""

from __future__ import annotations

from tableapi import TableEnvironment
from tableapi.demo import cli
from tableapi.demo import main as run_demo


def main(env: TableEnvironment | None = None) -> None:
    run_demo(env)


if __name__ == "__main__":
    cli()
