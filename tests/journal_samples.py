"""What the journal property tests share (test_journal_stream.py, test_journal_state.py): the
generator's journals as bytes, a hypothesis strategy of them, and the settings they run under."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from pairling_fast.generate.journal import generate_journal

JOURNAL_PROPERTIES = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def generated(events: int, seed: int, chain: bool, defects: int) -> bytes:
    """``generate_journal``'s lines, joined."""
    lines, _ = generate_journal(events, seed, chain=chain, defects=defects)
    return b"".join(lines)


def journals(
    max_events: int, max_defects: int, chained: bool | None = None
) -> st.SearchStrategy[bytes]:
    """Generated journals of 5 to ``max_events`` events (any seed) with up to ``max_defects``
    defects; hash-chained if ``chained`` says so, else either way."""
    return st.builds(
        generated,
        events=st.integers(5, max_events),
        seed=st.integers(0, 10_000),
        chain=st.booleans() if chained is None else st.just(chained),
        defects=st.integers(0, max_defects),
    )
