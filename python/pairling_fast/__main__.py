"""``python -m pairling_fast`` and the ``pairling-fast`` console script."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .cli import main as _cli_main

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    return _cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
