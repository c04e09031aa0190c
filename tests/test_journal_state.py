"""Incremental journal checks (``check --state``, ``check_journal(state=...)``): a check resumed
from the saved state of a verified prefix reports exactly what a full check of the whole file
reports, on both backends; a changed prefix, changed options or an unusable state file are said."""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from cli_helpers import Cli
from hypothesis import given
from hypothesis import strategies as st
from journal_samples import JOURNAL_PROPERTIES, generated, journals

import pairling_fast as pf
from pairling_fast import _backend, _prefix_hash
from pairling_fast.codes import STATE_OPTIONS_CHANGED, VERIFIED_PREFIX_CHANGED
from pairling_fast.journal import state_file as journal_state
from pairling_fast.journal.options import JournalInterrupted
from pairling_fast.journal.state_file import BLOCK_SIZE, STATE_FORMAT, STATE_VERSION, HashingReader


def _comparable(report: pf.Report) -> tuple[list[Any], dict[str, Any]]:
    stats = {key: value for key, value in report.stats.items() if key != "resumed"}
    return [f.to_dict() for f in report.findings], stats


# BLAKE3's own test vectors (the BLAKE3 specification's repository, test_vectors.json: inputs of
# bytes 0, 1, ..., 250, 0, 1, ... of these lengths), so the prefix's hash is BLAKE3 and not another.
BLAKE3_VECTORS = {
    0: "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
    1: "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213",
    1025: "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444",
    102400: "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085",
}


@pytest.mark.parametrize("length", sorted(BLAKE3_VECTORS))
def test_the_prefix_hash_is_blake3(length: int) -> None:
    data = bytes(index % 251 for index in range(length))
    hasher = _prefix_hash.new()
    half = length // 2
    _prefix_hash.update(hasher, data, 0, half)
    copied = hasher.copy()
    _prefix_hash.update(hasher, data, half, length)
    _prefix_hash.update(copied, data, half, length)
    assert hasher.hexdigest() == copied.hexdigest() == BLAKE3_VECTORS[length]


def test_without_blake3_a_state_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither the core nor the blake3 package: the state cannot be proved, and it says so."""
    monkeypatch.setattr(_prefix_hash, "_CORE", None)
    monkeypatch.setattr(_prefix_hash, "_package_hasher", lambda: None)
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(generated(5, 3, chain=True, defects=0))
    with pytest.raises(pf.PairlingError, match="needs BLAKE3: the Rust core, or the blake3"):
        pf.check_journal(journal, state=pf.JournalStates())


def _blocks(prefix: bytes, size: int) -> list[dict[str, Any]]:
    """The blocks an entry should record for ``prefix``, worked out from its bytes directly: each
    ``size`` bytes' BLAKE3 and the lines of its first and last byte."""
    newlines = [at for at, byte in enumerate(prefix) if byte == 0x0A]

    def line(at: int) -> int:  # the line the byte at ``at`` is in
        return bisect.bisect_left(newlines, at) + 1

    def blake3(data: bytes) -> str:
        hasher = _prefix_hash.new()
        _prefix_hash.update(hasher, data, 0, len(data))
        return hasher.hexdigest()

    return [
        {
            "blake3": blake3(prefix[start : start + size]),
            "first_line": line(start),
            "last_line": line(min(start + size, len(prefix)) - 1),
        }
        for start in range(0, len(prefix), size)
    ]


def _head(state: Path) -> Any:
    """The head of a state file: its first line, JSON (the engines' states follow it)."""
    return json.loads(state.read_bytes().split(b"\n", 1)[0])


def _entry(states: pf.JournalStates, journal: Path) -> dict[str, Any]:
    entry = states.entry(os.path.realpath(journal))
    assert entry is not None
    return entry


@JOURNAL_PROPERTIES
@given(
    journal_bytes=journals(max_events=120, max_defects=6),
    splits=st.lists(st.floats(0, 1), min_size=1, max_size=3),
    max_findings=st.sampled_from([None, 2, 1000]),
    tail=st.sampled_from([b"", b'{"kind"', b"\n\n", b"not json\n"]),
    block_size=st.sampled_from([5, 97, 1000, BLOCK_SIZE]),
)
def test_a_resumed_check_equals_a_full_check(
    backend: _backend.Engine,
    tmp_path_factory: pytest.TempPathFactory,
    journal_bytes: bytes,
    splits: list[float],
    max_findings: int | None,
    tail: bytes,
    block_size: int,
) -> None:
    """Appended in pieces cut anywhere (inside lines too), checked after every piece; the blocks
    recorded as the checks go on are those of the whole prefix hashed at once."""
    data = journal_bytes + tail
    journal = tmp_path_factory.mktemp("state") / "events.jsonl"
    states = pf.JournalStates()
    cuts = sorted({int(fraction * len(data)) for fraction in splits} | {len(data)})
    start = 0
    with mock.patch.object(journal_state, "BLOCK_SIZE", block_size):
        for cut in cuts:
            with open(journal, "ab") as stream:
                stream.write(data[start:cut])
            start = cut
            resumed = pf.check_journal(journal, max_findings=max_findings, state=states)
            full = pf.check_journal(journal, max_findings=max_findings)
            assert _comparable(resumed) == _comparable(full)
            assert resumed.ok == full.ok
    entry = _entry(states, journal)
    # The verified prefix ends after the last newline: a last line without one is read again.
    assert entry["offset"] == data.rfind(b"\n") + 1
    assert entry["lines"] == data.count(b"\n")
    assert entry["block_size"] == block_size
    assert entry["blocks"] == _blocks(data[: entry["offset"]], block_size)


def test_only_the_appended_bytes_are_checked(backend: _backend.Engine, tmp_path: Path) -> None:
    data = generated(300, 1, chain=True, defects=0)
    half = data.index(b"\n", len(data) // 2) + 1
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(data[:half])
    state = tmp_path / "journal.state"
    first = pf.check_journal(journal, state=state)
    assert first.ok and "resumed" not in first.stats
    with open(journal, "ab") as stream:
        stream.write(data[half:])
    second = pf.check_journal(journal, state=state)
    assert second.stats["resumed"] == {
        "from_line": data[:half].count(b"\n"),
        "from_offset": half,
        "bytes_checked": len(data) - half,
        "bytes_rehashed": half,
    }
    assert _comparable(second) == _comparable(pf.check_journal(journal))
    document = _head(state)
    assert document["format"] == STATE_FORMAT
    assert list(document["journals"]) == [os.path.realpath(journal)]


def test_both_backends_resume_from_each_others_state(tmp_path: Path) -> None:
    data = generated(200, 5, chain=True, defects=4)
    cut = len(data) // 3
    journal = tmp_path / "events.jsonl"
    for first, second in (("rust", "python"), ("python", "rust")):
        journal.write_bytes(data[:cut])
        states = pf.JournalStates()
        with _backend.selected(first):
            pf.check_journal(journal, state=states)
            saved = states.entry(os.path.realpath(journal))
        with open(journal, "ab") as stream:
            stream.write(data[cut:])
        with _backend.selected(second):
            resumed = pf.check_journal(journal, state=states)
            assert "resumed" in resumed.stats
            assert _comparable(resumed) == _comparable(pf.check_journal(journal))
        with _backend.selected(first):
            # The engines' states are the same data, not just states each can read.
            states_again = pf.JournalStates()
            journal.write_bytes(data[:cut])
            pf.check_journal(journal, state=states_again)
        with _backend.selected(second):
            states_other = pf.JournalStates()
            pf.check_journal(journal, state=states_other)
        key = os.path.realpath(journal)
        assert saved is not None
        mine, theirs = states_again.entry(key), states_other.entry(key)
        assert mine is not None and theirs is not None
        assert json.loads(mine["checker"]) == json.loads(theirs["checker"])


def _verified(tmp_path: Path, data: bytes) -> tuple[Path, pf.JournalStates]:
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(data)
    states = pf.JournalStates()
    pf.check_journal(journal, state=states)
    return journal, states


def _edits(data: bytes) -> dict[str, Any]:
    middle = data.index(b"\n", len(data) // 2)
    return {
        "byte flipped": lambda path: path.write_bytes(
            data[: middle - 5] + bytes([data[middle - 5] ^ 1]) + data[middle - 4 :]
        ),
        "truncated": lambda path: path.write_bytes(data[: middle + 1]),
        # Rotated: the old file lives on under another name, the path is a new file.
        "replaced": lambda path: (path.rename(path.with_suffix(".1")), path.write_bytes(data)),
    }


@pytest.mark.parametrize("edit", ["byte flipped", "truncated", "replaced"])
def test_a_changed_prefix_is_an_error_and_a_full_check(
    backend: _backend.Engine, tmp_path: Path, edit: str
) -> None:
    data = generated(120, 2, chain=False, defects=0)
    journal, states = _verified(tmp_path, data)
    _edits(data)[edit](journal)
    report = pf.check_journal(journal, state=states)
    assert report.findings[0].code == VERIFIED_PREFIX_CHANGED
    assert report.findings[0].severity == "error"
    lines = data.count(b"\n")
    assert f"the first {len(data)} bytes ({lines} lines)" in report.findings[0].message
    assert not report.ok
    assert "resumed" not in report.stats
    full = pf.check_journal(journal)
    assert [f.to_dict() for f in report.findings[1:]] == [f.to_dict() for f in full.findings]
    # The state now holds the file as it is: the next run resumes without complaint.
    again = pf.check_journal(journal, state=states)
    assert again.stats["resumed"]["from_offset"] == journal.stat().st_size
    assert _comparable(again) == _comparable(full)


def test_changed_options_are_a_note_and_a_full_check(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    data = generated(80, 3, chain=True, defects=2)
    journal, states = _verified(tmp_path, data)
    report = pf.check_journal(journal, state=states, profile="car-compatible")
    assert report.findings[0].code == STATE_OPTIONS_CHANGED
    assert report.findings[0].severity == "info"
    assert "profile" in report.findings[0].message
    full = pf.check_journal(journal, profile="car-compatible")
    assert [f.to_dict() for f in report.findings[1:]] == [f.to_dict() for f in full.findings]
    assert report.stats["errors"] == full.stats["errors"]


def test_a_state_recorded_under_earlier_rules_is_checked_in_full(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    """A state written before PF320 and PF322 were retired (no `rules` in its options, open runs
    as (id, line, cancellation requested)) would resume with findings a fresh check no longer
    gives: it is checked in full, with a note naming the rules, and recorded anew."""
    data = generated(80, 3, chain=True, defects=2)
    journal, states = _verified(tmp_path, data)
    entry = _entry(states, journal)
    del entry["options"]["rules"]
    earlier = json.loads(entry["checker"])
    earlier["runs"] = [[run_id, line, False] for run_id, line in earlier["runs"]]
    entry["checker"] = json.dumps(earlier)
    report = pf.check_journal(journal, state=states)
    assert report.findings[0].code == STATE_OPTIONS_CHANGED
    assert "(rules)" in report.findings[0].message
    full = pf.check_journal(journal)
    assert [f.to_dict() for f in report.findings[1:]] == [f.to_dict() for f in full.findings]
    assert pf.check_journal(journal, state=states).stats["resumed"]["bytes_checked"] == 0


def test_an_interrupted_check_saves_nothing(
    backend: _backend.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = generated(3000, 4, chain=True, defects=0)
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(data)
    state = tmp_path / "journal.state"
    read = HashingReader.read

    def interrupted(self: HashingReader, size: int = -1) -> bytes:
        if self.read_bytes > 0:
            raise KeyboardInterrupt
        return read(self, min(size, 4096))

    monkeypatch.setattr(HashingReader, "read", interrupted)
    with pytest.raises(JournalInterrupted):
        pf.check_journal(journal, state=state)
    monkeypatch.undo()
    assert pf.JournalStates.load(state).journals() == []


def test_a_state_file_keeps_its_permissions(backend: _backend.Engine, tmp_path: Path) -> None:
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(generated(20, 6, chain=False, defects=0))
    state = tmp_path / "journal.state"
    pf.check_journal(journal, state=state)
    state.chmod(0o600)
    pf.check_journal(journal, state=state)
    assert stat.S_IMODE(state.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"{not json", "not JSON"),
        (b"[]", "not a pairling-fast journal state file"),
        (
            json.dumps({"format": STATE_FORMAT, "version": 99, "journals": {}}).encode(),
            "journal state version 99",
        ),
        (
            # Version 1 (before the windows were written once) is not read: delete it.
            json.dumps({"format": STATE_FORMAT, "version": 1, "journals": {}}).encode(),
            "journal state version 1, this pairling-fast reads versions 2, 3, 4, 5 and 6; "
            "delete it",
        ),
        (
            json.dumps(
                {"format": STATE_FORMAT, "version": STATE_VERSION, "sha256": "0", "journals": {}}
            ).encode(),
            "damaged",
        ),
    ],
)
def test_an_unusable_state_file_is_one_line_and_exit_2(
    backend: _backend.Engine, tmp_path: Path, content: bytes, said: str
) -> None:
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(generated(20, 6, chain=False, defects=0))
    state = tmp_path / "journal.state"
    state.write_bytes(content)
    with pytest.raises(pf.JournalStateError, match=said):
        pf.check_journal(journal, state=state)
    done = Cli(_backend.active_name(), tmp_path)("check", str(journal), "--state", str(state))
    assert done.returncode == 2
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert state.read_bytes() == content  # never overwritten


def test_the_state_digest_holds_over_its_head_and_its_sections(tmp_path: Path) -> None:
    # `save` writes the head line and each engine state as raw bytes after it; the sha256 covers
    # every byte after itself, so damage to an entry or to an engine state is caught.
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(generated(60, 8, chain=True, defects=2))
    state = tmp_path / "journal.state"
    first = pf.check_journal(journal, state=str(state))
    saved = state.read_bytes()
    sections = saved.split(b"\n", 1)[1]
    entry = next(iter(_head(state)["journals"].values()))
    assert "checker" not in entry and entry["checker_bytes"] == len(sections) > 0
    assert json.loads(sections)["lines"] == first.stats["lines"]
    assert (
        pf.check_journal(journal, state=str(state)).stats["resumed"]["from_line"]
        == (first.stats["lines"])
    )
    for damaged in (
        saved.replace(b'"lines":', b'"lines":9', 1),
        saved[:-2] + b"9" + saved[-1:],
        saved + b" ",
        saved.replace(b'"checker_bytes":', b'"checker_bytes":1', 1),
    ):
        state.write_bytes(damaged)
        with pytest.raises(pf.JournalStateError, match="damaged"):
            pf.JournalStates.load(state)


def test_the_cli_resumes_and_records_only_journals(
    backend: _backend.Engine, tmp_path: Path
) -> None:
    cli = Cli(_backend.active_name(), tmp_path)
    data = generated(100, 8, chain=True, defects=0)
    half = data.index(b"\n", len(data) // 2) + 1
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_bytes(data[:half])
    (tmp_path / "logs" / "b.jsonl").write_bytes(data)
    (tmp_path / "logs" / "good.tools.cancel.result.json").write_text('{"cancelled": true}\n')
    first = cli("check", "logs", "--state", "s.json", "--format", "json")
    assert first.returncode == 0, first.stderr
    document = _head(tmp_path / "s.json")
    assert sorted(document["journals"]) == sorted(
        os.path.realpath(tmp_path / "logs" / name) for name in ("a.jsonl", "b.jsonl")
    )
    with open(tmp_path / "logs" / "a.jsonl", "ab") as stream:
        stream.write(data[half:])
    second = cli("check", "logs", "--state", "s.json", "--format", "json")
    assert second.returncode == 0, second.stderr
    files = {Path(f["path"]).name: f for f in json.loads(second.stdout)["files"]}
    assert files["a.jsonl"]["stats"]["resumed"]["from_offset"] > 0
    assert files["b.jsonl"]["stats"]["resumed"]["bytes_checked"] == 0
    (tmp_path / "pairling-fast.toml").write_text('state = "from-config.json"\n')
    assert cli("check", "logs").returncode == 0
    assert (tmp_path / "from-config.json").exists()


def test_state_is_refused_with_dask(backend: _backend.Engine, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(generated(20, 6, chain=False, defects=0))
    done = Cli(_backend.active_name(), tmp_path)(
        "check", str(journal), "--state", "s.json", "--dask", "local:1"
    )
    assert done.returncode == 2
    assert "--state cannot be used with --dask" in done.stderr
    assert not (tmp_path / "s.json").exists()


def test_state_needs_a_path(backend: _backend.Engine, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="path"):
        pf.check_journal(b"{}\n", state=pf.JournalStates())


def test_an_ended_action_that_no_kind_ends_is_refused_by_both_backends(tmp_path: Path) -> None:
    # A state whose sha256 holds but whose ended-action window records a kind that does not end
    # an action (no engine writes one): each backend refuses it rather than resuming from it.
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(generated(200, 8, chain=True, defects=0))
    state = tmp_path / "journal.state"
    pf.check_journal(journal, state=str(state))
    states = pf.JournalStates.load(state)
    entry = _entry(states, journal)
    checker = json.loads(entry["checker"])
    assert checker["ended_actions"]["values"], "the journal must end some actions"
    checker["ended_actions"]["values"][0] = "action_executing"
    entry["checker"] = json.dumps(checker)
    states.save(state)
    for engine in ("rust", "python"):
        with (
            _backend.selected(engine),
            pytest.raises(pf.JournalStateError, match="does not end an action"),
        ):
            pf.check_journal(journal, state=str(state))


def _flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1 :]


def _located(report: pf.Report, start: int, end: int, block: dict[str, Any]) -> None:
    """``report`` opens with a PF345 naming the block of bytes ``start``..``end`` (inclusive)."""
    assert report.findings[0].code == VERIFIED_PREFIX_CHANGED
    assert (
        f"the first change is in the bytes at offsets {start} to {end} (lines "
        f"{block['first_line']} to {block['last_line']})"
    ) in report.findings[0].message


@pytest.mark.parametrize("prefix", ["a block", "a block and a byte", "a block but a byte", "empty"])
def test_blocks_at_their_boundaries(
    backend: _backend.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: str
) -> None:
    data = generated(40, 11, chain=True, defects=0)
    cut = 0 if prefix == "empty" else data.index(b"\n", len(data) // 2) + 1
    size = {"a block": cut, "a block and a byte": cut - 1, "a block but a byte": cut + 1}.get(
        prefix, 100
    )
    monkeypatch.setattr(journal_state, "BLOCK_SIZE", size)
    journal, states = _verified(tmp_path, data[:cut])
    assert _entry(states, journal)["blocks"] == _blocks(data[:cut], size)
    with open(journal, "ab") as stream:
        stream.write(data[cut:])
    resumed = pf.check_journal(journal, state=states)
    assert resumed.stats["resumed"]["from_offset"] == cut
    assert _comparable(resumed) == _comparable(pf.check_journal(journal))
    assert _entry(states, journal)["blocks"] == _blocks(data, size)
    if cut:
        # The prefix's last byte (its last newline) is in its last block.
        journal.write_bytes(data[:cut])
        states = _verified(tmp_path, data[:cut])[1]
        journal.write_bytes(_flipped(data, cut - 1))
        start = (cut - 1) // size * size
        last = _blocks(data[:cut], size)[-1]
        _located(pf.check_journal(journal, state=states), start, cut - 1, last)


def test_a_change_is_located_in_the_first_changed_block(
    backend: _backend.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = 512
    monkeypatch.setattr(journal_state, "BLOCK_SIZE", size)
    data = generated(150, 12, chain=False, defects=0)
    blocks = _blocks(data, size)
    for index in (0, 1, len(blocks) // 2, len(blocks) - 1):
        journal, states = _verified(tmp_path, data)
        start = index * size
        # A byte in the middle of block `index`, and one in the last block: the first is named.
        changed = _flipped(data, min(start + size // 2, len(data) - 2))
        changed = _flipped(changed, len(data) - 2) if index < len(blocks) - 1 else changed
        journal.write_bytes(changed)
        report = pf.check_journal(journal, state=states)
        _located(report, start, min(start + size, len(data)) - 1, blocks[index])
        assert [f.to_dict() for f in report.findings[1:]] == [
            f.to_dict() for f in pf.check_journal(journal).findings
        ]


def _saved_as(version: int, state: Path, states: pf.JournalStates) -> None:
    """``states`` written to ``state`` as ``version`` wrote it: one JSON document, each entry
    with one sha256 of its whole prefix (2), a sha256 a block (3) or a BLAKE3 a block (4), the
    engine's state a JSON string in it, the file's sha256 over its journals' canonical text; or
    (5) as this version writes it, but the engine state's findings six-item lists."""
    journals = {}
    for journal in states.journals():
        entry = dict(_entry(states, Path(journal)))
        with open(journal, "rb") as stream:
            prefix = stream.read(entry["offset"])
        checker = json.loads(entry["checker"])
        checker["findings"] = [
            [f[name] for name in ("code", "severity", "message", "line", "pointer")]
            + [f["schema_pointer"]]
            for f in checker["findings"]
        ]
        entry["checker"] = json.dumps(checker)
        if version == 5:
            states.put(journal, entry)
        elif version == 4:
            pass
        elif version == 2:
            del entry["block_size"], entry["blocks"]
            entry["sha256"] = hashlib.sha256(prefix).hexdigest()
        else:
            size = entry["block_size"]
            entry["blocks"] = [
                {**block, "sha256": hashlib.sha256(prefix[i * size : (i + 1) * size]).hexdigest()}
                for i, block in enumerate(entry["blocks"])
            ]
            for block in entry["blocks"]:
                del block["blake3"]
        journals[journal] = entry
    if version == 5:
        states.save(state)
        state.write_bytes(state.read_bytes().replace(b'"version":6,', b'"version":5,', 1))
        return
    text = json.dumps(journals, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    head = json.dumps(
        {"format": STATE_FORMAT, "version": version, "sha256": ""}, separators=(",", ":")
    )
    digest = hashlib.sha256(text.encode()).hexdigest()
    state.write_text(f'{head[:-2]}{digest}","journals":{text}}}\n')


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        (2, "proved the prefix with sha256 (this one uses BLAKE3)"),
        (3, "proved the prefix with sha256 (this one uses BLAKE3)"),
        (4, "(state format 4, this one writes 6)"),
        (5, "(state format 5, this one writes 6)"),
    ],
)
def test_an_earlier_state_is_checked_in_full_once_with_the_reason(
    backend: _backend.Engine, tmp_path: Path, version: int, reason: str
) -> None:
    """The states before version 4 proved the prefix with sha256, version 4 wrote the engine's
    state as a JSON string inside the JSON, version 5 its findings as six-item lists: their
    journals are checked in full (a PF346 note says why), then recorded as version 6 and resumed
    from."""
    data = generated(200, 13, chain=True, defects=2)
    half = data.index(b"\n", len(data) // 2) + 1
    growing, kept = (tmp_path / f"{name}.jsonl" for name in ("growing", "kept"))
    growing.write_bytes(data[:half])
    kept.write_bytes(data)
    states = pf.JournalStates()
    for journal in (growing, kept):
        pf.check_journal(journal, state=states)
    state = tmp_path / "journal.state"
    _saved_as(version, state, states)
    with open(growing, "ab") as stream:
        stream.write(data[half:])
    full = pf.check_journal(growing, state=state)
    assert "resumed" not in full.stats
    assert full.findings[0].code == STATE_OPTIONS_CHANGED
    assert reason in full.findings[0].message
    assert [f.to_dict() for f in full.findings[1:]] == [
        f.to_dict() for f in pf.check_journal(growing).findings
    ]
    document = _head(state)
    assert document["version"] == STATE_VERSION == 6
    recorded = document["journals"]
    assert recorded[os.path.realpath(growing)]["blocks"] == _blocks(data, BLOCK_SIZE)
    assert "recorded_in_version" not in recorded[os.path.realpath(growing)]
    # A journal not checked since keeps its old entry in the version 6 file until its next run,
    # marked with the version it came from.
    assert recorded[os.path.realpath(kept)]["recorded_in_version"] == version
    assert pf.check_journal(kept, state=state).findings[0].code == STATE_OPTIONS_CHANGED
    assert pf.check_journal(growing, state=state).stats["resumed"]["bytes_checked"] == 0


@pytest.mark.parametrize("edit", [None, "byte flipped"])
def test_parallel_verification_equals_serial(
    backend: _backend.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str | None
) -> None:
    """One worker, four, and four taking turns to read (where ``os.preadv`` is missing): the
    same reports and the same entries."""
    monkeypatch.setattr(journal_state, "BLOCK_SIZE", 256)
    data = generated(120, 14, chain=True, defects=1)
    half = data.index(b"\n", len(data) // 2) + 1
    reports, entries = [], []
    for workers, preadv in ((1, True), (4, True), (4, False)):
        with monkeypatch.context() as patched:
            patched.setattr(journal_state, "_workers", lambda workers=workers: workers)
            if not preadv:
                patched.delattr(os, "preadv")
            journal, states = _verified(tmp_path, data[:half])
            journal.write_bytes(data if edit is None else _flipped(data, half // 2))
            report = pf.check_journal(journal, state=states)
            reports.append(([f.to_dict() for f in report.findings], report.stats))
            entries.append(_entry(states, journal))
    assert reports == [reports[0]] * 3
    assert entries == [entries[0]] * 3
    assert ("resumed" in reports[0][1]) == (edit is None)


def test_an_interrupted_rehash_records_nothing(
    backend: _backend.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal_state, "BLOCK_SIZE", 256)
    journal = tmp_path / "events.jsonl"
    journal.write_bytes(generated(60, 15, chain=True, defects=0))
    state = tmp_path / "journal.state"
    pf.check_journal(journal, state=state)
    saved = state.read_bytes()
    hash_range = _prefix_hash.hash_range

    def interrupted(stream: Any, start: int, length: int) -> Any:
        if start == 2 * 256:
            raise KeyboardInterrupt
        return hash_range(stream, start, length)

    monkeypatch.setattr(_prefix_hash, "hash_range", interrupted)
    with open(journal, "ab") as stream:
        stream.write(b"{}\n")
    with pytest.raises(KeyboardInterrupt):
        pf.check_journal(journal, state=state)
    assert state.read_bytes() == saved


@pytest.mark.parametrize(
    "damage",
    [
        lambda entry: entry["blocks"].append(entry["blocks"][0]),  # more blocks than the prefix
        lambda entry: entry.update(block_size=0),
        lambda entry: entry["blocks"][0].update(first_line="1"),
        lambda entry: entry.pop("blocks"),  # neither layout
    ],
)
def test_an_entry_with_blocks_that_do_not_fit_is_malformed(
    backend: _backend.Engine, tmp_path: Path, damage: Any
) -> None:
    journal, states = _verified(tmp_path, generated(30, 16, chain=False, defects=0))
    damage(_entry(states, journal))
    with pytest.raises(pf.JournalStateError, match="its entry in the state file is malformed"):
        pf.check_journal(journal, state=states)
