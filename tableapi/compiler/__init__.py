"""Optimized plan -> Spark Connect DataFrame."""

from tableapi.compiler.spark import compile_plan

__all__ = ["compile_plan"]
