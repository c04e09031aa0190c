"""The report on a terminal: ``rich`` colours, tables and a progress bar (``check`` when its
text goes to a terminal). Kept apart from ``output.py`` so that a check whose report goes to a
pipe or a file (every other case, and every other format) does not load ``rich``.
"""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table
from rich.text import Text

from .output import finding_counts, not_listed_note, shown, verdict
from .report import Severity
from .results import FileResult, PathsReport, Skipped

__all__ = ["PROGRESS_MIN_BYTES", "PROGRESS_MIN_FILES", "RichProgress", "print_rich"]

_STYLES: dict[Severity, str] = {"error": "bold red", "warning": "yellow", "info": "cyan"}

# A journal checked part way (Ctrl-C) is neither a pass nor a failure: a mark of its own.
_MARKS = {
    "ok": Text("✓ ", style="green"),
    "failed": Text("✗ ", style="bold red"),
    "partial": Text("◐ ", style="yellow"),
}

PROGRESS_MIN_FILES = 20
PROGRESS_MIN_BYTES = 16 << 20


def print_rich(report: PathsReport, console: Console, *, show_skipped: bool = False) -> None:
    """The report for a terminal: findings grouped by file, then a summary table."""
    for file in report.files:
        mark = _MARKS[file.status(report.fail_on)]
        path = shown(file.path)
        header = Text.assemble(mark, (path, "bold"), f" ({file.kind or 'unknown kind'})")
        if file.partial:
            header.append(f"  {file.progress_note()}", style="yellow")
        counts = finding_counts(file)
        if counts:
            header.append(f"  {counts}", style="dim")
        console.print(header)
        for finding in file.findings:
            where = f"{path}:{finding.line}" if finding.line is not None else path
            line = Text("    ")
            line.append(f"{finding.code} ", style=_STYLES[finding.severity])
            line.append(f"{finding.severity:<7} ", style=_STYLES[finding.severity])
            line.append(where, style="dim")
            if finding.pointer:
                line.append(f" {shown(finding.pointer)}", style="magenta")
            line.append(f"  {shown(finding.message)}")
            console.print(line)
        if file.unlisted:
            note = not_listed_note(file.unlisted, report.max_findings)
            console.print(Text(f"    … {note}", style="dim"))
    for skipped in report.skipped if show_skipped else ():
        console.print(
            Text(f"  - {shown(skipped.path)}: skipped, {shown(skipped.reason)}", style="dim")
        )
    if report.timings:
        timing = Table(title="timings", show_edge=False)
        for column in ("file", "bytes", "ms", "MB/s"):
            timing.add_column(column, justify="left" if column == "file" else "right")
        for file in report.files:
            rate = f"{file.size / file.seconds / 1e6:.1f}" if file.seconds > 0 else "-"
            timing.add_row(shown(file.path), str(file.size), f"{file.seconds * 1000:.1f}", rate)
        console.print(timing)
    table = Table(show_edge=False, box=None)
    columns = ["files", "skipped", "errors", "warnings", "infos"]
    if report.unlisted:
        columns.append("not listed")
    for column in (*columns, "result"):
        table.add_column(column, justify="right")
    passed = report.ok and not report.io_errors and not report.interrupted
    style = "bold green" if passed else "bold red"
    cells = [
        str(len(report.files)),
        str(len(report.skipped)),
        str(report.count("error")),
        str(report.count("warning")),
        str(report.count("info")),
    ]
    if report.unlisted:
        cells.append(str(report.unlisted))
    table.add_row(*cells, Text(verdict(report), style=style))
    console.print(table)


class RichProgress:
    """``CheckProgress`` as a rich progress bar with bytes/s and ETA, shown on long runs.

    The bar counts the bytes of finished files plus those read so far of the files being checked
    (``checking``, called from the worker threads), so it moves on one big journal too.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        self._lock = threading.Lock()
        self._finished = 0
        self._in_flight: dict[str, int] = {}

    def start(self, files: int, total_bytes: int) -> None:
        if files < PROGRESS_MIN_FILES and total_bytes < PROGRESS_MIN_BYTES:
            return
        self.progress = Progress(
            TextColumn("checking"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[last]}", style="dim"),
            console=self.console,
            transient=True,
        )
        self.task = self.progress.add_task("check", total=total_bytes, last="")
        self.progress.start()

    def checking(self, path: str, done: int) -> None:
        with self._lock:
            self._in_flight[path] = done
            self._show(path)

    def advance(self, result: FileResult | Skipped, size: int) -> None:
        with self._lock:
            self._in_flight.pop(result.path, None)
            self._finished += size
            self._show(result.path)

    def _show(self, path: str) -> None:
        if self.progress is not None and self.task is not None:
            done = self._finished + sum(self._in_flight.values())
            self.progress.update(self.task, completed=done, last=path)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
