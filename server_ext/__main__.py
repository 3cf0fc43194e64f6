"""Command line: ``python -m server_ext serve [--host] [--port] [--master] [--token]``."""

from __future__ import annotations

import argparse
import os

from server_ext.launcher import serve


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
        help="require this bearer token from clients",
    )
    run.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra Spark conf, repeatable",
    )
    args = parser.parse_args(argv)
    extra = dict(item.split("=", 1) for item in args.conf)
    serve(host=args.host, port=args.port, master=args.master, token=args.token, extra=extra)


if __name__ == "__main__":
    main()
