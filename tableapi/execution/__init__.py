"""Execution: an optimized plan becomes a DataFrame, a running query or an insert.

One executor per environment, chosen by its mode once (:func:`executor_for`); ``Table``
reaches it through its environment. ``base.py`` holds what the API and the executors share
(the sinks, the executor protocol, the server). ``batch.py`` runs finished jobs, ``streaming.py``
starts streaming queries (bounded runs, sinks, checkpoints, the state store per query).
"""

from __future__ import annotations

from tableapi.config import TableConfig
from tableapi.execution.base import (
    BlackholeSink,
    Executor,
    FileSink,
    JdbcSink,
    PrintSink,
    Server,
    Sink,
)
from tableapi.execution.batch import BatchExecutor
from tableapi.execution.streaming import StreamingExecutor


def executor_for(mode: str, server: Server, config: TableConfig) -> Executor:
    """The executor of an environment in ``mode``."""
    if mode == "batch":
        return BatchExecutor(server, config)
    return StreamingExecutor(server, config)


__all__ = [
    "BlackholeSink",
    "Executor",
    "FileSink",
    "JdbcSink",
    "PrintSink",
    "Server",
    "Sink",
    "executor_for",
]
