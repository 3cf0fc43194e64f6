"""setuptools hook: every wheel carries server_ext's JVM operator jar.

``build_py`` compiles ``server_ext/jvm/src/main/java`` with ``javac`` against pyspark's jars
(``server_ext/jvm/build.py`` says where it finds them) into ``server_ext/jvm/`` of the build.
Without a JDK the wheel is built without the jar and a warning says so (such a server runs
the Python operators); ``TABLEAPI_REQUIRE_JAR=1`` makes that an error (``docker/build.sh``).
Editable installs skip this: their server builds the jar on first start.
Everything else is in pyproject.toml.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _jvm_build():  # type: ignore[no-untyped-def]
    """server_ext/jvm/build.py, loaded by path (the package's dependencies may be absent)."""
    spec = importlib.util.spec_from_file_location(
        "_tableapi_jvm_build", HERE / "server_ext" / "jvm" / "build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildPyWithJar(build_py):
    """``build_py`` plus the operator jar."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        jvm = _jvm_build()
        out = Path(self.build_lib) / "server_ext" / "jvm" / jvm.JAR_NAME
        out.unlink(missing_ok=True)  # never ship a jar left by an earlier build
        try:
            jvm.build_jar(out)
            self.announce(f"built {out}", level=2)
        except jvm.JarUnavailable as e:
            if os.environ.get("TABLEAPI_REQUIRE_JAR") == "1":
                raise SystemExit(f"TABLEAPI_REQUIRE_JAR=1: {e}") from None
            self.warn(f"this wheel has NO server_ext JVM operator jar: {e}")

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs = list(super().get_outputs(include_bytecode))
        jar = Path(self.build_lib) / "server_ext" / "jvm" / "tableapi-server-ext.jar"
        if jar.is_file():
            outputs.append(str(jar))
        return outputs


setup(cmdclass={"build_py": BuildPyWithJar})
