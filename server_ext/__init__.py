"""Server side of the product: runs inside a Spark Connect server.

It holds the server launcher (``python -m server_ext serve``) and, as the product grows,
the stateful join operators and lookup sources that the client references by import.
"""

__version__ = "0.1.0"

#: Spark conf the server sets to its ``server_ext`` version; the client checks it on connect.
VERSION_CONF = "spark.tableapi.serverExt.version"
