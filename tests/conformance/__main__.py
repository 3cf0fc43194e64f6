"""``python -m tests.conformance``: random cases on Apache Flink 2.3 and on this product.

    python -m tests.conformance --cases 100 --seed 1              # every family, in turn
    python -m tests.conformance --cases 20 --seed 7 --family interval
    python -m tests.conformance --cases 100 --seed 801 --via sql  # the product takes SQL text
    python -m tests.conformance --case tests/conformance/failures/1-12.json   # one case again
    python -m tests.conformance --cases 50 --remote sc://localhost:15002 --data-dir /shared

Without ``--remote`` an embedded server (``python -m server_ext serve``) is started and
stopped; its sorts spill at every row (``SPILL_CONF``; ``--no-spill``: they do not). With a
server in a container, ``--data-dir`` must be a directory it sees at the same path. Exits 1
when a case differs or fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.conformance.generator import FAMILIES, RESERVED, generate_many
from tests.conformance.suite import load_case, run_cases, summary

#: The embedded server's sorts spill at every row: a sort that spills merges equal keys in any
#: order, so whatever order the product needs has to be carried in the rows (``__seq``), not
#: left to Spark (README: difference 19, seen only on such a server with these tiny inputs).
SPILL_CONF = {"spark.shuffle.spill.numElementsForceSpillThreshold": "1"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.conformance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cases", type=int, default=20, help="how many random cases")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--family",
        action="append",
        choices=sorted([*FAMILIES, *RESERVED]),
        help="only this family (repeatable); default: all",
    )
    parser.add_argument(
        "--case",
        action="append",
        type=Path,
        default=[],
        help="run this saved case file instead (repeatable)",
    )
    parser.add_argument("--remote", help="a Spark Connect URL (default: an embedded server)")
    parser.add_argument("--data-dir", type=Path, help="where case files go (server-visible)")
    parser.add_argument("--no-save", action="store_true", help="do not write failures/")
    parser.add_argument(
        "--no-spill",
        action="store_true",
        help="the embedded server's sorts do not spill at every row (see SPILL_CONF)",
    )
    parser.add_argument(
        "--via",
        choices=("table", "sql"),
        default="table",
        help="the product runs each query as a Table API program (default) or as Flink's "
        "SQL text, the same string Flink runs",
    )
    args = parser.parse_args(argv)

    if args.case:
        cases = [load_case(p) for p in args.case]
    else:
        cases = generate_many(args.cases, args.seed, args.family)
    if args.via == "sql":
        cases = [{**c, "via": "sql"} for c in cases]
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="conformance-data-"))
    data_dir.mkdir(parents=True, exist_ok=True)
    server = None
    remote = args.remote
    if remote is None:
        from tableapi.session import EmbeddedServer

        print("[product] starting an embedded Spark Connect server", flush=True)
        conf = {} if args.no_spill else SPILL_CONF
        server = EmbeddedServer.start(master="local[2]", conf=conf)
        remote = server.url
    try:
        outcomes = run_cases(
            cases, remote, data_dir, save=not args.no_save, log=lambda s: print(s, flush=True)
        )
    finally:
        if server is not None:
            server.stop()
    print()
    print(summary(outcomes))
    return 0 if all(c.same for _, c, _, _ in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
