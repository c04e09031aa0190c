"""Loads the Rust core (``pairling_fast._core``): every module that needs the extension imports it
through ``import_core``, whichever asks first, so it is loaded with mimalloc's options set.

It imports nothing of the package, so any module may use it (``_tables`` does, while ``_backend``
is still being imported).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["import_core"]

# mimalloc, the Rust core's allocator, reads its options from the environment once, when the
# extension is loaded. By default it commits its arenas eagerly, and where the kernel backs memory
# with transparent huge pages that inflates a journal check's peak RSS (105 MiB instead of 68 on a
# 100 MB journal, benches/RESULTS.md); committing on demand and purging freed memory at once costs
# no measurable time. A user's own MIMALLOC_* settings win, and the environment is restored after
# the import.
MIMALLOC_DEFAULTS = {"MIMALLOC_ARENA_EAGER_COMMIT": "0", "MIMALLOC_PURGE_DELAY": "0"}


def import_core() -> ModuleType:
    """``pairling_fast._core``; raises ImportError if the extension is missing."""
    added = [name for name in MIMALLOC_DEFAULTS if name not in os.environ]
    for name in added:
        os.environ[name] = MIMALLOC_DEFAULTS[name]
    try:
        return importlib.import_module("pairling_fast._core")
    finally:
        for name in added:
            os.environ.pop(name, None)
