"""Command line: ``python -m server_ext serve [--host] [--port] [--master] [--token]``, and the
standalone cluster's roles: ``python -m server_ext master`` and ``python -m server_ext worker
spark://host:7077`` (server_ext/cluster.py)."""

from __future__ import annotations

import argparse
import os
import socket
import sys

from server_ext import cluster
from server_ext.launcher import serve
from server_ext.security import open_server_problem


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m server_ext")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="start a Spark Connect server with server_ext")
    run.add_argument(
        "--host",
        default=os.environ.get("TABLEAPI_HOST", "127.0.0.1"),
        help="address to bind (0.0.0.0 inside a container)",
    )
    run.add_argument("--port", type=int, default=int(os.environ.get("TABLEAPI_PORT", "15002")))
    run.add_argument("--master", default=os.environ.get("TABLEAPI_MASTER", "local[*]"))
    run.add_argument(
        "--token",
        default=os.environ.get("TABLEAPI_TOKEN"),
        help="require this bearer token from clients (compared in constant time; never logged)",
    )
    run.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        default=os.environ.get("TABLEAPI_ALLOW_UNAUTHENTICATED", "").lower() in ("1", "true"),
        help="listen on a non-loopback address without a token (a trusted network only)",
    )
    run.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Spark conf, repeatable",
    )
    master = commands.add_parser("master", help="run a Spark standalone master")
    master.add_argument("--host", default=socket.gethostname(), help="name workers reach it at")
    master.add_argument("--port", type=int, default=cluster.MASTER_PORT)
    master.add_argument("--webui-port", type=int, default=8080)
    worker = commands.add_parser("worker", help="run a Spark standalone worker")
    worker.add_argument("master_url", metavar="spark://host:port")
    worker.add_argument("--cores", type=int, help="cores for executors (default: all)")
    worker.add_argument("--memory", help="memory for executors, e.g. 2g (default: Spark's)")
    worker.add_argument("--work-dir", help="executors' files and logs (default: a temp dir)")
    args = parser.parse_args(argv)
    if args.command == "master":
        cluster.run(cluster.master_command(args.host, args.port, args.webui_port))
    if args.command == "worker":
        try:
            command = cluster.worker_command(
                args.master_url, args.cores, args.memory, args.work_dir
            )
        except ValueError as e:
            parser.error(str(e))
        cluster.run(command)
    problem = open_server_problem(args.host, args.token, args.allow_unauthenticated)
    if problem:
        print(f"python -m server_ext serve: {problem}", file=sys.stderr)
        raise SystemExit(2)
    extra = dict(item.split("=", 1) for item in args.conf)
    serve(host=args.host, port=args.port, master=args.master, token=args.token, extra=extra)


if __name__ == "__main__":
    main()
