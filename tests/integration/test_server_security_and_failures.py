"""No open server by accident, and a client that fails fast (and exits) when its server dies.

- ``serve`` refuses a non-loopback address without a token, naming both ways out.
- A server with a token refuses a client without it, or with a wrong one, with a clear
  error; with it, queries run. The test server in a container always runs with a token.
- A running query whose server is killed fails (not after the client's ten minutes of
  retries) with an error that names the server and how to resume; the Python process then
  exits (it does not hang).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tableapi import ServerError, TableEnvironment
from tableapi.session import EmbeddedServer, redacted
from tests.servers import TestServer


def test_serve_refuses_an_open_address_without_a_token() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLEAPI_")}
    done = subprocess.run(
        [sys.executable, "-m", "server_ext", "serve", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Refusing to listen on 0.0.0.0 without a token" in done.stderr
    assert "--token" in done.stderr and "--allow-unauthenticated" in done.stderr
    assert done.stdout == ""  # refused before Spark starts (its launcher prints the heap)


def test_a_server_with_a_token_refuses_clients_without_it(
    token_server: tuple[EmbeddedServer, str],
) -> None:
    server, token = token_server
    base = f"sc://localhost:{server.port}"
    with pytest.raises(ServerError, match="requires a token, and none was given"):
        TableEnvironment.create(remote=base).spark  # noqa: B018
    wrong = f"{base}/;token={'0' * 32}"
    with pytest.raises(ServerError, match="refused the token") as refused:
        TableEnvironment.create(remote=wrong).spark  # noqa: B018
    assert "0" * 32 not in str(refused.value)  # the token is never shown
    env = TableEnvironment.create(remote=f"{base}/;token={token}")
    assert env.from_elements([(1, "a")], ["id", "s"]).execute().collect() == [(1, "a")]
    env.close()
    assert token not in redacted(server.url)


def test_the_container_runs_with_a_token(test_server: TestServer) -> None:
    if test_server.kind != "docker":
        pytest.skip("the local launcher serves on loopback; the container path needs Docker")
    assert ";token=" in test_server.url
    without = test_server.url.split("/;", 1)[0]
    with pytest.raises(ServerError, match="requires a token"):
        TableEnvironment.create(remote=without).spark  # noqa: B018


KILLED_SERVER = textwrap.dedent("""
    import os, signal, sys, tempfile
    from tableapi import Schema, ServerError, TableDescriptor, TableEnvironment
    from tableapi.session import EmbeddedServer
    server = EmbeddedServer.start(master="local[1]")
    env = TableEnvironment.create(mode="streaming", remote=server.url)
    env.config.set("execution.checkpointing.dir", sys.argv[1]).set("pipeline.name", "job")
    data = os.path.join(sys.argv[1], "a")
    os.makedirs(data)
    with open(os.path.join(data, "p.json"), "w") as f:
        f.write('{"k": 1}\\n')
    env.create_temporary_table("A", TableDescriptor.for_connector("filesystem")
        .schema(Schema.new_builder().column("k", "BIGINT").build())
        .option("path", data).option("format", "json")
        .option("source.monitor-interval", "200 ms").build())
    result = env.from_path("A").execute()
    result.process_all_available()
    assert [tuple(r) for r in result.collect()] == [(1,)]
    os.killpg(server.process.pid, signal.SIGKILL)
    server.process.wait()
    for call in ("process_all_available", "collect", "materialize"):
        try:
            getattr(result, call)()
            print(call, "NO ERROR")
        except ServerError as e:
            print(call, str(e).replace("\\n", " "))
    print("exiting", flush=True)
""")


def test_a_killed_server_fails_the_query_fast_and_the_process_exits(tmp_path) -> None:
    """Each call fails with the error, and the process then exits. Its whole run (a server
    start included) has five minutes: half of one call's retries (the client's ten minutes)."""
    os.chmod(tmp_path, 0o777)
    try:
        done = subprocess.run(
            [sys.executable, "-c", KILLED_SERVER, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired as hung:
        pytest.fail(f"a call or the exit hung; the process printed:\n{hung.stdout!r}")
    lines = [line for line in done.stdout.splitlines() if line]
    assert done.returncode == 0, done.stderr[-2000:]
    assert lines[-1] == "exiting"
    calls = {line.split()[0]: line for line in lines[:-1]}
    for call in ("process_all_available", "collect", "materialize"):
        line = calls[call]
        assert "is gone" in line and "sc://localhost:" in line
        assert "execution.checkpointing.dir=" in line and "pipeline.name=job" in line
        assert "resumes from its last checkpoint" in line
