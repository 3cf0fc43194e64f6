"""No open server by accident: a Spark Connect client can run any Python on the server, so
a server that listens beyond this machine needs a token, unless its operator says otherwise.

Spark compares the token in constant time (``PreSharedKeyAuthenticationInterceptor`` uses
``MessageDigest.isEqual``) and redacts confs named like ``*token*`` from its logs; the
launcher never prints it.
"""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """Is ``host`` reachable from this machine only?

    >>> [is_loopback(h) for h in ("localhost", "127.0.0.1", "127.8.0.1", "::1", "0.0.0.0")]
    [True, True, True, True, False]
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def open_server_problem(host: str, token: str | None, allow_unauthenticated: bool) -> str | None:
    """Why serving on ``host`` as asked would leave the server open to anyone; None if not.

    >>> open_server_problem("127.0.0.1", None, False) is None
    True
    >>> print(open_server_problem("0.0.0.0", None, False))  # doctest: +ELLIPSIS
    Refusing to listen on 0.0.0.0 without a token: ...
    """
    if token or allow_unauthenticated or is_loopback(host):
        return None
    return (
        f"Refusing to listen on {host} without a token: any client that reaches this port "
        "could run Python code on this machine. Either give a token (--token SECRET, or the "
        "environment variable TABLEAPI_TOKEN; clients then connect to "
        "sc://<host>:<port>/;token=SECRET), or, on a network you trust, pass "
        "--allow-unauthenticated (TABLEAPI_ALLOW_UNAUTHENTICATED=true)."
    )
