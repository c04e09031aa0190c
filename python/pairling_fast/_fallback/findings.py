"""``RawFinding``: a finding as the engine returns it; mirrors ``rust/python/findings.rs``.

The core's is a frozen record its stub declares (``_core.pyi``); this is a named tuple of the
same fields in the same order (``tests/test_engine_api.py`` holds the two together), so the
facade's ``Finding.from_raw`` reads either by name and gives it its file's path.
"""

from __future__ import annotations

from typing import NamedTuple

from ..codes import Severity


class RawFinding(NamedTuple):
    code: str
    severity: Severity
    message: str
    line: int | None = None
    pointer: str | None = None
    schema_pointer: str | None = None
    best_match: tuple[str, str, str] | None = None
    """For a failing ``oneOf``/``anyOf``: its closest branch error, (pointer, schema_pointer,
    message), as a ``RawViolation``'s last field; ``None`` otherwise."""

    def within(self, prefix: str) -> RawFinding:
        """This finding on a value that stands at ``prefix`` in the document reported on: its
        pointer, and its closest branch error's, put under ``prefix`` (``Finding::within``)."""
        best = self.best_match
        return self._replace(
            pointer=prefix + (self.pointer or ""),
            best_match=None if best is None else (prefix + best[0], best[1], best[2]),
        )
