"""Server side of the product: runs inside a Spark Connect server.

It holds the server launcher (``python -m server_ext serve``), the stateful operators (Java,
``jvm/``) with their wire contracts (``operators.py``, ``joins/``, ``aggregate_spec.py``), the
lookup join and sinks the server's Python workers run (``lookup/``, ``sink/``), and the
confs both sides agree on (``conf``).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    #: The package's version (from its metadata: pyproject.toml is the one place it is set).
    __version__ = version("flink-tableapi-spark")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
