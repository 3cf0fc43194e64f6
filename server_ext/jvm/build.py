"""Build the server_ext JVM operator jar with ``javac`` against the jars inside pyspark.

No Maven: the only compile classpath is ``pyspark/jars`` (the pinned Spark). Three callers:

- ``setup.py`` (``build_py``) builds the jar into every wheel; a wheel built without a JDK
  has no jar (a warning says so; ``TABLEAPI_REQUIRE_JAR=1`` makes it an error, as
  ``docker/build.sh`` sets it).
- The server launcher calls :func:`ensure_jar` on start: in a source checkout (editable
  install) it builds the jar next to this file when the Java sources changed, else it uses
  the jar the wheel brought.
- By hand: ``python server_ext/jvm/build.py [--out PATH] [--tests DIR]``.

This module must import nothing from the package (setup.py loads it by path, before the
package's dependencies are installed).

Example::

    from server_ext.jvm.build import ensure_jar
    jar = ensure_jar()  # Path to tableapi-server-ext.jar, built first if needed
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
JAR_NAME = "tableapi-server-ext.jar"
JAR = HERE / JAR_NAME
MAIN_SOURCES = HERE / "src" / "main" / "java"
TEST_SOURCES = HERE / "src" / "test" / "java"
STAMP = "META-INF/tableapi-server-ext.sources"  # digest of the sources the jar was built from
JDK_FIX = "install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME"
# A fixed time in the jar's entries: the same sources give the same bytes.
_EPOCH = (2020, 1, 1, 0, 0, 0)


class JarUnavailable(RuntimeError):
    """The jar is not there and cannot be built here; the message names the fix."""


def find_javac() -> str | None:
    """``javac`` from JAVA_HOME, else from PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "javac").is_file():
        return str(Path(home) / "bin" / "javac")
    return shutil.which("javac")


def find_spark_jars() -> Path | None:
    """The directory of Spark's jars to compile against: ``TABLEAPI_SPARK_JARS``, the pyspark
    this interpreter can import, the pyspark in this environment's site-packages (pip's build
    isolation hides it from imports), or ``SPARK_HOME/jars``."""
    candidates: list[Path] = []
    if os.environ.get("TABLEAPI_SPARK_JARS"):
        candidates.append(Path(os.environ["TABLEAPI_SPARK_JARS"]))
    with contextlib.suppress(ImportError, ValueError):
        found = importlib.util.find_spec("pyspark")
        if found is not None and found.origin:
            candidates.append(Path(found.origin).parent / "jars")
    for scheme_path in ("purelib", "platlib"):
        candidates.append(Path(sysconfig.get_paths()[scheme_path]) / "pyspark" / "jars")
    if os.environ.get("SPARK_HOME"):
        candidates.append(Path(os.environ["SPARK_HOME"]) / "jars")
    for path in candidates:
        if path.is_dir() and any(path.glob("spark-connect_*.jar")):
            return path
    return None


def sources_digest(spark_jars: Path | None) -> str | None:
    """A digest of the Java sources and the Spark they compile against; None without sources
    (an installed wheel ships the jar only)."""
    if not MAIN_SOURCES.is_dir():
        return None
    h = hashlib.sha256()
    for path in sorted(MAIN_SOURCES.rglob("*.java")):
        h.update(str(path.relative_to(MAIN_SOURCES)).encode() + b"\0" + path.read_bytes())
    if spark_jars is not None:
        h.update(b"".join(sorted(p.name.encode() for p in spark_jars.glob("spark-core_*.jar"))))
    return h.hexdigest()


def jar_stamp(jar: Path) -> str | None:
    try:
        with zipfile.ZipFile(jar) as z:
            return z.read(STAMP).decode()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def _javac(sources: Path, classpath: str, out: Path, release: str = "17") -> None:
    javac = find_javac()
    if javac is None:
        raise JarUnavailable(f"no javac to compile the Java sources in {sources}: {JDK_FIX}")
    files = sorted(str(p) for p in sources.rglob("*.java"))
    cmd = [javac, "--release", release, "-nowarn", "-encoding", "UTF-8", "-cp", classpath]
    result = subprocess.run(
        [*cmd, "-d", str(out), *files], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"javac failed on {sources}:\n{result.stdout}{result.stderr}")


def _spark_jars_or_fail() -> Path:
    jars = find_spark_jars()
    if jars is None:
        raise JarUnavailable(
            "no pyspark jars to compile the server_ext JVM operators against: "
            "install pyspark first or set TABLEAPI_SPARK_JARS to a Spark jars directory"
        )
    return jars


def build_jar(out: Path = JAR, spark_jars: Path | None = None) -> Path:
    """Compile the main sources into ``out`` (written atomically)."""
    spark_jars = spark_jars or _spark_jars_or_fail()
    stamp = {STAMP: (sources_digest(spark_jars) or "").encode()}
    return compile_jar(MAIN_SOURCES, str(spark_jars / "*"), out, entries=stamp)


def compile_jar(
    sources: Path,
    classpath: str,
    out: Path,
    release: str = "17",
    entries: Mapping[str, bytes] | None = None,
) -> Path:
    """Compile every ``.java`` under ``sources`` against ``classpath`` into the jar ``out``,
    with ``entries`` (name -> bytes: resources, a stamp) beside the classes. Written
    atomically; the same sources give the same bytes. Also used by the conformance suite for
    its Flink lookup source (tests/conformance/flink_env.py)."""
    with tempfile.TemporaryDirectory(prefix="tableapi-jvm-") as tmp:
        classes = Path(tmp) / "classes"
        classes.mkdir()
        _javac(sources, classpath, classes, release)
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(out.name + f".{os.getpid()}.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            _add(z, "META-INF/MANIFEST.MF", b"Manifest-Version: 1.0\r\n\r\n")
            for name, data in (entries or {}).items():
                _add(z, name, data)
            for path in sorted(classes.rglob("*.class")):
                _add(z, str(path.relative_to(classes)), path.read_bytes())
        os.replace(partial, out)
    return out


def _add(z: zipfile.ZipFile, name: str, data: bytes) -> None:
    z.writestr(zipfile.ZipInfo(name, date_time=_EPOCH), data)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder at a time (servers of two test runs may start together)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_jar() -> Path:
    """The jar to put on the server: built (or rebuilt after a source change) when this is a
    source checkout, else the one the wheel installed. Raises :class:`JarUnavailable` naming
    the fix when there is none and none can be built."""
    if not MAIN_SOURCES.is_dir():
        if JAR.is_file():
            return JAR
        raise JarUnavailable(
            f"this installation has no {JAR_NAME} (its wheel was built without a JDK): "
            f"reinstall flink-tableapi-spark from a wheel built with one, or {JDK_FIX} "
            "and reinstall"
        )
    spark_jars = find_spark_jars()
    digest = sources_digest(spark_jars)
    if JAR.is_file() and jar_stamp(JAR) == digest:
        return JAR
    with _locked(HERE / f".{JAR_NAME}.lock"):
        if JAR.is_file() and jar_stamp(JAR) == digest:  # built meanwhile
            return JAR
        if find_javac() is None:
            raise JarUnavailable(
                f"{JAR_NAME} is {'out of date' if JAR.is_file() else 'not built'} and there "
                f"is no javac to build it: {JDK_FIX}"
            )
        return build_jar(JAR, spark_jars or _spark_jars_or_fail())


def build_tests(out_dir: Path, jar: Path | None = None) -> Path:
    """Compile the test-only sources (the in-memory harness) into ``out_dir``."""
    jar = jar or ensure_jar()
    spark_jars = _spark_jars_or_fail()
    out_dir.mkdir(parents=True, exist_ok=True)
    _javac(TEST_SOURCES, os.pathsep.join([str(jar), str(spark_jars / "*")]), out_dir)
    return out_dir


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=JAR, help=f"the jar (default {JAR})")
    parser.add_argument("--tests", type=Path, help="also compile the test harness into DIR")
    args = parser.parse_args(argv)
    try:
        jar = build_jar(args.out)
        print(jar)
        if args.tests:
            print(build_tests(args.tests, jar))
    except JarUnavailable as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
