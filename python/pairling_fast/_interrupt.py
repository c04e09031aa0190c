"""Ctrl-C reaching work that runs on worker threads.

Python delivers SIGINT to the main thread only, so a check running on one of ``check_paths``'s
threads would never see it: the main thread would wait for the whole file. When the main thread
is interrupted it calls ``stop`` for the threads still working:

- the Rust core's long loops (journals, transcripts) call ``stop_requested`` between batches from
  the PyO3 glue (``rust/python/``) and return their partial report;
- Python code (the fallback) gets a ``KeyboardInterrupt`` raised in that thread at its next
  bytecode, which the fallback's journal loop turns into a partial report like the main thread's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Watch", "stop", "stop_requested", "watched"]

_local = threading.local()


class Watch:
    """The threads working for one run, and whether that run has been asked to stop."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._lock = threading.Lock()
        self._threads: set[int] = set()

    def enter(self) -> None:
        with self._lock:
            self._threads.add(threading.get_ident())

    def leave(self) -> None:
        with self._lock:
            self._threads.discard(threading.get_ident())


@contextmanager
def watched(watch: Watch) -> Iterator[None]:
    """Run the block on this thread as part of ``watch``'s run."""
    previous = getattr(_local, "watch", None)
    _local.watch = watch
    watch.enter()
    try:
        yield
    finally:
        watch.leave()
        _local.watch = previous
        # A stop sent just as the block ended must not fire later, outside the run. `stop` sets
        # the flag before it sends, and sends only to threads still entered: a thread that finds
        # the flag clear after `leave` was sent nothing.
        if watch.event.is_set():
            # `stop` imported ctypes before it set the flag: no Python code runs here, where a
            # pending KeyboardInterrupt would be raised.
            import ctypes

            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()), None)


def stop_requested() -> bool:
    """Whether the run this thread works for was interrupted (False outside any run)."""
    watch: Watch | None = getattr(_local, "watch", None)
    return watch is not None and watch.event.is_set()


def stop(watch: Watch) -> None:
    """Ask every thread of ``watch`` to stop: the flag for Rust, an exception for Python code."""
    # Imported when a run is stopped, not with the package (5 ms of `import pairling_fast`),
    # and before the flag is set: see `watched`.
    import ctypes

    watch.event.set()
    with watch._lock:
        for ident in watch._threads:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(ident), ctypes.py_object(KeyboardInterrupt)
            )
