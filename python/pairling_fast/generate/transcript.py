"""Realistic, valid CAR JSON-RPC 2.0 transcripts (JSONL) for tests and benchmarks.

A session opens with ``server.handshake``, ``server.schema`` and a ``models.catalog_snapshot``,
then mixes tool registration and polling, ``state.*``, ``infer`` (pinned to the snapshot's rows),
``capabilities.list`` and notifications, with several requests in flight answered out of order.
Every result matches its bundled schema and the semantic checks, so ``check_transcript`` on a
generated transcript reports nothing. The same ``(messages, seed)`` always gives the same bytes.

CLI: ``python -m pairling_fast generate transcript --messages N --seed S [-o FILE]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

from .._bundled import schema_files
from ..canonical import digest_hex

__all__ = ["add_arguments", "generate_transcript", "run", "write_transcript"]

MAX_IN_FLIGHT = 6
# The CAR release a generated session speaks: its handshake names it and its `server.schema`
# digests that release's bundled wire schema, so the checker picks that bundle.
CAR_VERSION = "0.58.0"
WIRE_SCHEMA_FILE = f"car-wire-schema.{CAR_VERSION}.json"
TOOL_NAMES = ("read_file", "run_tests", "grep", "apply_patch", "web_fetch", "list_dir")
STATE_KEYS = ("plan", "cursor", "branch", "last_test_run", "open_files", "budget")
ROLES = ("agent", "owner", "operator", "host")


def _remote_model(
    model_id: str, name: str, family: str, provider: str, context: int, price: tuple[float, float]
) -> dict[str, Any]:
    return {
        "capabilities": ["generate", "code", "reasoning", "tool_use", "multi_tool_call"],
        "context_length": context,
        "cost": {
            "cache_read_input_per_mtok": round(price[0] / 10, 4),
            "cache_write_input_per_mtok": round(price[0] * 1.25, 4),
            "input_per_mtok": price[0],
            "output_per_mtok": price[1],
            "pricing_tiers": [],
            "ram_mb": None,
            "size_mb": None,
        },
        "deprecated": False,
        "family": family,
        "id": model_id,
        "max_output_tokens": 32000,
        "name": name,
        "param_count": "undisclosed",
        "performance": {"latency_p50_ms": 850, "latency_p99_ms": 5200, "tokens_per_second": 71.5},
        "provider": provider,
        "public_benchmarks": [
            {
                "harness": "swe-bench-verified",
                "measured_at": "2025-09-30",
                "name": "SWE-bench Verified",
                "runs": 3,
                "score": 70.4,
                "source_url": None,
                "spread": 0.018,
            }
        ],
        "quantization": None,
        "source": {
            "api_key_env": f"{provider.upper()}_API_KEY",
            "api_key_envs": [f"{provider.upper()}_API_KEY"],
            "api_version": None,
            "endpoint": f"https://api.{provider}.example/v1",
            "protocol": "open_ai_compat",
            "type": "remote_api",
        },
        "supported_params": ["temperature", "top_p", "max_tokens", "stop_sequences", "seed"],
        "tags": ["remote", family],
        "trust_tier": "curated",
        "version": "2025-09",
    }


def _local_model(model_id: str, name: str, family: str, params: str) -> dict[str, Any]:
    return {
        "capabilities": ["generate", "code", "summarize"],
        "context_length": 32768,
        "cost": {
            "cache_read_input_per_mtok": None,
            "cache_write_input_per_mtok": None,
            "input_per_mtok": 0.0,
            "output_per_mtok": 0.0,
            "pricing_tiers": [],
            "ram_mb": 9800,
            "size_mb": 8650,
        },
        "deprecated": False,
        "family": family,
        "id": model_id,
        "max_output_tokens": 8192,
        "name": name,
        "param_count": params,
        "performance": {"latency_p50_ms": 120, "latency_p99_ms": 900, "tokens_per_second": 38.25},
        "provider": "local",
        "public_benchmarks": [],
        "quantization": "Q4_K_M",
        "source": {
            "hf_repo": f"example-org/{name.replace(' ', '-')}-mlx",
            "hf_weight_file": None,
            "type": "mlx",
        },
        "supported_params": ["temperature", "top_p", "top_k", "max_tokens", "seed"],
        "tags": ["local", "on-device"],
        "trust_tier": "community",
        "version": "1",
    }


def catalog_snapshot() -> dict[str, Any]:
    """A small catalog snapshot sorted by id (UTF-16 order; the ids here are ASCII), each row
    digested as sha256(JCS(model)) and the whole as sha256(JCS(rows)), as car-inference's
    catalog_identity.rs does."""
    models = [
        _local_model("local/qwen2.5-coder-14b-q4", "Qwen2.5 Coder 14B", "qwen", "14B"),
        _remote_model(
            "remote/acme-large@2025-09", "Acme Large", "acme", "acme", 200000, (3.0, 15.0)
        ),
        _remote_model("remote/acme-mini@2025-07", "Acme Mini", "acme", "acme", 128000, (0.25, 2.0)),
        _remote_model(
            "remote/orbit-pro@2025-08", "Orbit Pro", "orbit", "orbit", 1000000, (1.25, 10.0)
        ),
    ]
    models.sort(key=lambda model: str(model["id"]))
    rows = [{"model": model, "row_digest": digest_hex(model)} for model in models]
    return {"catalog_revision": digest_hex(rows), "models": rows}


def _tool_schema(name: str, rng: random.Random) -> dict[str, Any]:
    return {
        "name": name,
        "source": rng.choice(("builtin", "user_defined", "mcp")),
        "description": f"{name.replace('_', ' ').capitalize()} in the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
        "idempotent": name in ("read_file", "grep", "list_dir"),
        "cache_ttl_secs": 30 if name == "read_file" else None,
        "rate_limit": {"interval_secs": 1.5, "max_calls": 10} if name == "web_fetch" else None,
    }


Exchange = tuple[str, Any, Any]
"""(method, params, result)"""


class _Session:
    """The daemon-side state a realistic session keeps consistent across calls."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.tools: dict[str, dict[str, Any]] = {}
        self.state: dict[str, Any] = {}
        self.snapshot = catalog_snapshot()
        self.handle_counter = 0
        self.trace_counter = 0

    def opening(self) -> list[Exchange]:
        handshake = {
            "assistant_aliases": ["car"],
            "assistant_brand": "CAR",
            "assistant_name": "car",
            "client_protocol_version": 3,
            "client_version": "car-cli/0.42.3",
            "negotiated_capabilities": ["tools.stream", "state", "infer"],
            "protocol_version": 3,
            "server_version": CAR_VERSION,
        }
        hello = {"client_version": "car-cli/0.42.3", "protocol_version": 3}
        # The bundle as shipped: its exact bytes are what `server.schema` digests.
        bundle = (schema_files() / WIRE_SCHEMA_FILE).read_bytes()
        schema = {
            "car_version": CAR_VERSION,
            "digest": hashlib.sha256(bundle).hexdigest(),
            "digest_algorithm": "sha256",
            "schema": json.loads(bundle),
        }
        return [
            ("server.handshake", hello, handshake),
            ("server.schema", {}, schema),
            ("models.catalog_snapshot", {}, self.snapshot),
        ]

    def register(self) -> Exchange:
        name = self.rng.choice(TOOL_NAMES)
        self.tools[name] = _tool_schema(name, self.rng)
        return ("tools.register", self.tools[name], len(self.tools))

    def list_tools(self) -> Exchange:
        tools = list(self.tools.values())
        return ("tools.list", {}, {"count": len(tools), "tools": tools})

    def unregister(self) -> Exchange:
        name = self.rng.choice(TOOL_NAMES)
        removed = 1 if self.tools.pop(name, None) is not None else 0
        return ("tools.unregister", {"name": name}, {"removed": removed, "unregistered": name})

    def poll(self) -> Exchange:
        self.handle_counter += 1
        handle = f"h-{self.handle_counter:05d}"
        status = self.rng.choice(("running", "succeeded", "failed", "succeeded"))
        chunks: list[dict[str, Any]] = [
            {"kind": "progress", "fraction": 0.5, "message": "halfway"},
            {"kind": "text", "text": "collected 12 items\n"},
        ]
        result: dict[str, Any] = {
            "handle": handle,
            "tool": self.rng.choice(TOOL_NAMES),
            "action_id": f"act-{self.handle_counter:05d}",
            "status": status,
            "chunks": chunks,
            "dropped_chunks": 0,
        }
        if status == "succeeded":
            chunks.append({"kind": "done", "result": {"passed": 12, "failed": 0}})
            result["result"] = {"passed": 12, "failed": 0}
        elif status == "failed":
            chunks.append({"kind": "error", "message": "exit status 2"})
            result["error"] = "exit status 2"
        return ("tools.poll", {"handle": handle}, result)

    def subscribe(self) -> Exchange:
        return ("tools.stream.subscribe", {"handle": "*"}, {"subscribed": True})

    def cancel(self) -> Exchange:
        return ("tools.cancel", {"handle": f"h-{self.handle_counter:05d}"}, {"cancelled": True})

    def set_state(self) -> Exchange:
        key = self.rng.choice(STATE_KEYS)
        value = {"step": self.rng.randrange(1, 40), "note": f"working on {key}"}
        self.state[key] = value
        return ("state.set", {"key": key, "value": value}, "ok")

    def get_state(self) -> Exchange:
        key = self.rng.choice(STATE_KEYS)
        return ("state.get", {"key": key}, self.state.get(key))

    def state_exists(self) -> Exchange:
        key = self.rng.choice(STATE_KEYS)
        return ("state.exists", {"key": key}, key in self.state)

    def state_keys(self) -> Exchange:
        return ("state.keys", {}, sorted(self.state))

    def state_snapshot(self) -> Exchange:
        return ("state.snapshot", {}, dict(self.state))

    def infer(self) -> Exchange:
        row = self.rng.choice(self.snapshot["models"])
        model = row["model"]
        self.trace_counter += 1
        prompt = self.rng.randrange(200, 6000)
        completion = self.rng.randrange(20, 900)
        result = {
            "text": "The failing test expects a sorted list; sort before comparing.",
            "tool_calls": [],
            "trace_id": f"trace-{self.trace_counter:06d}",
            "model_used": model["id"],
            "requested_model_id": model["id"],
            "resolved_model_id": model["id"],
            "row_digest": row["row_digest"],
            "catalog_revision": self.snapshot["catalog_revision"],
            "latency_ms": self.rng.randrange(80, 4000),
            "time_to_first_token_ms": None,
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "context_window": model["context_length"],
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
            "stop_reason": "end_turn",
        }
        params = {"model_id": model["id"], "prompt": "Why does test_sort fail?"}
        return ("infer", params, result)

    def capabilities(self) -> Exchange:
        methods = [
            {"method": method, "role": self.rng.choice(ROLES)}
            for method in ("infer", "state.get", "state.set", "tools.list", "tools.poll")
        ]
        result = {"caller_role": "owner", "count": len(methods), "methods": methods}
        return ("capabilities.list", {}, result)


def _exchange_makers(session: _Session) -> list[Callable[[], Exchange]]:
    return [
        session.register,
        session.register,
        session.list_tools,
        session.unregister,
        session.poll,
        session.poll,
        session.subscribe,
        session.cancel,
        session.set_state,
        session.set_state,
        session.get_state,
        session.state_exists,
        session.state_keys,
        session.state_snapshot,
        session.infer,
        session.infer,
        session.capabilities,
    ]


def _line(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def generate_transcript(messages: int, seed: int) -> Iterator[str]:
    """``messages`` JSONL lines (without line ends) of a valid session, the same for one seed."""
    rng = random.Random(seed)
    session = _Session(rng)
    makers = _exchange_makers(session)
    in_flight: list[tuple[int, Any]] = []
    opening = session.opening()
    next_id = 1
    remaining = messages
    while remaining > 0:
        answer_now = in_flight and (
            len(in_flight) >= MAX_IN_FLIGHT or remaining <= len(in_flight) or rng.random() < 0.5
        )
        if answer_now:
            request_id, result = in_flight.pop(rng.randrange(len(in_flight)))
            yield _line({"jsonrpc": "2.0", "id": request_id, "result": result})
        elif remaining - len(in_flight) < 2 or (not opening and rng.random() < 0.05):
            # A notification needs no answer: it fills an odd count without leaving a request open.
            chunk = {"handle": f"h-{session.handle_counter:05d}", "seq": next_id}
            yield _line({"jsonrpc": "2.0", "method": "tools.stream.chunk", "params": chunk})
        else:
            method, params, result = opening.pop(0) if opening else rng.choice(makers)()
            yield _line({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
            in_flight.append((next_id, result))
            next_id += 1
        remaining -= 1


def write_transcript(stream: IO[str], messages: int, seed: int) -> int:
    """Write a generated transcript to ``stream``; returns the number of lines written."""
    written = 0
    for line in generate_transcript(messages, seed):
        stream.write(line + "\n")
        written += 1
    return written


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--messages", type=int, default=1000, help="lines to write (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "-o", "--output", default=None, help="file to write (default: standard output)"
    )


def run(args: argparse.Namespace) -> int:
    if args.messages < 0:
        print("generate transcript: --messages must not be negative", file=sys.stderr)
        return 2
    output: str | None = args.output
    if output is None:
        write_transcript(sys.stdout, args.messages, args.seed)
    else:
        with open(output, "w", encoding="utf-8", newline="\n") as stream:
            write_transcript(stream, args.messages, args.seed)
    return 0
