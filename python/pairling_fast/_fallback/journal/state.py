"""The ordered stage's state as data, on the pure-Python backend: ``rust/journal/state.rs``'s
snapshot and restore of the journal checker, in the same JSON (docs/journals.md, ``--state``).

Every map is written in sorted order, so a state is the same data from either backend and either
backend resumes from it. A window of closed ids is written once, as its last inserts' keys in
order, and rebuilt from them on reading (``WindowState`` in the Rust module says how).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from itertools import pairwise, repeat
from typing import Any, TypeVar

from ...codes import CODES, severity
from ..findings import RawFinding
from .ordered import (
    ACTION_TERMINAL,
    CLOSED_WINDOW,
    _Checker,
    _ClosedWindow,
    _MidRun,
)

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_SEVERITIES = ("error", "warning", "info")


def snapshot(checker: _Checker) -> dict[str, Any]:
    """The checker's state after the lines taken so far (before ``finish``)."""
    mid_run = checker.mid_run
    return {
        **checker.counts(),
        "last_hash": None if checker.last_hash is None else list(checker.last_hash),
        "chained": checker.chained,
        "unchained": checker.unchained,
        "verified": checker.verified,
        "tampered_at": checker.tampered_at,
        "require_reported": checker.require_reported,
        "findings": [_finding_state(finding) for finding in checker.findings],
        "suppressed": checker.suppressed,
        "suppressed_codes": checker.sorted_suppressed_codes(),
        "errors": checker.errors,
        "repeats": [
            [code, key, index, later]
            for (code, key), (index, later) in sorted(checker.repeats.items())
        ],
        "mid_run": {
            "first_line": mid_run.first_line,
            "unreadable_before": mid_run.unreadable_before,
            "last_line": mid_run.last_line,
            "runs": mid_run.runs,
            "proposals": mid_run.proposals,
            "events": mid_run.events,
            "examples": list(mid_run.examples),
        },
        "runs": [[run_id, line] for run_id, line in sorted(checker.runs.items())],
        "completed_runs": _window_value(checker.completed_runs, str, None),
        "orphans": _window_value(checker.orphans, str, None),
        "proposals": [[key, line] for key, line in sorted(checker.proposals.items())],
        "completed_proposals": _window_value(checker.completed_proposals, str, None),
        "actions": [[list(key), kind] for key, kind in sorted(checker.actions.items())],
        "ended_actions": _window_value(checker.ended_actions, list, str),
        "last_timestamp": None if checker.last_timestamp is None else list(checker.last_timestamp),
    }


def restore(checker: _Checker, state: Any) -> None:
    """Puts ``state`` (a ``snapshot``) into a new ``checker``; ``ValueError`` saying what is
    malformed when it is not one."""
    try:
        _restore(checker, state)
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        message = f"malformed journal checker state ({type(error).__name__}: {error})"
        raise ValueError(message) from None


def _restore(checker: _Checker, state: Any) -> None:
    checker.lines = _count(state["lines"])
    checker.events = _count(state["events"])
    checker.blank_lines = _count(state["blank_lines"])
    checker.invalid_lines = _count(state["invalid_lines"])
    checker.kinds = {_text(kind): _count(n) for kind, n in _object(state["kinds"]).items()}
    checker.last_hash = _optional(state["last_hash"], lambda v: (_text(v[0]), _count(v[1])))
    checker.chained = _count(state["chained"])
    checker.unchained = _count(state["unchained"])
    checker.verified = _count(state["verified"])
    checker.tampered_at = _optional(state["tampered_at"], _count)
    checker.require_reported = _flag(state["require_reported"])
    checker.findings = [_finding(item) for item in _list(state["findings"])]
    checker.suppressed = _count(state["suppressed"])
    checker.suppressed_codes = {
        _code(code): {_severity(name): _count(n) for name, n in _object(counts).items()}
        for code, counts in _object(state["suppressed_codes"]).items()
    }
    checker.errors = _count(state["errors"])
    checker.repeats = {}
    for code, key, index, later in _items(state["repeats"], 4):
        listed = _optional(index, _count)
        if listed is not None and listed >= len(checker.findings):
            raise ValueError("malformed journal checker state: a repeat points past the findings")
        checker.repeats[(_code(code), _text(key))] = (listed, _count(later))
    mid_run = _object(state["mid_run"])
    checker.mid_run = _MidRun(
        first_line=_optional(mid_run["first_line"], _count),
        unreadable_before=_count(mid_run["unreadable_before"]),
        last_line=_optional(mid_run["last_line"], _count),
        runs=_count(mid_run["runs"]),
        proposals=_count(mid_run["proposals"]),
        events=_count(mid_run["events"]),
        examples=[_text(example) for example in _list(mid_run["examples"])],
    )
    checker.runs = {_text(run_id): _count(line) for run_id, line in _items(state["runs"], 2)}
    _restore_window(checker.completed_runs, state["completed_runs"], _text, None)
    _restore_window(checker.orphans, state["orphans"], _text, None)
    checker.proposals = {_text(key): _count(line) for key, line in _items(state["proposals"], 2)}
    _restore_window(checker.completed_proposals, state["completed_proposals"], _text, None)
    checker.actions = {_action_key(key): _text(kind) for key, kind in _items(state["actions"], 2)}
    _restore_window(checker.ended_actions, state["ended_actions"], _action_key, _terminal)
    checker.last_timestamp = _optional(
        state["last_timestamp"], lambda v: (_integer(v[0]), _count(v[1]))
    )


def _window_value(
    window: _ClosedWindow[Any, Any],
    key: Callable[[Any], Any],
    value: Callable[[Any], Any] | None,
) -> dict[str, Any]:
    keys, gone, values = [], [], []
    entries = window._entries
    for index, (k, generation) in enumerate(window._order):
        current = entries.get(k)
        if current is not None and current[1] == generation:
            values.append(current[0])
        else:
            gone.append(index)
        keys.append(key(k))
    state: dict[str, Any] = {"generation": window._generation, "keys": keys, "gone": gone}
    if value is not None:
        state["values"] = [value(v) for v in values]
    return state


def _restore_window(
    window: _ClosedWindow[K, V],
    state: Any,
    key: Callable[[Any], K],
    value: Callable[[Any], V] | None,
) -> None:
    """A set's (``value`` None) entries hold True, as ``_Checker`` inserts them."""
    fields = {"generation", "keys", "gone"} | ({"values"} if value is not None else set())
    if set(_object(state)) != fields:
        raise ValueError(f"malformed journal checker state: a window of {sorted(fields)} expected")
    generation = _count(state["generation"])
    keys = [key(k) for k in _list(state["keys"])]
    gone = [_count(i) for i in _list(state["gone"])]
    if len(keys) > CLOSED_WINDOW or len(keys) > generation:
        raise ValueError("malformed journal checker state: a window of more keys than it holds")
    if any(a >= b for a, b in pairwise(gone)) or (gone and gone[-1] >= len(keys)):
        raise ValueError("malformed journal checker state: a window's gone inserts out of order")
    live = len(keys) - len(gone)
    values: Iterator[Any] = repeat(True)
    if value is not None:
        listed = [value(v) for v in _list(state["values"])]
        if len(listed) != live:
            raise ValueError("malformed journal checker state: a window's values do not match")
        values = iter(listed)
    first = generation - len(keys) + 1
    is_gone = set(gone)
    window._generation = generation
    window._order.extend((k, first + i) for i, k in enumerate(keys))
    window._entries = {k: (next(values), first + i) for i, k in enumerate(keys) if i not in is_gone}
    if len(window._entries) != live:
        raise ValueError("malformed journal checker state: a key twice in a window")


def _finding_state(finding: RawFinding) -> dict[str, Any]:
    """A finding by its record's field names, as the core writes it (``FindingState``)."""
    state = finding._asdict()
    if finding.best_match is not None:
        state["best_match"] = list(finding.best_match)
    return state


def _finding(item: Any) -> RawFinding:
    fields = _object(item)
    unknown = fields.keys() - RawFinding._fields
    if unknown:
        raise ValueError(f"malformed journal checker state: a finding has {min(unknown)!r}")
    code, level = fields["code"], fields["severity"]
    # The table gives a code its severity: a state that says otherwise is not this table's.
    if _severity(level) != severity(_code(code)):
        raise ValueError(f"malformed journal checker state: {code} is not a {level}")
    best = _optional(fields.get("best_match"), lambda v: _items([v], 3)[0])
    return RawFinding(
        code,
        level,
        _text(fields["message"]),
        _optional(fields.get("line"), _count),
        _optional(fields.get("pointer"), _text),
        _optional(fields.get("schema_pointer"), _text),
        None if best is None else (_text(best[0]), _text(best[1]), _text(best[2])),
    )


def _action_key(value: Any) -> tuple[str, str]:
    proposal, action = _items([value], 2)[0]
    return (_text(proposal), _text(action))


def _code(value: Any) -> str:
    if value not in CODES:
        raise ValueError(f"malformed journal checker state: unknown finding code {value!r}")
    return _text(value)


def _severity(value: Any) -> Any:
    if value not in _SEVERITIES:
        raise ValueError(f"malformed journal checker state: unknown severity {value!r}")
    return value


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"malformed journal checker state: {value!r} is not an integer")
    return value


def _count(value: Any) -> int:
    if _integer(value) < 0:
        raise ValueError(f"malformed journal checker state: {value!r} is not a count")
    return int(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"malformed journal checker state: {value!r} is not a boolean")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"malformed journal checker state: {value!r} is not a string")
    return value


def _terminal(value: Any) -> str:
    """An ended action's kind: one of the kinds that end an action, as the core requires."""
    kind = _text(value)
    if kind not in ACTION_TERMINAL:
        raise ValueError(f"malformed journal checker state: {kind!r} does not end an action")
    return kind


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError("malformed journal checker state: a list expected")
    return value


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError("malformed journal checker state: an object expected")
    return value


def _items(value: Any, size: int) -> list[list[Any]]:
    items = _list(value)
    for item in items:
        if not isinstance(item, list) or len(item) != size:
            raise ValueError(f"malformed journal checker state: a list of {size} items expected")
    return items


def _optional(value: Any, parse: Callable[[Any], V]) -> V | None:
    return None if value is None else parse(value)
