"""The ``pairling-fast`` command line (also ``python -m pairling_fast``).

Exit codes: 0 clean, 1 findings at or above ``--fail-on`` (or an invalid input to ``digest`` /
``canonicalize``), 2 usage, configuration or I/O errors, 5 ``check`` found no document to check
(as pytest's 5 for "no tests"; ``--no-require-files`` makes that a pass). Errors are one line on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, get_args

from . import _backend, schemas
from ._atomic import write_atomically
from ._files import DEFAULT_MAX_DOCUMENT_BYTES, LIMIT_VARIABLE, read_document
from ._pointers import unescape_pointer_token
from .canonical import DIGEST_PREFIX, canonicalize_json, digest_hex, parse_json
from .codes import CODES
from .config import Config, ConfigError, find_config
from .errors import CanonicalizationError, PairlingError, ValidationError
from .journal import DEFAULT_MAX_FINDINGS, JournalStateError, JournalStates
from .journal.options import Payloads, Profile
from .options import CheckOptions, FailOn
from .output import (
    FORMATS,
    finding_json,
    finding_line,
    render,
    shown,
    summary_line,
)
from .paths import KINDS, CheckInterrupted, PathArgumentError, check_paths, not_a_journal
from .redact import DEFAULT_MASK
from .report import Finding

if TYPE_CHECKING:
    from distributed import Client
    from rich.console import Console

    from .terminal import RichProgress

__all__ = ["build_parser", "findings_markdown", "main"]

PROG = "pairling-fast"
# The generators, each a module of `generate` (`add_arguments`, `run`), imported only by a run of
# its own subcommand.
GENERATORS = ("map", "journal", "transcript")
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_NO_DOCUMENTS = 0, 1, 2, 5
EXIT_INTERRUPTED = 128 + 2  # SIGINT, as shells report it

# Headings of the code ranges in docs/findings.md, by the first digit of the number.
CODE_RANGES = {
    "0": "JSON text and values",
    "1": "JSON Schema",
    "2": "Pairling capability maps",
    "3": "CAR journals",
    "4": "CAR wire: RPC results, JSON-RPC transcripts, the wire-schema bundle",
    "5": "Files and the command line",
    "9": "Internal",
}


class CliError(Exception):
    """A usage or I/O problem: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, as every other error: the mistake, the closest valid spelling,
    and the command whose ``--help`` lists the rest (not argparse's usage block of the top level).
    Subcommands' parsers are of this class too (``_DeferredParser``)."""

    def error(self, message: str) -> NoReturn:
        hint = _closest(self, message)
        self.exit(
            EXIT_USAGE,
            f"{self.prog}: error: {message}{f' (did you mean {hint}?)' if hint else ''}; "
            f"`{self.prog} --help` lists the options\n",
        )


class _DeferredParser(_Parser):
    """A subcommand's parser, which can defer arguments until it is first used (to parse, or
    for its help): those a module of its own defines (``diff``, the generators) are added then,
    so only a run of that subcommand imports the module, and other runs' start-up does not pay
    for it (a ``check --state`` re-run's start-up is much of its time: docs/journals.md)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending: list[Callable[[argparse.ArgumentParser], None]] = []

    def defer(self, define: Callable[[argparse.ArgumentParser], None]) -> None:
        self._pending.append(define)

    def _defined(self) -> None:
        while self._pending:
            self._pending.pop(0)(self)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._defined()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._defined()
        return super().format_usage()

    def format_help(self) -> str:
        self._defined()
        return super().format_help()


def _closest(parser: argparse.ArgumentParser, message: str) -> str | None:
    """The valid spelling closest to what an argparse error ``message`` quotes as wrong: an
    unknown option, or a choice not among those it lists."""
    import difflib

    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if choice is not None:
        wrong, valid = choice[1], re.findall(r"'([^']*)'", choice[2]) or choice[2].split(", ")
    else:
        unknown = re.match(r"unrecognized arguments: (.*)", message)
        options = [word for word in (unknown[1].split() if unknown else ()) if word[:1] == "-"]
        if not options:
            return None
        wrong = options[0].split("=", 1)[0]
        valid = [name for name in parser._option_string_actions if name.startswith("--")]
    close = difflib.get_close_matches(wrong, valid, n=1, cutoff=0.6)
    return close[0] if close else None


# ---------------------------------------------------------------------------------------------
# Helpers


def _fail(message: str) -> NoReturn:
    raise CliError(message)


def _read(path: str, limit: int | None) -> bytes:
    try:
        return read_document(path, limit)
    except OSError as error:
        _fail(f"{path}: {error.strerror or error}")


def _say(notes: list[str]) -> None:
    """What a writer wants the user to know about the destination (``_atomic.atomic_write``)."""
    for note in notes:
        print(f"{PROG}: note: {note}", file=sys.stderr)


def _check_destination(option: str, path: str) -> None:
    """Refuse an output path that cannot be written before any work is done, naming it as the
    user wrote it (the atomic writer's temporary file is no name of theirs)."""
    target = Path(path)
    if target.is_dir():
        _fail(f"{option} {path}: is a directory; name a file to write")
    directory = target.parent
    if not directory.exists():
        _fail(f"{option} {path}: directory {str(directory)!r} does not exist")
    if not directory.is_dir():
        _fail(f"{option} {path}: {str(directory)!r} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        reason = "permission denied"
        if os.statvfs(directory).f_flag & os.ST_RDONLY:
            reason = os.strerror(errno.EROFS)
        _fail(f"{option} {path}: {reason}: cannot create files in directory {str(directory)!r}")


def _write_output(option: str, path: str, data: bytes) -> None:
    notes: list[str] = []
    try:
        write_atomically(path, data, notes=notes)
    except OSError as error:
        _fail(f"{option} {path}: {error.strerror or error}")
    _say(notes)


def _json_error_line(path: str, error: CanonicalizationError) -> str:
    where = path
    if error.line is not None:
        where += f":{error.line}:{error.column}"
    pointer = f" at {error.pointer}" if error.pointer else ""
    return f"{where}: {error.code}{pointer}: {error.message}"


# ---------------------------------------------------------------------------------------------
# Commands


@dataclass(frozen=True)
class _CheckRun:
    """What ``check`` runs with: the command line merged with the configuration file, once."""

    options: CheckOptions
    # The journal state file (``--state``), loaded and saved around the run.
    state_file: str | None
    require_files: bool


def _merged(args: argparse.Namespace, config: Config) -> _CheckRun:
    """The one place the command line meets the configuration file: each option the command line
    gives wins, else the file's, else ``CheckOptions``'s default (from its one table)."""

    def given(flag: Any, configured: Any) -> Any:
        return configured if flag is None else flag

    fields = {
        "kind": args.type,
        "exclude": (*config.exclude, *args.exclude),
        "follow_symlinks": given(args.follow_symlinks, config.follow_symlinks),
        "jobs": args.jobs,
        "fail_on": given(args.fail_on, config.fail_on),
        "severities": config.severity,
        "timings": args.stats,
        "profile": args.profile,
        "car_version": given(args.car_version, config.car_version),
        "payloads": given(args.payloads, config.payloads),
        "manifest": _manifest(args.manifest),
        "max_document_bytes": args.max_document_bytes,
        "max_findings": given(args.max_findings, config.max_findings),
        "redact": args.redact or config.redact,
    }
    chosen = {name: value for name, value in fields.items() if value is not None}
    if chosen.get("max_findings") == 0:
        chosen["max_findings"] = None  # 0: list them all
    try:
        options = CheckOptions(**chosen)
    except ValueError as error:  # one line, as every usage error, never a traceback
        _fail(str(error))
    return _CheckRun(
        options,
        args.state or config.state,
        given(args.require_files, config.require_files) is not False,
    )


def _command_check(args: argparse.Namespace) -> int:
    run = _merged(args, _config(args))
    if args.follow:
        return _command_follow(args, run)
    if args.output is not None:
        _check_destination("--output", args.output)
    to_terminal = args.format == "text" and args.output is None and sys.stdout.isatty()
    console: Console | None = None
    progress: RichProgress | None = None
    if to_terminal:
        # rich is only for a terminal: a report to a pipe or a file (cron, CI, `--format json`)
        # does not pay for loading it.
        from rich.console import Console

        from .terminal import RichProgress

        console = Console(no_color=True if args.no_color else None, highlight=False)
        progress = RichProgress(console)
    states = _journal_states(run.state_file, args.dask is not None)
    cluster = ExitStack()
    try:
        client: Client | None = None
        lines: _LineProgress | None = None
        if args.dask is not None:
            # Only a cluster run needs the cluster module (socket, its own dataclasses).
            from .journal.cluster import check_workers, connect, workers_line

            if args.dask == "local" or args.dask.startswith("local:"):
                # Starting workers takes seconds; a scheduler answers, or fails in one line.
                _progress_note("starting a local Dask cluster …")
            started = time.monotonic()
            client = connect(args.dask, cluster)
            check_workers(client)
            seconds = time.monotonic() - started
            _progress_note(f"cluster ready in {seconds:.1f} s: {workers_line(client)}")
            if progress is None:
                lines = _LineProgress()
    except (OSError, ValueError, PairlingError) as error:
        cluster.close()
        _fail(f"--dask {args.dask}: {error}")
    try:
        report = check_paths(
            args.paths, run.options, progress=progress or lines, client=client, state=states
        )
    except PathArgumentError as error:
        _fail(str(error))
    except CheckInterrupted as stopped:
        report = stopped.report  # Ctrl-C: the partial report, then exit 130
    finally:
        if progress is not None:
            progress.stop()
        cluster.close()
    if console is not None:
        from .terminal import print_rich

        print_rich(report, console, show_skipped=args.show_skipped)
    elif args.output is not None:
        text = render(report, args.format, show_skipped=args.show_skipped)
        _write_output("--output", args.output, text.encode("utf-8"))
        print(f"{summary_line(report)} (report written to {args.output})", file=sys.stderr)
    else:
        sys.stdout.write(render(report, args.format, show_skipped=args.show_skipped))
        if args.format == "jsonl":  # stdout is data only: the verdict goes to stderr
            print(summary_line(report), file=sys.stderr)
    if states is not None and run.state_file is not None:
        # Each entry is only ever updated by a journal checked to its end, so after Ctrl-C the
        # journals finished are saved and the one interrupted keeps its previous entry.
        _save_states(states, run.state_file)
    if report.interrupted:
        for file in report.files:
            if file.partial:
                print(f"{PROG}: {shown(file.path)}: {file.progress_note()}", file=sys.stderr)
        print(f"{PROG}: interrupted: the report above is partial", file=sys.stderr)
        return EXIT_INTERRUPTED
    for finding in report.io_errors:
        print(f"{PROG}: error: {shown(f'{finding.path}: {finding.message}')}", file=sys.stderr)
    if report.io_errors:
        return EXIT_USAGE
    if not report.documents and run.require_files:
        print(
            f"{PROG}: no document checked ({len(report.skipped)} skipped; `-v` lists them, "
            "--no-require-files lets this pass)",
            file=sys.stderr,
        )
        return EXIT_NO_DOCUMENTS
    return EXIT_OK if report.ok else EXIT_FINDINGS


def _progress_note(text: str) -> None:
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)


class _LineProgress:
    """``CheckProgress`` as lines on stderr, for a cluster run whose wait would else be silent:
    how many files go to the cluster, then how many are done, at most every few seconds."""

    EVERY_SECONDS = 5.0

    def __init__(self) -> None:
        self._files = 0
        self._done = 0
        self._lock = threading.Lock()
        self._said = time.monotonic()

    def start(self, files: int, total_bytes: int) -> None:
        self._files = files
        _progress_note(f"checking {files} file(s), {total_bytes:,} bytes, on the cluster …")

    def advance(self, result: object, size: int) -> None:
        with self._lock:
            self._done += 1
            now = time.monotonic()
            if self._done == self._files or now - self._said >= self.EVERY_SECONDS:
                self._said = now
                _progress_note(f"{self._done}/{self._files} file(s) checked")


def _command_follow(args: argparse.Namespace, run: _CheckRun) -> int:
    """``check --follow``: the journals followed as they grow until Ctrl-C (``journal.follow``)."""
    from .journal.follow import follow

    if args.format not in ("text", "jsonl"):
        _fail(
            f"--follow writes its findings as they come: --format text or jsonl, not {args.format}"
        )
    for option, value in (("--output", args.output), ("--dask", args.dask)):
        if value is not None:
            _fail(f"{option} cannot be used with --follow")
    for path in args.paths:
        if os.path.isdir(path):
            _fail(f"{path}: is a directory; --follow takes journal files (waited for if missing)")
        # Told as `check` tells it, once, before a line is read as an event.
        refused = not_a_journal(Path(path))
        if refused is not None:
            _fail(
                f"{shown(path)}: {refused}, not a CAR journal; --follow takes journals "
                f"(`{PROG} check {shown(path)}` checks it once)"
            )
    state_file = run.state_file
    states = _journal_states(state_file, False)
    status_line = args.format == "text" and sys.stdout.isatty()
    mask = run.options.redact
    out = sys.stdout
    shown_status = False

    def emit(finding: Finding) -> None:
        nonlocal shown_status
        if mask is not None:
            finding = finding.redacted(mask)
        if shown_status:
            out.write("\r\x1b[K")
            shown_status = False
        if args.format == "jsonl":
            out.write(finding_json(finding) + "\n")
        else:
            out.write(finding_line(finding) + "\n")
        out.flush()

    def status(events: int, rate: int, last: str) -> None:
        nonlocal shown_status
        out.write(f"\r\x1b[K{events:,} events, {rate:,} events/s; last verified: {shown(last)}")
        out.flush()
        shown_status = True

    def terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    checkpoint: Callable[[], None] | None = None
    if states is not None and state_file is not None:
        saved_states, saved_to = states, state_file

        def save() -> None:
            _save_states(saved_states, saved_to)

        checkpoint = save

    # A service manager stops with SIGTERM: the same clean end as Ctrl-C.
    signal.signal(signal.SIGTERM, terminate)
    try:
        summary = follow(
            args.paths,
            run.options.journal,
            emit=emit,
            note=lambda text: print(f"{PROG}: {shown(text)}", file=sys.stderr),
            states=states,
            status=status if status_line else None,
            severities=run.options.severities,
            checkpoint=checkpoint,
        )
    except JournalStateError as error:
        _fail(f"--state: {error}")
    except OSError as error:
        _fail(f"{error.filename}: {error.strerror}" if error.filename else str(error))
    if shown_status:
        out.write("\r\x1b[K")
        out.flush()
    for path, journal in summary.journals.items():
        pending = journal["pending"]
        extra = f", a partial last line of {pending} bytes pending" if pending else ""
        extra += ", missing at the end" if journal["missing"] else ""
        print(
            f"{PROG}: followed {shown(path)}: {journal['files']} file(s), {journal['lines']} "
            f"lines, {journal['events']} events, {journal['errors']} error(s), "
            f"{journal['warnings']} warning(s){extra}",
            file=sys.stderr,
        )
    if states is not None and state_file is not None:
        _save_states(states, state_file)
    warnings = sum(journal["warnings"] for journal in summary.journals.values())
    failed = summary.errors or (run.options.fail_on == "warning" and warnings)
    return EXIT_FINDINGS if failed else EXIT_OK


def _save_states(states: JournalStates, state_file: str) -> None:
    notes: list[str] = []
    try:
        states.save(state_file, notes=notes)
    except OSError as error:
        _fail(f"--state {state_file}: cannot write the state file: {error.strerror or error}")
    _say(notes)


def _journal_states(path: str | None, on_cluster: bool) -> JournalStates | None:
    """The journal state file of ``--state`` (or the configuration's ``state``), loaded."""
    if path is None:
        return None
    if on_cluster:
        _fail("--state cannot be used with --dask: the cluster's chunked check does not resume")
    directory = Path(path).parent
    if not directory.exists():
        # A cache's folder is made for it (`--state .cache/journals.state` on a fresh checkout);
        # a parent that is a file, or cannot be made, is refused here or below.
        try:
            directory.mkdir(parents=True)
        except OSError as error:
            reason = error.strerror or str(error)
            _fail(f"--state {path}: cannot create directory {str(directory)!r}: {reason}")
    _check_destination("--state", path)
    try:
        return JournalStates.load(path)
    except JournalStateError as error:
        _fail(f"--state: {error}")


def _config(args: argparse.Namespace) -> Config:
    if args.isolated:
        return Config()
    explicit = Path(args.config) if args.config is not None else None
    return find_config(Path.cwd(), explicit)


# RFC 6901: an array index is ASCII digits; str.isdigit() would take superscripts or
# Arabic-Indic digits too.
_ARRAY_INDEX = re.compile("[0-9]+", re.ASCII)


def _resolve_pointer(document: Any, pointer: str) -> Any:
    """The value at an RFC 6901 JSON Pointer."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        _fail(f"--pointer {pointer!r}: a JSON Pointer starts with '/' (or is empty)")
    value = document
    for raw in pointer[1:].split("/"):
        token = unescape_pointer_token(raw)
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and _ARRAY_INDEX.fullmatch(token) and int(token) < len(value):
            if token != "0" and token.startswith("0"):
                _fail(f"--pointer {pointer!r}: array index {token!r} has a leading zero")
            value = value[int(token)]
        else:
            _fail(f"--pointer {pointer!r}: nothing at {token!r}")
    return value


def _command_digest(args: argparse.Namespace) -> int:
    try:
        document = parse_json(_read(args.file, args.max_document_bytes))
        value = _resolve_pointer(document, args.pointer)
        hex_digest = digest_hex(value)
    except CanonicalizationError as error:
        print(_json_error_line(args.file, error), file=sys.stderr)
        return EXIT_FINDINGS
    print(hex_digest if args.hex else DIGEST_PREFIX + hex_digest)
    return EXIT_OK


def _command_canonicalize(args: argparse.Namespace) -> int:
    if args.output is not None:
        _check_destination("--output", args.output)
    try:
        canonical = canonicalize_json(_read(args.file, args.max_document_bytes))
    except CanonicalizationError as error:
        print(_json_error_line(args.file, error), file=sys.stderr)
        return EXIT_FINDINGS
    if args.output is None:
        sys.stdout.buffer.write(canonical)
        sys.stdout.buffer.flush()
    else:
        _write_output("--output", args.output, canonical)
    return EXIT_OK


def _command_seal(args: argparse.Namespace) -> int:
    if args.output is not None:
        _check_destination("--output", args.output)
    from .maps import write_sealed

    notes: list[str] = []
    written = write_sealed(
        args.map,
        out_path=args.output,
        in_place=args.in_place,
        notes=notes,
        max_document_bytes=args.max_document_bytes,
    )
    _say(notes)
    print(f"sealed {args.map} -> {written}", file=sys.stderr)
    return EXIT_OK


def _command_diff(args: argparse.Namespace) -> int:
    if args.old == "-" and args.new == "-":
        _fail("OLD and NEW cannot both be - (standard input)")
    if args.output is not None:
        _check_destination("--output", args.output)
    from .map_diff_cli import run

    return run(args)


def _command_chain(args: argparse.Namespace) -> int:
    from .journal.writers import chain_journal

    _check_destination("--output", args.output)
    notes: list[str] = []
    report = chain_journal(args.journal, args.output, notes=notes)
    _say(notes)
    for finding in report.findings:
        print(finding_line(finding), file=sys.stderr)
    print(f"chained {args.journal} -> {args.output}", file=sys.stderr)
    return EXIT_OK


def _command_schemas(args: argparse.Namespace) -> int:
    for schema_id in schemas.ids():
        print(f"{schema_id}\t{schemas.source(schema_id)}")
    bundles = schemas.bundles()
    for bundle in bundles:
        default = "\tdefault" if bundle is bundles[-1] else ""
        print(f"wire-schema {bundle.car_version}\t{bundle.file}\tsha256:{bundle.digest}{default}")
    return EXIT_OK


def _explain_one(code: str) -> str:
    info = CODES[code]
    return f"{code} {info.title} (default severity: {info.severity})\n\n{info.description}\n"


def findings_markdown() -> str:
    """docs/findings.md: every finding code, grouped by range, from ``codes.CODES``."""
    lines = [
        "# Finding codes",
        "",
        "Every finding pairling_fast reports has one of these stable codes. This file is",
        "generated from `python/pairling_fast/codes.toml` by",
        "`python -m pairling_fast explain --all --markdown` (a test keeps it in sync);",
        "`pairling-fast explain CODE` prints one entry. Severities are the defaults; a project",
        'can change them (`severity = {PF224 = "off"}`, see the README).',
    ]
    current_range = None
    for code in sorted(CODES):
        code_range = code[2]
        if code_range != current_range:
            current_range = code_range
            lines += ["", f"## PF{code_range}xx — {CODE_RANGES.get(code_range, 'Other')}"]
        info = CODES[code]
        lines += ["", f"### {code} — {info.title}", "", f"Severity: {info.severity}.", ""]
        lines.append(info.description)
    return "\n".join(lines) + "\n"


def _command_explain(args: argparse.Namespace) -> int:
    if args.all:
        if args.markdown:
            sys.stdout.write(findings_markdown())
        else:
            for code in sorted(CODES):
                print(f"{code}  {CODES[code].severity:<7}  {CODES[code].title}")
        return EXIT_OK
    if args.code is None:
        _fail("explain needs a finding code (e.g. PF101) or --all")
    code = args.code.upper()
    if code not in CODES:
        _fail(f"unknown finding code {args.code!r}; `{PROG} explain --all` lists them")
    sys.stdout.write(_explain_one(code))
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# The parser


def _add_backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        choices=_backend.BACKENDS,
        help="run on the Rust core or the pure-Python fallback (default: $PAIRLING_FAST_BACKEND, "
        "else rust)",
    )


def _add_check_parser(commands: Any) -> None:
    check = commands.add_parser(
        "check",
        help="check files and directories (kinds told by content)",
        description="Check every capability map, CAR journal, JSON-RPC transcript, RPC result "
        "and wire-schema bundle under PATH; other files are listed as skipped with the reason.",
    )
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.add_argument("--type", choices=KINDS, help="check every file as this kind")
    check.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files and directories whose name or path matches (repeatable; adds to the "
        "config's exclude)",
    )
    check.add_argument(
        "--follow-symlinks",
        action="store_true",
        default=None,
        help="follow symbolic links met while walking directories (loops are detected)",
    )
    check.add_argument(
        "--jobs", "-j", type=_whole_number(1), help="files checked at once (default: cores)"
    )
    check.add_argument("--format", "-f", choices=FORMATS, default="text")
    check.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write the report to FILE (its directory must exist; checked before the run)",
    )
    check.add_argument(
        "--verbose",
        "-v",
        "--show-skipped",
        dest="show_skipped",
        action="store_true",
        help="text and github formats: a line for every skipped file and why (json and sarif "
        "always list them; the summary counts them)",
    )
    check.add_argument(
        "--max-findings",
        type=_whole_number(0),
        metavar="N",
        help=f"list at most N findings per file, count the rest (default {DEFAULT_MAX_FINDINGS}; "
        "0: list all)",
    )
    check.add_argument(
        "--require-files",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="exit 5 when no document was checked (default); --no-require-files makes that a "
        "pass (pre-commit runs on changed files that may hold no document)",
    )
    check.add_argument(
        "--fail-on",
        choices=get_args(FailOn),
        help="exit 1 on findings of this severity or worse (default: error)",
    )
    check.add_argument(
        "--profile",
        choices=get_args(Profile),
        help="journals: 'strict' (the wire schema, default) or 'car-compatible' (what CAR's own "
        "parser tolerates is a PF304 warning)",
    )
    check.add_argument(
        "--payloads",
        choices=get_args(Payloads),
        help="journals: check each event's data against CAR's payload contracts as warnings "
        "(default), errors, or not at all (docs/journals.md)",
    )
    check.add_argument(
        "--redact",
        nargs="?",
        const=DEFAULT_MASK,
        metavar="MASK",
        help=f"replace every instance value quoted in a finding's message by MASK (default "
        f"{DEFAULT_MASK!r}) in every format, so the report can be published; code, line and "
        "pointers stay (docs/reports.md)",
    )
    check.add_argument("--stats", action="store_true", help="per-file timings and throughput")
    check.add_argument(
        "--state",
        metavar="FILE",
        help="journals: record where each journal's verified prefix ends in FILE and, next time, "
        "check only what was appended since (after re-hashing the prefix; docs/journals.md)",
    )
    check.add_argument(
        "--follow",
        action="store_true",
        help="journals: check the journal files named, then keep following them as they grow "
        "(by name, like tail -F: rotation, truncation, a file yet to appear), printing each "
        "finding as its line is completed, until Ctrl-C; --format text or jsonl "
        "(docs/journals.md)",
    )
    check.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="check on a Dask cluster: its scheduler (tcp://host:8786), or local[:N] for a "
        "LocalCluster of N processes; same report (docs/cluster.md, needs the [dask] extra)",
    )
    check.add_argument("--no-color", action="store_true", help="no colours (also: NO_COLOR=1)")
    check.add_argument("--config", metavar="FILE", help="read defaults from this TOML file")
    check.add_argument("--isolated", action="store_true", help="ignore configuration files")
    check.add_argument(
        "--car-version",
        type=schemas.car_version_argument,
        metavar="VERSION",
        help="check journals, transcripts, RPC results and params against this CAR release's "
        "bundled wire schema (0.58.0, 0.58, seed; default: the newest, or what a transcript "
        "names; see `schemas`)",
    )
    _add_backend_option(check)
    check.add_argument(
        "--manifest",
        metavar="FILE",
        help="Pairling's reviewed operation manifest (JSON): adds the release-join checks "
        "PF254-PF260 to every capability map",
    )
    check.set_defaults(run=_command_check)


def _manifest(path: str | None) -> Any:
    """The parsed --manifest, or a one-line error: a file that cannot be read or is not JSON."""
    if path is None:
        return None
    from .maps import load_manifest

    try:
        return load_manifest(path)
    except OSError as error:
        _fail(f"--manifest {path}: {error.strerror or error}")
    except ValueError as error:
        _fail(f"--manifest {path}: not JSON: {error}")


def _whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}")
        return value

    return parse


def _add_generate_parser(commands: Any) -> None:
    generate = commands.add_parser("generate", help="write synthetic documents (tests, benches)")
    kinds = generate.add_subparsers(dest="generator", metavar="{map,journal,transcript}")
    kinds.required = True
    for name in GENERATORS:
        parser = kinds.add_parser(name, help=f"a synthetic {name}")
        parser.defer(partial(_define_generator, name))
        parser.defer(_add_backend_option)


def _define_generator(name: str, parser: argparse.ArgumentParser) -> None:
    module = importlib.import_module(f"{__package__}.generate.{name}")
    module.add_arguments(parser)
    parser.set_defaults(run=module.run)


def _define_diff(parser: argparse.ArgumentParser) -> None:
    from .map_diff_cli import add_arguments

    add_arguments(parser)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = _Parser(
        prog=PROG,
        description="Fast, strict validation of Pairling capability maps and CAR wire documents.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"{PROG} {__version__} ({_backend.active_name()} backend)",
    )
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_DeferredParser
    )
    commands.required = True
    _add_check_parser(commands)

    digest = commands.add_parser("digest", help="sha256 of a JSON document's RFC 8785 form")
    digest.add_argument("file", metavar="FILE")
    digest.add_argument("--pointer", default="", metavar="PTR", help="digest only this value")
    digest.add_argument("--hex", action="store_true", help="bare hex, without 'sha256:'")
    digest.set_defaults(run=_command_digest)

    canonical = commands.add_parser("canonicalize", help="write the RFC 8785 canonical form")
    canonical.add_argument("file", metavar="FILE")
    canonical.add_argument("--output", "-o", metavar="OUT", help="write to OUT (atomically)")
    canonical.set_defaults(run=_command_canonicalize)

    seal = commands.add_parser("seal", help="recompute a capability map's digests")
    seal.add_argument("map", metavar="MAP")
    target = seal.add_mutually_exclusive_group(required=True)
    target.add_argument("--output", "-o", metavar="OUT", help="write the sealed map to OUT")
    target.add_argument("--in-place", action="store_true", help="rewrite MAP")
    seal.set_defaults(run=_command_seal)

    diff = commands.add_parser(
        "diff",
        help="what changed between two capability maps, and whether it loosens remote control",
    )
    diff.defer(_define_diff)
    diff.set_defaults(run=_command_diff)

    chain = commands.add_parser("chain", help="write a hash-chained copy of a CAR journal")
    chain.add_argument("journal", metavar="JOURNAL")
    chain.add_argument("--output", "-o", metavar="OUT", required=True)
    chain.set_defaults(run=_command_chain)

    _add_generate_parser(commands)

    listing = commands.add_parser("schemas", help="list the bundled schema ids and their sources")
    listing.set_defaults(run=_command_schemas)

    explain = commands.add_parser("explain", help="what a finding code means")
    explain.add_argument("code", nargs="?", metavar="CODE")
    explain.add_argument("--all", action="store_true", help="every code")
    explain.add_argument("--markdown", action="store_true", help="with --all: docs/findings.md")
    explain.set_defaults(run=_command_explain)

    # Added after each subcommand's own arguments, deferred as those of `diff` are.
    for name in ("digest", "canonicalize", "seal", "chain", "schemas", "diff"):
        commands.choices[name].defer(_add_backend_option)
    for name in ("check", "digest", "canonicalize", "seal", "diff"):
        commands.choices[name].defer(_add_document_limit)
    _name_usage_parsers(parser)
    return parser


def _add_document_limit(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-document-bytes",
        type=_whole_number(1),
        metavar="N",
        help="refuse a whole JSON document (map, RPC result, wire schema) larger than N bytes "
        f"(default: ${LIMIT_VARIABLE}, else {DEFAULT_MAX_DOCUMENT_BYTES})",
    )


def _name_usage_parsers(parser: argparse.ArgumentParser) -> None:
    """Each (sub)command's parse leaves ``usage_parser``, itself: the one that says an error in
    the arguments it was given (``main``)."""
    parser.set_defaults(usage_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                _name_usage_parsers(command)


@contextmanager
def _selected_backend(name: str | None) -> Iterator[None]:
    if name is None:
        yield
        return
    try:
        _backend.engine(name)
    except ImportError as error:
        _fail(f"--backend {name}: {error}")
    with _backend.selected(name):
        yield


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):
        # Findings quote documents; a terminal or log that cannot show a character gets an
        # escape instead of a crash.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    args, unknown = build_parser().parse_known_args(argv)
    if unknown:
        # Said by the subcommand that was given them, with its own --help.
        args.usage_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        with _selected_backend(getattr(args, "backend", None)):
            return int(args.run(args))
    except (CliError, ConfigError, PathArgumentError) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ValidationError as error:
        # seal and chain refuse an invalid input and write nothing: show every reason.
        for finding in error.findings:
            print(finding_line(finding), file=sys.stderr)
        return EXIT_FINDINGS
    except PairlingError as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return EXIT_FINDINGS
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, and keep Python from complaining
        # when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_USAGE
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"{PROG}: error: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
