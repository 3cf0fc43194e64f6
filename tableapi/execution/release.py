"""Letting a finished streaming query's memory go on the server.

Spark keeps a stopped query's memory-sink rows (Spark Connect keeps the stopped query, and so
its sink, for an hour) and its loaded state store providers (until the next maintenance, 60 s)
in the server's heap: back-to-back joins of 200k x 200k rows filled a 1 GiB heap by the sixth.
``server_ext``'s release command plugin (``ReleasePlugin.java``) clears both; a server without
it gets the memory sink's view dropped, and the rest goes in Spark's own time.

Example::

    query.stop()
    release(spark, query.runId, "tableapi_result_1a2b3c")  # the rows and the state go
    release(spark, query.runId, None)                       # the state only (rows still read)
"""

from __future__ import annotations

import contextlib
import json

from pyspark.errors import PySparkException
from pyspark.sql.connect import proto
from pyspark.sql.connect.session import SparkSession

from server_ext.jvm import RELEASE_TYPE_URL


def release(spark: SparkSession, run_id: str | None, view: str | None) -> None:
    """Let a stopped query's memory go: the rows of its memory sink behind temporary view
    ``view`` (then dropped), and the state store providers of its run ``run_id`` (either may
    be None). Best effort: a failure here never fails the caller.

    Example::

        release(spark, result.query.runId, result.query.name)
    """
    command = proto.Command()
    command.extension.type_url = RELEASE_TYPE_URL
    command.extension.value = json.dumps({"view": view, "runId": run_id}).encode()
    try:
        spark.client.execute_command(command)
    except PySparkException:  # a server without the plugin ("No handler found for extension")
        if view:
            with contextlib.suppress(PySparkException):
                spark.catalog.dropTempView(view)
