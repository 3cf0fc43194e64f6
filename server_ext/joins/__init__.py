"""Flink-style join operators that run inside Spark as transformWithState processors."""
