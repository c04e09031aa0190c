"""`import pairling_fast` in a pipeline against what a pipeline author would otherwise write
(issue #29): per-document validation and digests on Python objects, ``validate_json`` on bytes,
and the batch calls, each row timed against its anchor in one process on the same data.

    python benches/pipeline.py [--events 200000] [--repeat 3] [--json out.json]

The data is CAR's fixture journal (tests/data/car/native-car-doctor.events.jsonl) repeated with
fresh ``action_id``s. ``{}`` isolates getting a Python document into the core (no schema work
at all), so its row is the conversion cost; the other rows are conversion plus validation.
benches/compare.py runs the same rows (``pipeline_rows``) in its report.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pairling_fast as pf
from pairling_fast import schemas

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests/data/car/native-car-doctor.events.jsonl"
RPC_RESULT = ROOT / "tests/data/car/car-server-core-0.58.0.host.capabilities.list.result.json"
MAP = ROOT / "examples/maps/capability-map.json"
EVENT_SCHEMA_ID = "car.journal.event"
RPC_SCHEMA_ID = "car.rpc.capabilities.list.result"
MAP_SCHEMA_ID = "pairling.capability-map.2.0.0"


@dataclass
class Row:
    operation: str
    ours: float
    anchor_name: str
    anchor: float
    target: float
    items: int

    @property
    def ratio(self) -> float:
        return self.anchor / self.ours if self.ours else 0.0

    @property
    def met(self) -> bool:
        return self.ratio >= self.target

    def line(self) -> str:
        rate = self.items / self.ours / 1e6
        anchor_rate = self.items / self.anchor / 1e6
        verdict = "met" if self.met else "MISSED"
        return (
            f"{self.operation:58} {rate:7.3f} M/s | {self.anchor_name:50} "
            f"{anchor_rate:7.3f} M/s | {self.ratio:5.2f}x (target {self.target:.1f}x) {verdict}"
        )


def fresh_events(count: int) -> Iterator[dict[str, Any]]:
    """CAR's fixture journal repeated to `count` events, each copy with fresh action ids."""
    template = [json.loads(line) for line in FIXTURE.read_bytes().splitlines() if line.strip()]
    made = 0
    while made < count:
        fresh: dict[str, str] = {}
        for event in template[: count - made]:
            copy = json.loads(json.dumps(event))
            old = copy.get("action_id")
            if isinstance(old, str):
                copy["action_id"] = fresh.setdefault(old, f"coder-{uuid.uuid4().hex}")
            yield copy
        made += min(len(template), count - made)


def events(count: int) -> list[dict[str, Any]]:
    return list(fresh_events(count))


def write_car_journal(path: Path, count: int) -> None:
    """A CAR-shaped chained journal of `count` events at `path` (the events above, chained as
    CAR chains them)."""
    raw = path.with_name(path.name + ".unchained")
    with raw.open("w", encoding="utf-8") as out:
        for event in fresh_events(count):
            out.write(json.dumps(event, separators=(",", ":")) + "\n")
    pf.chain_journal(raw, path, fsync=False)
    raw.unlink()


def timed(repeat: int, work: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def paired(repeat: int, ours: Callable[[], Any], anchor: Callable[[], Any]) -> tuple[float, float]:
    """Best of `repeat` for each, alternating, so both see the same load."""
    ours_best = anchor_best = float("inf")
    for _ in range(repeat):
        ours_best = min(ours_best, timed(1, ours))
        anchor_best = min(anchor_best, timed(1, anchor))
    return ours_best, anchor_best


def map_part_schema() -> dict[str, Any]:
    """The capability map's `capability` definition, as a schema of its own."""
    document = schemas.schema(MAP_SCHEMA_ID)
    return {
        "$schema": document["$schema"],
        "$defs": document["$defs"],
        "$ref": "#/$defs/capability",
    }


def pipeline_rows(count: int = 200_000, repeat: int = 3) -> list[Row]:
    import jsonschema_rs
    import orjson

    data = events(count)
    lines = [orjson.dumps(event) for event in data]
    rpc = json.loads(RPC_RESULT.read_text())
    rpc_docs = [rpc] * max(1, count // 400)
    capabilities = json.loads(MAP.read_text())["capabilities"]
    map_docs = (capabilities * (count // 20 // max(1, len(capabilities)) + 1))[: count // 20]
    rows: list[Row] = []

    def row(
        operation: str,
        items: int,
        ours: Callable[[], Any],
        anchor_name: str,
        anchor: Callable[[], Any],
        target: float = 1.0,
    ) -> None:
        ours_time, anchor_time = paired(repeat, ours, anchor)
        rows.append(Row(operation, ours_time, anchor_name, anchor_time, target, items))
        print(rows[-1].line(), flush=True)

    def validators(schema: Any, bundled: str | None = None) -> tuple[Any, Any]:
        ours = pf.schema_validator(bundled) if bundled else pf.Validator(schema)
        return ours, jsonschema_rs.validator_for(schema, validate_formats=bundled is not None)

    cases = [
        ("journal event", validators(schemas.schema(EVENT_SCHEMA_ID), EVENT_SCHEMA_ID), data),
        ("RPC result", validators(schemas.schema(RPC_SCHEMA_ID), RPC_SCHEMA_ID), rpc_docs),
        ("capability-map part", validators(map_part_schema()), map_docs),
        ("user schema {}", validators({}), data),
        ('user schema {"type":"object"}', validators({"type": "object"}), data),
    ]
    for label, (ours, theirs), docs in cases:
        assert all(map(ours.is_valid, docs)) == all(map(theirs.is_valid, docs)), label
        row(
            f"{label}: Validator.is_valid(obj)",
            len(docs),
            lambda v=ours, d=docs: [v.is_valid(x) for x in d],
            "jsonschema_rs is_valid",
            lambda v=theirs, d=docs: [v.is_valid(x) for x in d],
        )
    # The `{}` row isolates what each library reads of a document; in a pipeline the document was
    # just parsed, so this row is what a user of an empty or type-only schema gets per line.
    empty_ours, empty_theirs = cases[3][1]
    row(
        "user schema {}: orjson.loads + Validator.is_valid",
        len(lines),
        lambda: [empty_ours.is_valid(orjson.loads(x)) for x in lines],
        "orjson.loads + jsonschema_rs is_valid",
        lambda: [empty_theirs.is_valid(orjson.loads(x)) for x in lines],
    )
    event_ours, event_theirs = cases[0][1]
    row(
        "journal event: Validator.iter_errors(obj)",
        len(data),
        lambda: [list(event_ours.iter_errors(x)) for x in data],
        "jsonschema_rs iter_errors",
        lambda: [list(event_theirs.iter_errors(x)) for x in data],
    )
    row(
        "journal event: Validator.validate(obj)",
        len(data),
        lambda: [event_ours.validate(x) for x in data],
        "jsonschema_rs validate",
        lambda: [event_theirs.validate(x) for x in data],
    )
    # JSON text: the Report validate_json returns, and the bool of is_valid_json, against the
    # bool of what a pipeline would otherwise write.
    for name in ("validate_json", "is_valid_json"):
        text_call = getattr(event_ours, name)
        row(
            f"journal event: Validator.{name}(bytes)",
            len(lines),
            lambda call=text_call: [call(x) for x in lines],
            "orjson.loads + jsonschema_rs is_valid",
            lambda: [event_theirs.is_valid(orjson.loads(x)) for x in lines],
        )
    # A streaming pipeline looks at each Report and lets it go. The rows above keep every result
    # in a list: there each Report, a live object where the anchor keeps a bool, is scanned again
    # by each of CPython's cyclic collections for as long as the list lives.
    row(
        "journal event: Validator.validate_json(bytes).ok, dropped",
        len(lines),
        lambda: sum(1 for x in lines if not event_ours.validate_json(x).ok),
        "orjson.loads + jsonschema_rs is_valid, dropped",
        lambda: sum(1 for x in lines if not event_theirs.is_valid(orjson.loads(x))),
    )
    sort = orjson.OPT_SORT_KEYS
    anchor_digest = "sha256(orjson.dumps(x, OPT_SORT_KEYS))"
    for name, ours_fn, anchor_fn in (
        (
            "digest_hex(obj)",
            pf.digest_hex,
            lambda x: hashlib.sha256(orjson.dumps(x, option=sort)).hexdigest(),
        ),
        (
            "digest(obj)",
            pf.digest,
            lambda x: "sha256:" + hashlib.sha256(orjson.dumps(x, option=sort)).hexdigest(),
        ),
        ("canonicalize(obj)", pf.canonicalize, lambda x: orjson.dumps(x, option=sort)),
    ):
        row(
            f"journal event: {name}",
            len(data),
            lambda f=ours_fn: [f(x) for x in data],
            anchor_digest if name != "canonicalize(obj)" else "orjson.dumps(x, OPT_SORT_KEYS)",
            lambda f=anchor_fn: [f(x) for x in data],
        )
    batch_is_valid = getattr(event_ours, "is_valid_many", None)
    if batch_is_valid is not None:
        row(
            "journal event: Validator.is_valid_many(list)",
            len(data),
            lambda: batch_is_valid(data),
            "loop of Validator.is_valid",
            lambda: [event_ours.is_valid(x) for x in data],
            target=1.5,
        )
        row(
            "journal event: Validator.iter_errors_many(list)",
            len(data),
            lambda: event_ours.iter_errors_many(data),
            "loop of Validator.iter_errors",
            lambda: [list(event_ours.iter_errors(x)) for x in data],
            target=1.5,
        )
    batch_digest = getattr(pf, "digest_hex_many", None)
    if batch_digest is not None:
        row(
            "journal event: digest_hex_many(list)",
            len(data),
            lambda: batch_digest(data),
            "loop of digest_hex",
            lambda: [pf.digest_hex(x) for x in data],
            target=1.5,
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()}, {args.events} events, best of {args.repeat}")
    rows = pipeline_rows(args.events, args.repeat)
    print(f"load average {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
