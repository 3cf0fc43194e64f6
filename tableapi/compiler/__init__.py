"""Optimized plan -> Spark Connect DataFrame: ``batch.py`` (Spark's own operators),
``streaming.py`` (changelogs, native stream-stream joins and server_ext's operators),
sharing ``base.py``; ``operators.py`` builds what server_ext's operators receive."""

from tableapi.compiler.batch import BatchCompiler, compile_plan
from tableapi.compiler.streaming import CompiledStream, StreamingCompiler, compile_stream

__all__ = ["BatchCompiler", "CompiledStream", "StreamingCompiler", "compile_plan", "compile_stream"]
