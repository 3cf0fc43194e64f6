"""Where an error came from: the client's own checks, or an error the server sent back."""

from __future__ import annotations

from pyspark.errors import PySparkException


def from_the_server(error: BaseException) -> bool:
    """Does ``error`` carry (as its cause or context, at any depth) an error of pyspark's:
    one the server sent back? The product translates those with ``raise .. from None``,
    which keeps the original as the context."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, PySparkException):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
