"""Apache Flink's own virtualenv for the conformance suite (`.flink-venv/` at the repo root).

PyFlink and pyspark cannot share one virtualenv (they pin different py4j/pyarrow/pandas), so
the suite runs Flink in a virtualenv of its own, created here on first use and reused after.

Example:
    >>> from tests.conformance.flink_env import ensure_flink_venv
    >>> python = ensure_flink_venv()  # doctest: +SKIP
    >>> python.name  # doctest: +SKIP
    'python'
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

FLINK_VERSION = "2.3.0"
REPO_ROOT = Path(__file__).resolve().parents[2]
VENV_DIR = Path(os.environ.get("TABLEAPI_FLINK_VENV", REPO_ROOT / ".flink-venv"))
# Written last, after PyFlink imports: a venv without it is a half-done install and is redone.
_MARKER = f"apache-flink-{FLINK_VERSION}.ok"


def venv_python(venv: Path = VENV_DIR) -> Path:
    """The interpreter of the Flink virtualenv (it may not exist yet).

    Example:
        >>> venv_python(Path("/tmp/v")).as_posix()
        '/tmp/v/bin/python'
    """
    return venv / "bin" / "python"


def is_ready(venv: Path = VENV_DIR) -> bool:
    """True when PyFlink FLINK_VERSION is installed in `venv` (by a finished `ensure_flink_venv`).

    Example:
        >>> is_ready(Path("/nonexistent"))
        False
    """
    return (venv / _MARKER).exists() and venv_python(venv).exists()


def _log(message: str) -> None:
    print(f"[flink-env] {message}", file=sys.stderr, flush=True)


def _java_ok() -> str | None:
    """None when a Java 11+ runtime is on PATH (PyFlink 2.x needs 11 or 17), else why not."""
    java = shutil.which("java")
    if java is None and os.environ.get("JAVA_HOME"):
        java = str(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    if java is None or not Path(java).exists():
        return "no `java` on PATH (PyFlink runs a JVM): install a Java 17 runtime"
    return None


def ensure_flink_venv(venv: Path = VENV_DIR, python: str | None = None) -> Path:
    """Create `venv` with `pip install apache-flink==FLINK_VERSION` unless it is already there.

    Idempotent and safe to call from several processes at once (a file lock serializes them);
    prints progress to stderr. Returns the venv's interpreter.

    Example:
        >>> ensure_flink_venv()  # doctest: +SKIP
        PosixPath('/repo/.flink-venv/bin/python')
    """
    if is_ready(venv):
        return venv_python(venv)
    problem = _java_ok()
    if problem:
        raise RuntimeError(f"cannot set up Apache Flink for the conformance suite: {problem}")
    venv.parent.mkdir(parents=True, exist_ok=True)
    lock_path = venv.parent / f"{venv.name}.lock"  # beside it: the venv may be redone
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_ready(venv):
            return venv_python(venv)
        started = time.monotonic()
        base = python or _base_python()
        if venv.exists():
            _log(f"removing the unfinished {venv}")
            shutil.rmtree(venv)
        _log(f"creating {venv} with {base}")
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        pip = [str(venv_python(venv)), "-m", "pip", "--disable-pip-version-check"]
        _log(f"pip install apache-flink=={FLINK_VERSION} (about 300 MB; a few minutes)")
        subprocess.run([*pip, "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([*pip, "install", "-q", f"apache-flink=={FLINK_VERSION}"], check=True)
        check = "import pyflink.version as v; print(v.__version__)"
        version = subprocess.run(
            [str(venv_python(venv)), "-c", check], check=True, capture_output=True, text=True
        ).stdout.strip()
        if version != FLINK_VERSION:
            raise RuntimeError(f"{venv} has PyFlink {version}, expected {FLINK_VERSION}")
        (venv / _MARKER).write_text(f"{version}\n")
        _log(f"PyFlink {version} ready in {time.monotonic() - started:.0f} s ({_size(venv)})")
    return venv_python(venv)


def _base_python() -> str:
    """A Python outside any virtualenv when we run in one (a venv of a venv works too)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _size(path: Path) -> str:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return f"{total / 2**20:.0f} MiB"


# -- the lookup source for Flink (tests/conformance/flink_lookup) --------------------------------

LOOKUP_SOURCE_DIR = Path(__file__).resolve().parent / "flink_lookup"


def lookup_source_files(source: Path = LOOKUP_SOURCE_DIR) -> list[Path]:
    """The Java sources and resources (META-INF) of the conformance lookup connector.

    Example:
        >>> [p.name for p in lookup_source_files()]
        ['org.apache.flink.table.factories.Factory', 'FileLookupTableFactory.java']
    """
    return sorted(
        (p for p in source.rglob("*") if p.is_file() and not p.name.endswith(".class")),
        key=lambda p: p.relative_to(source).as_posix(),
    )


def lookup_source_hash(source: Path = LOOKUP_SOURCE_DIR) -> str:
    """A hash of the connector's sources: its jar's name, and part of the Flink answer cache
    key of the cases it reads (an edited source answers again).

    Example:
        >>> len(lookup_source_hash())
        16
    """
    digest = hashlib.sha256()
    for path in lookup_source_files(source):
        digest.update(path.relative_to(source).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def ensure_lookup_jar(
    flink_lib: Path, cache_dir: Path = VENV_DIR, source: Path = LOOKUP_SOURCE_DIR
) -> Path:
    """The jar of the conformance lookup connector (``'connector' = 'conformance-lookup'``),
    compiled against PyFlink's jars in `flink_lib` on first use (`ensure_flink_jar`).

    Example:
        >>> ensure_lookup_jar(Path(".flink-venv/lib/python3.11/site-packages/pyflink/lib"))
        ... # doctest: +SKIP
        PosixPath('/repo/.flink-venv/conformance-lookup-0123456789abcdef.jar')
    """
    return ensure_flink_jar(flink_lib, source, "conformance-lookup", cache_dir)


def ensure_flink_jar(flink_lib: Path, source: Path, name: str, cache_dir: Path = VENV_DIR) -> Path:
    """A jar of Java classes for Flink (the `.java` files and `META-INF/` resources under
    `source`), compiled with ``javac`` against PyFlink's jars in `flink_lib` on first use and
    kept in `cache_dir` as ``<name>-<sources' hash>.jar``. Idempotent and locked like
    `ensure_flink_venv`. Also used by ``bench/aggregate.py`` for its changelog CSV format.

    Example:
        >>> lib = Path(".flink-venv/lib/python3.11/site-packages/pyflink/lib")
        >>> ensure_flink_jar(lib, LOOKUP_SOURCE_DIR, "conformance-lookup")  # doctest: +SKIP
        PosixPath('/repo/.flink-venv/conformance-lookup-0123456789abcdef.jar')
    """
    # server_ext's jar builder is standard library only: it imports in Flink's virtualenv too
    from server_ext.jvm.build import compile_jar, find_javac

    jar = cache_dir / f"{name}-{lookup_source_hash(source)}.jar"
    if jar.exists():
        return jar
    if find_javac() is None:
        raise RuntimeError(
            f"{name} needs `javac` (a JDK 11+) to build its Flink classes from {source}: "
            "install one (e.g. apt-get install openjdk-17-jdk-headless) or put it on PATH / "
            "JAVA_HOME"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if jar.exists():
            return jar
        _log(f"compiling {source} into {jar.name}")
        resources = {
            path.relative_to(source).as_posix(): path.read_bytes()
            for path in lookup_source_files(source)
            if path.relative_to(source).as_posix().startswith("META-INF/")
        }
        compile_jar(source, f"{flink_lib}/*", jar, release="11", entries=resources)
    return jar


if __name__ == "__main__":
    print(ensure_flink_venv())
