"""``pairling-fast diff OLD NEW``: what changed between two capability maps and whether it loosens
remote control (``map_diff.diff_maps``; docs/maps.md, "Diff").

Exit codes: 0; 1 when NEW has errors, or ``--fail-on loosening`` finds a loosening, or
``--fail-on change`` any change; 2 for usage and I/O errors (as ``check``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._atomic import write_atomically
from .map_diff import MapDiff, diff_maps
from .map_diff_output import DIFF_FORMATS, render_diff, summary_text

__all__ = ["FAIL_ON", "add_arguments", "exit_code", "run"]

FAIL_ON = ("loosening", "change", "none")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "old",
        metavar="OLD",
        help="the map before: a file, - (stdin), an fsspec URL, or REV:PATH read with git show "
        "(origin/main:maps/map.json)",
    )
    parser.add_argument("new", metavar="NEW", help="the map after: as OLD")
    parser.add_argument("--format", "-f", choices=DIFF_FORMATS, default="text")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="none",
        help="exit 1 on any loosening, or on any change (default none: only an invalid NEW fails)",
    )


def exit_code(diff: MapDiff, fail_on: str) -> int:
    if not diff.new.ok or not diff.diffed:
        return 1
    if fail_on == "loosening" and diff.loosenings:
        return 1
    if fail_on == "change" and (diff.changes or diff.review):
        return 1
    return 0


def run(args: Any) -> int:
    diff = diff_maps(args.old, args.new, max_document_bytes=args.max_document_bytes)
    report = render_diff(diff, args.format)
    if args.output is None:
        sys.stdout.write(report)
    else:
        write_atomically(args.output, report.encode("utf-8"))
        print(summary_text(diff), file=sys.stderr)
    return exit_code(diff, args.fail_on)
