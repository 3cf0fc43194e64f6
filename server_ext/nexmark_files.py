"""Nexmark's events as CSV files: ``python -m server_ext.nexmark_files --events N --out DIR``.

Runs the plugin jar's ``tableapi.serverext.nexmark.NexmarkFiles`` (a port of Nexmark's
generator, deterministic: the same options give the same files on any machine), building the
jar first when this is a source checkout and it is missing or stale. It writes ``DIR/person/``,
``DIR/auction/`` and ``DIR/bid/``: CSV without a header, the columns of Nexmark's views
(``person``: id, name, emailAddress, creditCard, city, state, dateTime, extra; ``auction``: id,
itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra;
``bid``: auction, bidder, price, channel, url, dateTime, extra), timestamps ``yyyy-MM-dd
HH:mm:ss.SSS`` in UTC, an empty string as ``""``. Read them with ``'format' = 'csv',
'csv.null-literal' = '\\N'``: then Flink and the product both read ``""`` as an empty string
(without a null literal the product's reader, Spark's, reads it as NULL). These are the rows
a ``'connector' = 'nexmark'`` table of the same options holds. Any other Nexmark option goes
through by its name (``--first-event.rate 1000`` or ``--first-event-rate 1000``). Standard
library only (the conformance suite calls it).

Example::

    from server_ext.nexmark_files import write_events
    write_events("/tmp/nexmark", 10_000, {"first-event.rate": "1000"})
    # /tmp/nexmark/bid/part-0.csv: 9200 lines; /tmp/nexmark/person/part-0.csv: 200 lines
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from server_ext.jvm.build import JDK_FIX, JarUnavailable, ensure_jar

MAIN_CLASS = "tableapi.serverext.nexmark.NexmarkFiles"


def find_java() -> str:
    """``java`` from JAVA_HOME, else from PATH; raises :class:`JarUnavailable` naming the fix.

    >>> Path(find_java()).name
    'java'
    """
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise JarUnavailable(f"no java to run the Nexmark generator: {JDK_FIX}")
    return java


def command(
    out: str | os.PathLike[str],
    events: int,
    options: Mapping[str, str] | None = None,
    parts: int = 1,
) -> list[str]:
    """The ``java`` command that writes the files (the jar built first if needed).

    >>> command("/tmp/nx", 100, {"first-event.rate": "10"})[-6:]
    ['--out', '/tmp/nx', '--parts', '1', '--first-event.rate', '10']
    """
    cmd = [find_java(), "-cp", str(ensure_jar()), MAIN_CLASS, "--events", str(events)]
    cmd += ["--out", str(out), "--parts", str(parts)]
    for key, value in (options or {}).items():
        cmd += [f"--{key}", str(value)]
    return cmd


def write_events(
    out: str | os.PathLike[str],
    events: int,
    options: Mapping[str, str] | None = None,
    parts: int = 1,
) -> str:
    """Write the first ``events`` Nexmark events of ``options`` (Flink's Nexmark option names)
    under ``out``, ``parts`` files per kind; returns the generator's summary line. Raises
    RuntimeError with the generator's message when it refuses an option.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     write_events(d, 100).split(" to ")[0]
    'wrote 100 events (2 person, 6 auction, 92 bid)'
    """
    result = subprocess.run(
        command(out, events, options, parts), capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip() or f"NexmarkFiles exited {result.returncode}")
    return result.stdout.strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, required=True, help="the number of events")
    parser.add_argument("--out", type=Path, required=True, help="the directory to write")
    parser.add_argument("--parts", type=int, default=1, help="files per kind (default 1)")
    args, rest = parser.parse_known_args(argv)
    if len(rest) % 2 or any(not flag.startswith("--") for flag in rest[::2]):
        parser.error(f"Nexmark options go as '--name value' pairs, got {rest}")
    options = {flag[2:]: value for flag, value in zip(rest[::2], rest[1::2], strict=True)}
    try:
        print(write_events(args.out, args.events, options, args.parts))
    except (JarUnavailable, RuntimeError) as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
