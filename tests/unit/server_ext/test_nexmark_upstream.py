"""The port of Nexmark's generator against Nexmark's own, event for event (opt-in).

Set ``NEXMARK_REPO`` to a clone of https://github.com/nexmark/nexmark (a bare one will do):
Nexmark's generator sources are taken from its HEAD, the randoms the port seeds are seeded the
same way in them (an event's random from its id, the extra string's and the URLs' from fixed
seeds: Nexmark leaves them unseeded, so no two of its runs agree), the few Flink classes they
import are stubbed, and ``UpstreamEvents.java`` writes their events in the port's CSV format.
The port's files (``server_ext.nexmark_files``) must be the same bytes. Skipped without
``NEXMARK_REPO``; needs a JDK.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from server_ext.jvm.build import MAIN_SOURCES, find_javac
from server_ext.nexmark_files import find_java, write_events

REPO = os.environ.get("NEXMARK_REPO")
pytestmark = pytest.mark.skipif(
    not REPO or find_javac() is None, reason="set NEXMARK_REPO to a nexmark clone (and a JDK)"
)
UPSTREAM = "nexmark-flink/src/main/java/com/github/nexmark/flink/"
FILES = [
    *(f"generator/{n}.java" for n in ("GeneratorConfig", "NexmarkGenerator")),
    *(f"model/{n}.java" for n in ("Event", "Person", "Auction", "Bid")),
    *(
        f"generator/model/{n}Generator.java"
        for n in ("Person", "Auction", "Bid", "Price", "Long", "Strings")
    ),
]
PORT = MAIN_SOURCES / "tableapi" / "serverext" / "nexmark"
STUBS = {
    "javax/annotation/Nullable.java": "package javax.annotation;\npublic @interface Nullable {}",
    "org/apache/flink/util/Preconditions.java": (
        "package org.apache.flink.util;\n"
        "public class Preconditions { public static <T> T checkNotNull(T t) { return t; } }"
    ),
    "com/github/nexmark/flink/utils/NexmarkUtils.java": (
        "package com.github.nexmark.flink.utils;\npublic class NexmarkUtils {\n"
        "  public enum RateShape { SQUARE, SINE; public int stepLengthSec(int p) { return p; } }\n"
        "  public enum RateUnit { PER_SECOND }\n}"
    ),
}


def port_constant(path: str, name: str) -> str:
    """A seed of the port (``static final long NAME = 0x...L``), so both sides use it."""
    found = re.search(rf"{name} = (0x[0-9A-Fa-f]+L)", (PORT / path).read_text())
    assert found, f"{name} not found in {path}"
    return found.group(1)


def upstream(path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), "show", f"HEAD:{UPSTREAM}{path}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


def configuration() -> str:
    """NexmarkConfiguration's fields and defaults, without its Jackson and Flink imports."""
    text = upstream("NexmarkConfiguration.java")
    fields = re.findall(r"@JsonProperty\s+(public\s+[\w.]+\s+\w+\s*=\s*[^;]+;)", text)
    assert len(fields) > 20
    return (
        "package com.github.nexmark.flink;\nimport com.github.nexmark.flink.utils.NexmarkUtils;\n"
        "public class NexmarkConfiguration implements java.io.Serializable {\n  "
        + "\n  ".join(fields)
        + "\n}"
    )


def seeded(path: str, text: str) -> str:
    """The port's seeds in Nexmark's sources (each replacement must apply once)."""
    fmix = (
        "static java.util.SplittableRandom seeded(long id) { long h = id ^ "
        + port_constant("NexmarkGenerator.java", "SEED")
        + "; h ^= h >>> 33; h *= 0xff51afd7ed558ccdL; h ^= h >>> 33; h *= 0xc4ceb9fe1a85ec53L;"
        " h ^= h >>> 33; return new java.util.SplittableRandom(h); }\n"
    )
    edits = {
        "generator/NexmarkGenerator.java": [
            ("long rem = newEventId % config.totalProportion;",
             "long rem = newEventId % config.totalProportion;\n"
             "    SplittableRandom random = seeded(newEventId);"),
            ("  @Override\n  public NexmarkGenerator.NextEvent next()",
             fmix + "  @Override\n  public NexmarkGenerator.NextEvent next()"),
        ],
        "generator/model/StringsGenerator.java": [
            ("nextExactString(new SplittableRandom(), 1024 * 1024)",
             "nextExactString(new SplittableRandom("
             + port_constant("model/StringsGenerator.java", "EXTRA_STRING_SEED")
             + "), 1024 * 1024)"),
        ],
        "generator/model/BidGenerator.java": [
            ("random = new SplittableRandom();",
             "random = new SplittableRandom("
             + port_constant("model/BidGenerator.java", "URL_SEED") + ");"),
        ],
    }  # fmt: skip
    for old, new in edits.get(path, []):
        assert text.count(old) == 1, f"Nexmark's {path} changed: {old!r} not found once"
        text = text.replace(old, new)
    return text


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("upstream-src")
    sources = {f"com/github/nexmark/flink/{p}": seeded(p, upstream(p)) for p in FILES}
    sources |= STUBS | {"com/github/nexmark/flink/NexmarkConfiguration.java": configuration()}
    for path, text in sources.items():
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_text(text)
    (src / "UpstreamEvents.java").write_text(
        (Path(__file__).parent / "nexmark_upstream" / "UpstreamEvents.java").read_text()
    )
    out = tmp_path_factory.mktemp("upstream-classes")
    javac = find_javac()
    assert javac is not None
    files = [str(p) for p in src.rglob("*.java")]
    subprocess.run([javac, "-nowarn", "-d", str(out), *files], check=True, capture_output=True)
    return out


@pytest.mark.parametrize(
    ("events", "rate", "proportions", "sizes"),
    [(60_000, 10_000, (1, 3, 46), (200, 500, 100)), (30_000, 1000, (2, 5, 13), (50, 300, 20))],
)
def test_the_port_writes_nexmarks_events(
    classes: Path,
    tmp_path: Path,
    events: int,
    rate: int,
    proportions: tuple[int, int, int],
    sizes: tuple[int, int, int],
) -> None:
    lines = tmp_path / "upstream.txt"
    args = [str(events), str(lines), str(rate), *map(str, proportions), *map(str, sizes)]
    subprocess.run([find_java(), "-cp", str(classes), "UpstreamEvents", *args], check=True)
    kinds = ("person", "auction", "bid")
    options = {"first-event.rate": str(rate)}
    options |= {f"{k}.proportion": str(p) for k, p in zip(kinds, proportions, strict=True)}
    options |= {f"{k}.avg-size": f"{s}b" for k, s in zip(kinds, sizes, strict=True)}
    write_events(tmp_path / "port", events, options)
    theirs: dict[str, list[str]] = {k: [] for k in kinds}
    for line in lines.read_text().splitlines():
        kind, csv_line = line.split("|", 1)
        theirs[kind].append(csv_line)
    for kind in kinds:
        ours = (tmp_path / "port" / kind / "part-0.csv").read_text().splitlines()
        assert ours == theirs[kind], kind
