"""A filesystem table whose path does not exist gets the product's own error (issue 20): it
names the table and the path, says what Flink does (its filesystem source fails on a missing
path, also with ``source.monitor-interval``) and how to fix it; never pyspark's raw
``AnalysisException: [PATH_NOT_FOUND]``.

Two ways to it: on a server that reads this machine's files (the embedded one) the client
checks the path before anything runs; on another server Spark's error is translated when it
comes back. The second is reached here through the same local server under another address
(127.0.0.1 instead of localhost), which the client does not take for its own embedded server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tableapi import Schema, TableDescriptor, TableEnvironment, ValidationError, col
from tableapi.result import StreamingTableResult
from tests.integration.errors import from_the_server
from tests.servers import TestServer

MODES = ["batch", "streaming bounded", "streaming watched"]


def _register(env: TableEnvironment, path: str, watched: bool) -> None:
    descriptor = (
        TableDescriptor.for_connector("filesystem")
        .schema(Schema.new_builder().column("id", "BIGINT").column("name", "STRING").build())
        .option("path", path)
        .option("format", "json")
    )
    if watched:
        descriptor.option("source.monitor-interval", "200 ms")
    env.create_temporary_table("Orders", descriptor.build())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["embedded", "remote"])
def test_a_missing_path_names_the_table_and_what_flink_does(
    test_server: TestServer, shared_dir: Path, mode: str, where: str
) -> None:
    url = test_server.url
    if where == "remote":
        if test_server.kind != "local":
            pytest.skip("a container server is remote already: the 'embedded' case runs it")
        url = url.replace("sc://localhost:", "sc://127.0.0.1:")
    plan_time = where == "embedded" and test_server.kind == "local"
    env = TableEnvironment.create(mode=mode.split()[0], remote=url)
    try:
        missing = str(shared_dir / "nonexistent" / "dir")
        _register(env, missing, watched=mode == "streaming watched")
        query = env.from_path("Orders").select(col("id"), col("name"))
        jobs_before = len(env.spark.streams.active)
        with pytest.raises(ValidationError) as failure:
            result = query.execute()
            if isinstance(result, StreamingTableResult):
                result.process_all_available()
            result.collect()
        text = str(failure.value)
        assert f"Table 'Orders' reads path '{missing}', which does not exist." in text, text
        assert "Flink's filesystem source fails" in text and "option 'path'" in text, text
        assert "PATH_NOT_FOUND" not in text and "AnalysisException" not in text
        if mode == "streaming watched":
            assert (
                "'source.monitor-interval'" in text and "must exist when the query starts" in text
            )
        elif mode == "streaming bounded":
            assert "a table without 'source.monitor-interval' is bounded" in text, text
        # On the embedded server the client refuses it: no query started, nothing from Spark;
        # elsewhere it is Spark's error, translated.
        assert from_the_server(failure.value) is not plan_time
        if plan_time:
            assert len(env.spark.streams.active) == jobs_before
        # the same table reads once the directory is there (an empty one: no rows)
        Path(missing).mkdir(parents=True)
        Path(missing).chmod(0o777)
        result = query.execute()
        if isinstance(result, StreamingTableResult):
            result.process_all_available()
            assert result.collect() == []
            result.cancel()
        else:
            assert result.collect() == []
    finally:
        for running in env.spark.streams.active:
            running.stop()
        env.close()
