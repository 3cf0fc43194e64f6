"""``python -m tableapi [sc://host:port]``: run the demo (see :mod:`tableapi.demo`)."""

from tableapi.demo import cli

if __name__ == "__main__":
    cli()
