"""A lookup database that is down fails the query with the query's own error (issue 20):
it names the lookup table and the database's address, never the password, and never says
the Spark Connect server is gone, which still answers the next query.

The database is a PostgreSQL URL on a port where nothing listens: the connection is refused,
whose text ("Connection refused") the client once took for a dead server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tableapi import (
    DatabaseError,
    Schema,
    ServerError,
    TableDescriptor,
    TableEnvironment,
    col,
)
from tableapi.result import StreamingTableResult
from tableapi.session import free_port
from tests.integration.changelog_files import ChangelogTable

PASSWORD = "s3cret-never-shown"


@pytest.fixture(params=["batch", "streaming bounded", "streaming watched"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_lookup_database_that_is_down_is_not_a_dead_server(
    server_url: str, shared_dir: Path, mode: str
) -> None:
    env = TableEnvironment.create(mode=mode.split()[0], remote=server_url)
    try:
        dead_port = free_port()  # nothing listens there
        address = f"127.0.0.1:{dead_port}"
        env.create_temporary_table(
            "DownUsers",
            TableDescriptor.for_connector("jdbc")
            .schema(
                Schema.new_builder()
                .column("id", "BIGINT")
                .column("name", "STRING")
                .primary_key("id")
                .build()
            )
            .option("url", f"jdbc:postgresql://{address}/postgres")
            .option("table-name", "users")
            .option("username", "app")
            .option("password", PASSWORD)
            .option("lookup.max-retries", "1")
            .build(),
        )
        orders = ChangelogTable(
            env,
            shared_dir,
            "Orders",
            (("order_id", "BIGINT"), ("user_id", "BIGINT")),
            op_column=None,
            computed=[("o_proctime", "PROCTIME()")],
            bounded=mode != "streaming watched",
        )
        orders.append([("+I", (1, 7)), ("+I", (2, 8))])
        query = (
            env.from_path("Orders")
            .temporal_join(
                env.from_path("DownUsers"), col("user_id") == col("id"), as_of=col("o_proctime")
            )
            .select(col("order_id"), col("name"))
        )
        with pytest.raises(Exception) as failure:
            result = query.execute()
            if isinstance(result, StreamingTableResult):
                result.process_all_available()
            result.collect()
        error, text = failure.value, str(failure.value)
        assert isinstance(error, DatabaseError) and not isinstance(error, ServerError), text
        assert "is gone" not in text and "start the server again" not in text, text
        assert "Lookup table 'DownUsers'" in text, text
        assert f"PostgreSQL database 'postgres' at {address}" in text, text
        assert "unreachable" in text and "2 attempts failed" in text, text
        assert "Connection refused" in text and "check that the database is up" in text
        assert "Traceback" not in text and "\tat org.apache" not in text  # the cause, not noise
        assert PASSWORD not in text
        for running in env.spark.streams.active:
            running.stop()
        # the server answers the next query, on the same session
        follow = env.from_path("Orders").select(col("order_id")).execute()
        if isinstance(follow, StreamingTableResult):
            follow.process_all_available()
        assert sorted(r[0] for r in follow.collect()) == [1, 2]
        follow.cancel()
    finally:
        env.close()
