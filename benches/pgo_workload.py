"""The workload the release wheel's profile-guided build is trained on (scripts/pgo-profile,
docs/release.md): the three ways users run pairling_fast, on the data the benchmarks use, run
once against an instrumented core so that the optimizer learns which branches real documents
take.

    python benches/pgo_workload.py [--scale 1.0]

1. Journals at rest: a CAR-shaped chained journal (CAR's fixture journal repeated with fresh
   ids, as benches/pipeline.py builds it), a generated chained one, and a generated unchained
   one with planted defects, each checked whole, incrementally (``JournalStream``, in pieces)
   and through ``check_paths``.
2. Documents in a pipeline: the rows of benches/pipeline.py, on Python objects and on JSON text,
   one by one and in batches.
3. Everything else ``check`` reads: the bundled examples (maps, an RPC result, a transcript, a
   tampered journal) and a generated capability map.

Defects are a small share, as in real data: a profile dominated by error paths would make the
common path the cold one. Run it with the installed package (not the source tree).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from pipeline import (
    EVENT_SCHEMA_ID,
    MAP,
    ROOT,
    RPC_RESULT,
    RPC_SCHEMA_ID,
    events,
    map_part_schema,
    write_car_journal,
)

import pairling_fast as pf
from pairling_fast.generate.journal import write_journal
from pairling_fast.generate.map import generate_map


def journals(directory: Path, scale: float) -> list[Path]:
    count = int(40_000 * scale)
    car = directory / "car.jsonl"
    write_car_journal(car, count)
    generated = directory / "generated.jsonl"
    with generated.open("wb") as out:
        write_journal(out, count, seed=7, chain=True)
    defective = directory / "defective.jsonl"
    with defective.open("wb") as out:
        write_journal(out, count // 4, seed=8, defects=count // 400)
    return [car, generated, defective]


def check_journals(paths: list[Path]) -> None:
    for path in paths:
        pf.check_journal(path)
        stream = pf.JournalStream(name=path.name)
        data = path.read_bytes()
        for start in range(0, len(data), 1 << 16):
            stream.feed(data[start : start + (1 << 16)])
        stream.close()
    pf.check_paths([str(path) for path in paths])


def pipeline(scale: float) -> None:
    data = events(int(20_000 * scale))
    lines = [json.dumps(event).encode() for event in data]
    event = pf.schema_validator(EVENT_SCHEMA_ID)
    for validator in (event, pf.Validator({}), pf.Validator({"type": "object"})):
        for document in data:
            validator.is_valid(document)
        validator.is_valid_many(data)
    for document in data[:5_000]:
        list(event.iter_errors(document))
        event.validate(document)
    for line in lines:
        event.is_valid_json(line)
        event.validate_json(line)
    event.iter_errors_many(data)
    for document in data:
        pf.digest_hex(document)
    for document in data[:5_000]:
        pf.digest(document)
        pf.canonicalize(document)
    pf.digest_hex_many(data)
    rpc = json.loads(RPC_RESULT.read_text())
    rpc_validator = pf.schema_validator(RPC_SCHEMA_ID)
    part = pf.Validator(map_part_schema())
    capabilities = json.loads(MAP.read_text())["capabilities"]
    for _ in range(int(200 * scale)):
        rpc_validator.is_valid(rpc)
        for capability in capabilities:
            part.is_valid(capability)


def documents(directory: Path, scale: float) -> None:
    generated = directory / "map.json"
    generated.write_text(json.dumps(generate_map(int(2_000 * scale), seed=3)))
    pf.check_paths([str(ROOT / "examples"), str(generated)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="work done, relative")
    args = parser.parse_args()
    if pf.backend != "rust":
        print("pgo_workload: the Rust core is not loaded; nothing to train", file=sys.stderr)
        return 1
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pairling-pgo-") as directory:
        check_journals(journals(Path(directory), args.scale))
        pipeline(args.scale)
        documents(Path(directory), args.scale)
    print(f"pgo_workload: done in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
