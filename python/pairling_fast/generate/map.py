"""Large valid capability maps for tests and benchmarks: ``generate map --bindings N --seed S``.

``generate_map`` builds a map that checks clean (no finding at all: schema, Pairling's rules, the
lints and sealed digests) and that Pairling's own validator accepts, with about one provider per
500 bindings, a few implementations and transports per provider, one capability per four
bindings, and one evidence claim per implementation, capability and binding. The same
``(bindings, seed)`` always gives the same map, on either backend.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

from .. import _backend
from .._atomic import write_atomically
from ..maps import dump_map

__all__ = ["add_arguments", "generate_map", "run"]

OPERATIONS = (
    "session.turn.send",
    "session.turn.interrupt",
    "session.transcript.read",
    "session.approval.decide",
    "session.events.subscribe",
    "session.settings.update",
    "provider.session.create",
    "provider.models.list",
)
PLANES = ("receive", "read", "control", "steer")
LIFECYCLES = ("before_turn", "during_turn", "after_turn", "provider_wide")
# Mostly safe, as real maps are; the rest exercise the safety lints' clean paths.
SAFETY = ("safe",) * 6 + ("confirmation", "confirmation", "required_local_only", "do_not_expose")
TRANSPORT_KINDS = ("sdk_subprocess", "acp_stdio", "jsonrpc_stdio", "http_loopback", "cli_process")
LOCAL_ONLY = ("required_local_only", "do_not_expose")
LOCAL_ONLY_REASON = "A local-only bridge; nothing of it is exposed remotely."
NOT_RELEASED_REASON = "A release-pinned, implemented driver for this operation."
EXACT_SESSION = ("provider", "implementation", "binding", "session", "generation")
BINDINGS_PER_PROVIDER = 500
BINDINGS_PER_CAPABILITY = 4


def _evidence_policy() -> dict[str, Any]:
    return {
        "rule": "Every claim cites a direct source.",
        "direct_sources_required": True,
        "missing_evidence_is_unsupported": True,
        "machine_readable_values": [True, False, "qualified"],
        "machine_readable_qualification": "qualified: structured behind a flag",
        "support_values": ["supported", "partial", "missing", "not_applicable"],
        "safety_rule": "do_not_expose is never released; confirmation is confirmed.",
    }


def _claim(claim_id: str, subject_type: str, subject_id: str, source: str) -> dict[str, Any]:
    return {
        "claim_id": claim_id,
        "subject_type": subject_type,
        "subject_id": subject_id,
        "classification": "vendor_surface",
        "assertion": f"{subject_id} is documented.",
        "source_refs": [source],
    }


class _Builder:
    def __init__(self, bindings: int, seed: int) -> None:
        # The map's collections, in the schema's order, are the fallback's table; imported here,
        # when a map is generated, so that the CLI (which registers this generator) does not load
        # the fallback on the Rust core.
        from .._fallback.graph.index import COLLECTIONS

        self.rng = random.Random(seed)
        self.bindings = bindings
        self.document: dict[str, Any] = {
            "$schema": "./coding-agent-remote-control-capability-map.schema.json",
            "schema_version": "2.0.0",
            "observed_at": "2026-01-01T00:00:00Z",
            "evidence_policy": _evidence_policy(),
            **{name: [] for name in COLLECTIONS},
        }
        self.add(
            "exclusions",
            {"item": "Raw terminal input", "reason": "Keystrokes bypass every authority check."},
        )

    def add(self, collection: str, entry: dict[str, Any]) -> None:
        self.document[collection].append(entry)

    def provider(self, number: int, bindings: int) -> None:
        provider = f"agent_{number:04d}"
        source = f"agent-{number:04d}-docs"
        self.add(
            "evidence_sources",
            {
                "source_id": source,
                "uri": f"https://{provider}.example/docs",
                "kind": "official_docs",
            },
        )
        self.add(
            "providers",
            {
                "provider_id": provider,
                "display_name": f"Agent {number}",
                "implementation_eligibility": {
                    "status": "implementation_candidate",
                    "reason": "generated",
                },
                "source_refs": [source],
            },
        )
        implementations = [
            self.implementation(provider, index, source) for index in range(self.rng.randint(1, 3))
        ]
        capability_count = max(1, bindings // BINDINGS_PER_CAPABILITY)
        capabilities = [
            self.capability(provider, index, implementations, source)
            for index in range(capability_count)
        ]
        for index in range(bindings):
            # The first bindings take each capability once, so none is left unbound.
            bound = (
                [capabilities[index]]
                if index < len(capabilities)
                else self.rng.sample(capabilities, min(len(capabilities), self.rng.randint(1, 2)))
            )
            self.binding(provider, index, self.rng.choice(implementations), bound, source)

    def implementation(self, provider: str, index: int, source: str) -> dict[str, Any]:
        implementation_id = f"{provider}.impl_{index}"
        transports = []
        for number in range(self.rng.randint(1, 2)):
            transport_id = f"{implementation_id}.transport_{number}"
            transports.append(transport_id)
            self.add(
                "transports",
                {
                    "transport_id": transport_id,
                    "provider_id": provider,
                    "description": f"transport {number} of {implementation_id}",
                    "kind": self.rng.choice(TRANSPORT_KINDS),
                },
            )
        version = f"{self.rng.randint(0, 9)}.{self.rng.randint(0, 30)}.{index}"
        pinned = self.rng.random() < 0.7
        implementation = {
            "implementation_id": implementation_id,
            "provider_id": provider,
            "identity_status": "release_pinned" if pinned else "observed",
            "provider_version": version,
            "provider_channel": "stable",
            "observed_versions": [version],
            "observed_channels": ["stable", "beta"],
            "transport_ids": transports,
            "release_membership": {
                "runtime_provider_id": provider,
                "provider_version": version,
                "provider_channel": "stable",
                "launch_config_digest": f"sha256:{self.rng.getrandbits(256):064x}",
                "physical_device_required": False,
            }
            if pinned
            else None,
        }
        self.add("implementations", implementation)
        self.add(
            "evidence_claims",
            _claim(f"claim.{implementation_id}", "implementation", implementation_id, source),
        )
        return implementation

    def capability(
        self, provider: str, index: int, implementations: list[dict[str, Any]], source: str
    ) -> dict[str, Any]:
        capability_id = f"{provider}.cap_{index:05d}"
        safety = self.rng.choice(SAFETY)
        capability = {
            "capability_id": capability_id,
            "provider_id": provider,
            "implementation_ids": [i["implementation_id"] for i in implementations],
            "plane": self.rng.choice(PLANES),
            "behavior": f"generated capability {index}",
            "exact_exposure": [f"method_{index}"],
            "lifecycle": self.rng.choice(LIFECYCLES),
            "machine_readable": self.rng.choice((True, False, "qualified")),
            "maturity": "public",
            "version_constraints": ">=0.0.0",
            "remote_safety": safety,
            "required_pairling_addition": LOCAL_ONLY_REASON if safety in LOCAL_ONLY else "",
            "shared_semantics": None,
            "provider_overlay": False,
            "source_refs": [source],
        }
        self.add("capabilities", capability)
        self.add(
            "evidence_claims", _claim(f"claim.{capability_id}", "capability", capability_id, source)
        )
        return capability

    def binding(
        self,
        provider: str,
        index: int,
        implementation: dict[str, Any],
        capabilities: list[dict[str, Any]],
        source: str,
    ) -> None:
        binding_id = f"{implementation['implementation_id']}.op_{index:06d}"
        safety = {c["remote_safety"] for c in capabilities}
        # The six requirement kinds Pairling requires of every binding.
        requires: list[dict[str, Any]] = [
            {"kind": "release_membership"},
            {"kind": "fresh_snapshot", "max_age_seconds": self.rng.randint(1, 30)},
            {"kind": "exact_identity", "dimensions": list(EXACT_SESSION)},
            {"kind": "device_scope", "scope": "session:read"},
            {"kind": "resource_proof", "proof_kind": "session_truth"},
            {
                "kind": "confirmation",
                "mode": "user_confirmation" if "confirmation" in safety else "none",
            },
        ]
        implemented = "do_not_expose" not in safety and self.rng.random() < 0.8
        # Released only when implemented and the implementation is release-pinned.
        released = implemented and implementation["release_membership"] is not None
        self.add(
            "operation_bindings",
            {
                "implementation_operation_id": binding_id,
                "implementation_id": implementation["implementation_id"],
                "operation_id": self.rng.choice(OPERATIONS),
                "capability_ids": [c["capability_id"] for c in capabilities],
                "implementation_status": "implemented" if implemented else "mapped",
                "release_status": "released" if released else "not_released",
                "requires": requires,
                "effects": [{"kind": "return_data", "target": f"result_{index}"}],
                "invalidates": [{"kind": "snapshot"}],
                "forbids": [{"kind": "identity_fallback"}],
                "retry": {
                    "replay": "same_action_only",
                    "recovery": "provider_event",
                    "ambiguity": "outcome_unknown",
                    "correlation": "client_action_id",
                },
                "runtime_proofs_required": ["operation_discovered", "exact_session"],
                "evidence_claim_ids": [f"claim.{binding_id}"],
                "source_refs": [source],
                "required_pairling_addition": "" if released else NOT_RELEASED_REASON,
                "semantic_digest": "",
            },
        )
        self.add(
            "evidence_claims",
            _claim(f"claim.{binding_id}", "operation_binding", binding_id, source),
        )


def generate_map(bindings: int, seed: int) -> dict[str, Any]:
    """A valid, sealed map with exactly ``bindings`` operation bindings (at least 1)."""
    if bindings < 1:
        raise ValueError("a map needs at least one operation binding")
    builder = _Builder(bindings, seed)
    providers = max(1, bindings // BINDINGS_PER_PROVIDER)
    share, extra = divmod(bindings, providers)
    for number in range(providers):
        builder.provider(number, share + (1 if number < extra else 0))
    sealed: dict[str, Any] = _backend.active().seal_map(builder.document)
    return sealed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bindings", type=int, default=10_000, help="operation bindings (default 10000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "-o", "--output", type=Path, help="write here (atomically) instead of to stdout"
    )


def run(args: argparse.Namespace) -> int:
    try:
        document = generate_map(args.bindings, args.seed)
    except ValueError as error:
        print(f"pairling-fast generate map: {error}", file=sys.stderr)
        return 2
    text = dump_map(document)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(args.output, text.encode("utf-8"))
    return 0
