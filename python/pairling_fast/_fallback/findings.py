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
