"""``python -m simplexsg``: the command line (``simplexsg.cli``)."""
from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
