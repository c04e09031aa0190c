"""The Rust core's per-line fast path (rust/journal/fast.rs) against its full path, journal by
journal: the same report with the fast path on and off (``PAIRLING_FAST_JOURNAL_FAST_PATH=0``),
over generated journals with planted defects, CAR's own journals, the adversarial corpus and
thousands of randomly mutated lines. The Python fallback has no fast path, so this is Rust only;
rust/journal/fast.rs compares the two paths line by line (facts and digests) in ``cargo test``."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

import pairling_fast as pf
from pairling_fast import _backend
from pairling_fast._load_core import import_core
from pairling_fast.generate.journal import generate_journal

ROOT = Path(__file__).parent
CAR_DATA = ROOT / "data" / "car"
ADVERSARIAL = ROOT / "adversarial" / "corpus"

# Edits that change how a line reads: escapes, floats, `-0`, wide integers, control bytes,
# duplicate members, torn structure, timestamps chrono or the schema refuses.
PIECES = [
    "\\", '"', ",", ":", "{", "}", "[", "]", " ", "\t", "1", "0", "-", "-0", ".5", "e3", "1.0",
    "null", "true", "é", "\x01", "\\u0041", "\\ud800", "\\n", '"kind":', '"data":{},', '"x":1,',
    "99999999999999999999", "Z", "+05:30", "\x0c", '"run_id":null,', '"hash":"0",',
]  # fmt: skip


def mutated(lines: list[bytes], count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        text = bytearray(rng.choice(lines).rstrip(b"\n"))
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            choice = rng.randrange(4)
            if choice == 0 and at < len(text):
                del text[at]
            elif choice == 1 and at < len(text):
                text[at] = rng.randrange(256)
            else:
                text[at:at] = rng.choice(PIECES).encode()
        out.append(bytes(text).replace(b"\n", b" ") + b"\n")
    return out


def journals(directory: Path) -> list[Path]:
    paths = []
    for car_version in ("0.58", "0.60"):
        for chain in (True, False):
            lines, expected = generate_journal(
                1500, 11, chain=chain, defects=40, car_version=car_version
            )
            assert expected, "defects are planted"
            path = directory / f"generated-{car_version}-{chain}.jsonl"
            path.write_bytes(b"".join(lines))
            paths.append(path)
            mutants = directory / f"mutated-{car_version}-{chain}.jsonl"
            mutants.write_bytes(b"".join(mutated(lines, 3000, len(paths))))
            paths.append(mutants)
    for path in sorted(CAR_DATA.glob("*.jsonl")):
        events = []
        for line in path.read_bytes().splitlines(keepends=True):
            try:
                wrapped = json.loads(line)
            except ValueError:
                wrapped = None
            # The CAR self-heal fixtures wrap each event as {"event": ..., "path": ...}.
            if isinstance(wrapped, dict) and isinstance(wrapped.get("event"), dict):
                events.append(json.dumps(wrapped["event"]).encode() + b"\n")
        paths.append(path)
        if events:
            unwrapped = directory / f"events-{path.name}"
            unwrapped.write_bytes(b"".join(events))
            paths.append(unwrapped)
    paths.extend(sorted(p for p in ADVERSARIAL.iterdir() if p.is_file()))
    return paths


def report(path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool, **options: Any) -> Any:
    if fast:
        monkeypatch.delenv("PAIRLING_FAST_JOURNAL_FAST_PATH", raising=False)
    else:
        monkeypatch.setenv("PAIRLING_FAST_JOURNAL_FAST_PATH", "0")
    return pf.check_journal(path, max_findings=None, **options).to_dict()


def test_the_fast_path_reports_what_the_full_path_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _backend.selected("rust"):
        paths = journals(tmp_path)
        compared = 0
        for path in paths:
            for chain in ("auto", "require", "off"):
                for profile in ("strict", "car-compatible"):
                    for car_version in ("0.58", "0.60"):
                        options = {"chain": chain, "profile": profile, "car_version": car_version}
                        full = report(path, monkeypatch, False, **options)
                        fast = report(path, monkeypatch, True, **options)
                        assert fast == full, (path.name, options)
                        compared += 1
        assert compared == len(paths) * 12


# The fallback's own shortcuts (it has no fast path, but small lines would take it minutes per
# million without these): each is held to the general code it short-cuts.


def test_the_fallbacks_common_timestamp_reading_is_chronos() -> None:
    from pairling_fast._fallback.journal import car_event

    rng = random.Random(5)
    checked = 0
    for _ in range(20_000):
        fraction = "".join(rng.choice("0123456789") for _ in range(rng.randrange(11)))
        text = (
            f"{rng.randrange(10000):04d}-{rng.randrange(14):02d}-{rng.randrange(33):02d}T"
            f"{rng.randrange(25):02d}:{rng.randrange(61):02d}:{rng.randrange(62):02d}"
            + (f".{fraction}" if fraction or rng.random() < 0.5 else "")
            + "Z"
        )
        try:
            general: Any = car_event._parse_timestamp(text)
        except car_event._Invalid:
            general = None
        assert car_event.parse_timestamp(text) == general, text
        checked += general is not None
    assert checked > 5_000


def test_the_fallbacks_plainly_valid_events_are_valid(tmp_path: Path) -> None:
    from pairling_fast._fallback import journal as fallback
    from pairling_fast._fallback.parse import parse_json
    from pairling_fast._fallback.validate import bundle_validator
    from pairling_fast.errors import CanonicalizationError

    paths = journals(tmp_path)
    plain = 0
    for car_version in ("0.58", "0.60"):
        validator = bundle_validator(fallback._event_bundle(car_version), fallback.EVENT_SCHEMA)
        for path in paths:
            for line in path.read_bytes().splitlines():
                try:
                    # As the fallback reads a line before validating it (the strict model).
                    event = parse_json(line)
                except CanonicalizationError:
                    continue
                if isinstance(event, dict) and fallback._plainly_valid(event, car_version):
                    assert validator.is_valid(event), line
                    plain += 1
    assert plain > 10_000


def test_the_allocator_settings_leave_the_environment_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The mimalloc defaults (on-demand commit, immediate purge: a flat peak RSS) are set only
    around the core's import; a user's own setting is kept."""
    monkeypatch.setenv("MIMALLOC_PURGE_DELAY", "10")
    monkeypatch.delenv("MIMALLOC_ARENA_EAGER_COMMIT", raising=False)
    import_core()
    assert os.environ["MIMALLOC_PURGE_DELAY"] == "10"
    assert "MIMALLOC_ARENA_EAGER_COMMIT" not in os.environ
