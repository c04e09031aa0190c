"""Broken twins of the example capability map: one defect each, and the findings it must cause.

Each twin starts from ``examples/maps/capability-map.json``, makes exactly one change, and (unless
the defect is the digest itself) re-seals the bindings, so the only findings are the rule's own.
Indices below refer to the example's entries (e.g. ``capabilities[5]`` is the do_not_expose shell
capability); ``docs/maps.md`` shows the same twins.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "maps" / "capability-map.json"

Document = dict[str, Any]


class Twin(NamedTuple):
    name: str
    code: str
    break_map: Callable[[Document], None]
    pointers: tuple[str, ...]
    reseal: bool = True


def example() -> Document:
    document: Document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return document


def _append_copy(collection: str, index: int) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        document[collection].append(copy.deepcopy(document[collection][index]))

    return change


def _set(*path_and_value: Any) -> Callable[[Document], None]:
    *path, value = path_and_value

    def change(document: Document) -> None:
        node = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = copy.deepcopy(value)

    return change


def _append(*path_and_value: Any) -> Callable[[Document], None]:
    *path, value = path_and_value

    def change(document: Document) -> None:
        node = document
        for key in path:
            node = node[key]
        node.append(copy.deepcopy(value))

    return change


def _claim_reusing_capability_id(document: Document) -> None:
    document["evidence_claims"].append(
        {
            "claim_id": "northwind_cli.turn.interrupt",
            "subject_type": "capability",
            "subject_id": "northwind_cli.turn.interrupt",
            "classification": "behavioral_evidence",
            "assertion": "Observed interrupting a running turn.",
            "source_refs": ["pairling-driver-tests"],
        }
    )


def _unused_transport(document: Document) -> None:
    document["transports"].append(
        {
            "transport_id": "tern_sdk.http",
            "provider_id": "tern_sdk",
            "description": "A loopback HTTP server the SDK can start.",
            "kind": "http_loopback",
        }
    )


def _unbound_capability(document: Document) -> None:
    capability = copy.deepcopy(document["capabilities"][2])
    capability["capability_id"] = "northwind_cli.turn.steer"
    claim = copy.deepcopy(document["evidence_claims"][4])
    claim["claim_id"] = "claim.northwind_cli.turn.steer"
    claim["subject_id"] = "northwind_cli.turn.steer"
    document["capabilities"].append(capability)
    document["evidence_claims"].append(claim)


def _tamper_binding(document: Document) -> None:
    document["operation_bindings"][3]["requires"][0]["mode"] = "user_confirmation"


def _expose_do_not_expose(document: Document) -> None:
    document["operation_bindings"][5]["implementation_status"] = "implemented"
    document["operation_bindings"][5]["release_status"] = "released"


def _drop_capability_claim(document: Document) -> None:
    del document["evidence_claims"][8]


SOURCE = {
    "source_id": "northwind-cli-blog",
    "uri": "https://blog.example/",
    "kind": "official_docs",
}

TWINS: tuple[Twin, ...] = (
    Twin(
        "duplicate source",
        "PF201",
        _append_copy("evidence_sources", 0),
        ("/evidence_sources/9/source_id",),
    ),
    Twin(
        "duplicate provider", "PF201", _append_copy("providers", 0), ("/providers/3/provider_id",)
    ),
    Twin(
        "duplicate implementation",
        "PF201",
        _append_copy("implementations", 0),
        ("/implementations/3/implementation_id",),
    ),
    Twin(
        "duplicate transport",
        "PF201",
        _append_copy("transports", 0),
        ("/transports/5/transport_id",),
    ),
    Twin(
        "duplicate capability",
        "PF201",
        _append_copy("capabilities", 0),
        ("/capabilities/11/capability_id",),
    ),
    Twin(
        "duplicate binding",
        "PF201",
        _append_copy("operation_bindings", 0),
        ("/operation_bindings/11/implementation_operation_id",),
    ),
    Twin(
        "duplicate claim",
        "PF201",
        _append_copy("evidence_claims", 2),
        ("/evidence_claims/24/claim_id",),
    ),
    Twin(
        "graph id reused", "PF202", _claim_reusing_capability_id, ("/evidence_claims/24/claim_id",)
    ),
    Twin(
        "provider cites unknown source",
        "PF203",
        _append("providers", 1, "source_refs", "tern-sdk-changelog"),
        ("/providers/1/source_refs/1",),
    ),
    Twin(
        "exclusion cites unknown source",
        "PF203",
        _set("exclusions", 2, "source_refs", ["tern-hosted-notice"]),
        ("/exclusions/2/source_refs/0",),
    ),
    Twin(
        "transport of unknown provider",
        "PF204",
        _set("transports", 1, "provider_id", "northwind"),
        ("/transports/1/provider_id",),
    ),
    Twin(
        "implementation of unknown provider",
        "PF204",
        _set("implementations", 2, "provider_id", "quill"),
        ("/implementations/2/provider_id",),
    ),
    Twin(
        "unknown transport",
        "PF205",
        _append("implementations", 0, "transport_ids", "northwind_cli.websocket"),
        ("/implementations/0/transport_ids/2",),
    ),
    Twin(
        "transport of another provider",
        "PF206",
        _append("implementations", 1, "transport_ids", "quill_editor.acp_stdio"),
        ("/implementations/1/transport_ids/1",),
    ),
    Twin(
        "unknown runtime provider",
        "PF207",
        _set("implementations", 0, "release_membership", "runtime_provider_id", "northwind"),
        ("/implementations/0/release_membership/runtime_provider_id",),
    ),
    Twin(
        "runtime provider differs",
        "PF208",
        _set("implementations", 1, "release_membership", "runtime_provider_id", "northwind_cli"),
        ("/implementations/1/release_membership/runtime_provider_id",),
    ),
    Twin(
        "capability names unknown implementation",
        "PF209",
        _append("capabilities", 6, "implementation_ids", "tern_sdk.1_0"),
        ("/capabilities/6/implementation_ids/1",),
    ),
    Twin(
        "capability names implementation of another provider",
        "PF210",
        _append("capabilities", 6, "implementation_ids", "northwind_cli.2_4"),
        ("/capabilities/6/implementation_ids/1",),
    ),
    Twin(
        "unknown shared_semantics",
        "PF211",
        _set("capabilities", 7, "shared_semantics", "northwind_cli.turn.send"),
        ("/capabilities/7/shared_semantics",),
    ),
    Twin(
        "binding of unknown implementation",
        "PF212",
        _set("operation_bindings", 2, "implementation_id", "northwind_cli.2_5"),
        ("/operation_bindings/2/implementation_id",),
    ),
    Twin(
        "binding of unknown capability",
        "PF213",
        _append("operation_bindings", 4, "capability_ids", "northwind_cli.events.replay"),
        ("/operation_bindings/4/capability_ids/1",),
    ),
    Twin(
        "capability not offered by the implementation",
        "PF214",
        _append("operation_bindings", 7, "capability_ids", "northwind_cli.turn.send_prompt"),
        ("/operation_bindings/7/capability_ids/1",),
    ),
    Twin(
        "unknown evidence claim",
        "PF215",
        _append("operation_bindings", 0, "evidence_claim_ids", "claim.missing"),
        ("/operation_bindings/0/evidence_claim_ids/1",),
    ),
    Twin(
        "claim of unknown implementation",
        "PF216",
        _set("evidence_claims", 0, "subject_id", "northwind_cli.2_3"),
        ("/evidence_claims/0/subject_id",),
    ),
    Twin(
        "claim subject in the wrong collection",
        "PF216",
        _set("evidence_claims", 13, "subject_type", "capability"),
        ("/evidence_claims/13/subject_id",),
    ),
    Twin(
        "version not observed",
        "PF217",
        _set("implementations", 0, "provider_version", "2.4.2"),
        ("/implementations/0/provider_version",),
    ),
    Twin(
        "channel not observed",
        "PF218",
        _set("implementations", 1, "provider_channel", "next"),
        ("/implementations/1/provider_channel",),
    ),
    Twin(
        "release_pinned without membership",
        "PF219",
        _set("implementations", 2, "identity_status", "release_pinned"),
        ("/implementations/2/identity_status",),
    ),
    Twin(
        "released binding of unreleased implementation",
        "PF220",
        _set("operation_bindings", 9, "release_status", "released"),
        ("/operation_bindings/9/release_status",),
    ),
    Twin(
        "tampered binding",
        "PF221",
        _tamper_binding,
        ("/operation_bindings/3/semantic_digest",),
        reseal=False,
    ),
    Twin(
        "do_not_expose released",
        "PF222",
        _expose_do_not_expose,
        ("/operation_bindings/5/capability_ids/0",),
    ),
    Twin(
        "confirmation without confirmation",
        "PF223",
        _set("operation_bindings", 8, "requires", 0, "mode", "none"),
        ("/operation_bindings/8/capability_ids/0",),
    ),
    Twin(
        "capability without evidence",
        "PF224",
        _drop_capability_claim,
        ("/capabilities/6/capability_id",),
    ),
    Twin("orphan transport", "PF225", _unused_transport, ("/transports/5/transport_id",)),
    Twin(
        "orphan evidence source",
        "PF226",
        _append("evidence_sources", SOURCE),
        ("/evidence_sources/9/source_id",),
    ),
    Twin("orphan capability", "PF227", _unbound_capability, ("/capabilities/11/capability_id",)),
)


def broken(twin: Twin, seal: Callable[[Document], Document]) -> Document:
    """The example with the twin's defect, re-sealed by ``seal`` unless the digest is the defect."""
    document = example()
    twin.break_map(document)
    return seal(document) if twin.reseal else document
