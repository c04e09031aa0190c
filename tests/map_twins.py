"""Broken twins of the example capability map: one defect each, and the findings it must cause.

Each twin starts from ``examples/maps/capability-map.json``, makes exactly one change, and (unless
the defect is the digest itself) re-seals the bindings, so the only findings are the rule's own.
Indices below refer to the example's entries (e.g. ``capabilities[5]`` is the do_not_expose shell
capability); ``docs/maps.md`` shows the same twins. The release-join twins (PF254 to PF260) check
the example against ``tests/data/maps/operation-manifest.json`` (a manifest written for the
example, which Pairling's validator accepts with it) with one change to the manifest.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "maps" / "capability-map.json"
MANIFEST = Path(__file__).resolve().parent / "data" / "maps" / "operation-manifest.json"

Document = dict[str, Any]


class Twin(NamedTuple):
    name: str
    code: str
    break_map: Callable[[Document], None]
    pointers: tuple[str, ...]
    reseal: bool = True
    # For the release-join rules: the change to the example's manifest (the map is unchanged).
    break_manifest: Callable[[Any], Any] | None = None


def example() -> Document:
    document: Document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return document


def manifest() -> Any:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def _unchanged(document: Document) -> None:
    """The map of a release-join twin: the example as it is."""


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
            "classification": "vendor_surface",
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
    document["operation_bindings"][3]["requires"][5]["mode"] = "user_confirmation"


def _expose_do_not_expose(document: Document) -> None:
    document["operation_bindings"][5]["implementation_status"] = "implemented"
    document["operation_bindings"][5]["release_status"] = "released"


def _drop_capability_claim(document: Document) -> None:
    del document["evidence_claims"][8]


def _no_exclusions(document: Document) -> None:
    document["exclusions"] = []
    # The legacy-socket notice was cited only by an exclusion; keep it cited (no PF226).
    document["providers"][2]["source_refs"].append("quill-legacy-socket-notice")


def _unrelease_northwind(document: Document) -> None:
    document["implementations"][0]["release_membership"] = None
    document["implementations"][0]["identity_status"] = "source_pinned"


def _second_northwind_implementation(document: Document) -> None:
    twin = copy.deepcopy(document["implementations"][0])
    twin["implementation_id"] = "northwind_cli.2_4_nightly"
    document["implementations"].append(twin)


def _underscored_source(document: Document) -> None:
    document["evidence_sources"].append({**SOURCE, "source_id": "northwind_cli_blog"})
    document["providers"][0]["source_refs"].append("northwind_cli_blog")


def _repeat(collection: str, index: int, field: str, item: int) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        rows = document[collection][index][field]
        rows.append(copy.deepcopy(rows[item]))

    return change


def _without_requirement(index: int, requirement: int) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        del document["operation_bindings"][index]["requires"][requirement]

    return change


def _in_manifest(*path_and_value: Any) -> Callable[[Any], Any]:
    """A change to the manifest: set ``path`` to ``value``."""
    change = _set(*path_and_value)

    def changed(reviewed: Any) -> Any:
        change(reviewed)
        return reviewed

    return changed


def _drop_reviewed_operation(reviewed: Any) -> Any:
    reviewed["operations"] = [
        row for row in reviewed["operations"] if row["id"] != "session.events.subscribe"
    ]
    return reviewed


def _extra_reviewed_operation(reviewed: Any) -> Any:
    reviewed["operations"].append({**reviewed["operations"][0], "id": "session.todo.read"})
    return reviewed


def _stranger_membership(reviewed: Any) -> Any:
    stranger = {**reviewed["release_memberships"][0], "map_provider_id": "ghost_cli"}
    reviewed["release_memberships"].append({**stranger, "capabilities": []})
    return reviewed


def _unreleased_in_manifest(reviewed: Any) -> Any:
    reviewed["release_memberships"][0]["capabilities"].pop()
    return reviewed


def _not_a_manifest(reviewed: Any) -> Any:
    return [reviewed]


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
        "release_pinned without membership",
        "PF219",
        _set("implementations", 2, "identity_status", "release_pinned"),
        ("/implementations/2/identity_status",),
    ),
    Twin(
        "released binding of unreleased implementation",
        "PF220",
        _unrelease_northwind,
        tuple(f"/operation_bindings/{i}/release_status" for i in range(5)),
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
        _set("operation_bindings", 8, "requires", 5, "mode", "none"),
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
    Twin(
        "transport kind manager",
        "PF228",
        _set("transports", 0, "kind", "manager"),
        ("/transports/0/kind",),
    ),
    Twin(
        "classification behavioral_evidence",
        "PF228",
        _set("evidence_claims", 1, "classification", "behavioral_evidence"),
        ("/evidence_claims/1/classification",),
    ),
    Twin("no exclusions", "PF228", _no_exclusions, ("/exclusions",)),
    Twin(
        "identity_status unversioned",
        "PF229",
        _set("implementations", 2, "identity_status", "unversioned"),
        ("/implementations/2/identity_status",),
    ),
    Twin(
        "classification runtime_behavior",
        "PF229",
        _set("evidence_claims", 1, "classification", "runtime_behavior"),
        ("/evidence_claims/1/classification",),
    ),
    Twin(
        "source id with an underscore",
        "PF229",
        _underscored_source,
        ("/evidence_sources/9/source_id",),
    ),
    Twin(
        "long effect target",
        "PF229",
        _set("operation_bindings", 0, "effects", 0, "target", "t" * 200),
        ("/operation_bindings/0/effects/0/target",),
    ),
    Twin(
        "shared_semantics not an id",
        "PF229",
        _set("capabilities", 7, "shared_semantics", "Send a prompt"),
        ("/capabilities/7/shared_semantics",),
    ),
    Twin(
        "whitespace display name",
        "PF230",
        _set("providers", 0, "display_name", " \t "),
        ("/providers/0/display_name",),
    ),
    Twin(
        "whitespace exclusion reason",
        "PF230",
        _set("exclusions", 1, "reason", "\u3000"),
        ("/exclusions/1/reason",),
    ),
    Twin(
        "plain-HTTP source",
        "PF231",
        _set("evidence_sources", 0, "uri", "http://docs.northwind.example/cli"),
        ("/evidence_sources/0/uri",),
    ),
    Twin(
        "absolute checked-in path",
        "PF231",
        _set("evidence_sources", 8, "uri", "/srv/pairling/drivers/tests"),
        ("/evidence_sources/8/uri",),
    ),
    Twin(
        "observed_at with an offset",
        "PF232",
        _set("observed_at", "2026-11-20T10:30:00+01:00"),
        ("/observed_at",),
    ),
    Twin(
        "max_age_seconds as a float",
        "PF233",
        _set("operation_bindings", 0, "requires", 1, "max_age_seconds", 30.0),
        ("/operation_bindings/0/requires/1/max_age_seconds",),
    ),
    Twin(
        "no device_scope requirement",
        "PF234",
        _without_requirement(0, 3),
        ("/operation_bindings/0/requires",),
    ),
    Twin(
        "repeated requirement",
        "PF235",
        _repeat("operation_bindings", 0, "requires", 5),
        ("/operation_bindings/0/requires/6",),
    ),
    Twin(
        "identity without binding",
        "PF236",
        _set(
            "operation_bindings",
            0,
            "requires",
            2,
            "dimensions",
            ["provider", "implementation", "session", "generation"],
        ),
        ("/operation_bindings/0/requires/2/dimensions",),
    ),
    Twin(
        "session without generation",
        "PF237",
        _set(
            "operation_bindings",
            0,
            "requires",
            2,
            "dimensions",
            ["provider", "implementation", "binding", "session"],
        ),
        ("/operation_bindings/0/requires/2/dimensions",),
    ),
    Twin(
        "prompt replayed blindly",
        "PF238",
        _set("operation_bindings", 1, "retry", "replay", "safe"),
        ("/operation_bindings/1/retry/replay",),
    ),
    Twin(
        "recover_only without recovery",
        "PF239",
        _set("operation_bindings", 1, "retry", "recovery", "unavailable"),
        ("/operation_bindings/1/retry/recovery",),
    ),
    Twin(
        "unknown outcome uncorrelated",
        "PF240",
        _set("operation_bindings", 1, "retry", "correlation", "none"),
        ("/operation_bindings/1/retry/correlation",),
    ),
    Twin(
        "not released without reason",
        "PF241",
        _set("operation_bindings", 5, "required_pairling_addition", ""),
        ("/operation_bindings/5/required_pairling_addition",),
    ),
    Twin(
        "do_not_expose without reason",
        "PF242",
        _set("capabilities", 5, "required_pairling_addition", " "),
        ("/capabilities/5/required_pairling_addition",),
    ),
    Twin(
        "released but only mapped",
        "PF243",
        _set("operation_bindings", 0, "implementation_status", "mapped"),
        ("/operation_bindings/0/implementation_status",),
    ),
    Twin(
        "released by a research candidate",
        "PF244",
        _set("providers", 0, "implementation_eligibility", "status", "research_candidate"),
        tuple(f"/operation_bindings/{i}/release_status" for i in range(5)),
    ),
    Twin(
        "released implementation source-pinned",
        "PF245",
        _set("implementations", 0, "identity_status", "source_pinned"),
        ("/implementations/0/identity_status",),
    ),
    Twin(
        "version differs from release",
        "PF246",
        _set("implementations", 0, "provider_version", "2.4.0"),
        ("/implementations/0/provider_version",),
    ),
    Twin(
        "channel differs from release",
        "PF247",
        _set("implementations", 1, "provider_channel", "next"),
        ("/implementations/1/provider_channel",),
    ),
    Twin(
        "two implementations, one runtime identity",
        "PF248",
        _second_northwind_implementation,
        ("/implementations/3/release_membership",),
    ),
    Twin(
        "evidence about another binding",
        "PF249",
        _append(
            "operation_bindings", 0, "evidence_claim_ids", "claim.northwind_cli.2_4.prompt_send"
        ),
        ("/operation_bindings/0/evidence_claim_ids/1",),
    ),
    Twin(
        "duplicate exclusion",
        "PF250",
        _append_copy("exclusions", 0),
        ("/exclusions/3/item",),
    ),
    Twin(
        "repeated forbidden action",
        "PF251",
        _repeat("operation_bindings", 0, "forbids", 0),
        ("/operation_bindings/0/forbids/1",),
    ),
    Twin(
        "repeated exact exposure",
        "PF252",
        _repeat("capabilities", 0, "exact_exposure", 0),
        ("/capabilities/0/exact_exposure/1",),
    ),
    Twin(
        "a 1.0.0 map",
        "PF253",
        _set("schema_version", "1.0.0"),
        ("/schema_version",),
    ),
    Twin(
        "operation not reviewed",
        "PF254",
        _unchanged,
        ("/operation_bindings/4/operation_id",),
        break_manifest=_drop_reviewed_operation,
    ),
    Twin(
        "confirmation differs from review",
        "PF255",
        _unchanged,
        ("/operation_bindings/2/requires/5",),
        break_manifest=_in_manifest("operations", 6, "confirmation_requirement", "point_of_risk"),
    ),
    Twin(
        "reviewed operation unbound",
        "PF256",
        _unchanged,
        ("/operation_bindings",),
        break_manifest=_extra_reviewed_operation,
    ),
    Twin(
        "membership of an unknown provider",
        "PF257",
        _unchanged,
        ("/providers",),
        break_manifest=_stranger_membership,
    ),
    Twin(
        "released operation not in the manifest",
        "PF258",
        _unchanged,
        ("/providers/0/provider_id",),
        break_manifest=_unreleased_in_manifest,
    ),
    Twin(
        "launch config differs from the manifest",
        "PF259",
        _unchanged,
        ("/implementations/0/release_membership/launch_config_digest",),
        break_manifest=_in_manifest(
            "release_memberships", 0, "launch_config_digest", "sha256:" + "0" * 64
        ),
    ),
    Twin(
        "manifest not an object",
        "PF260",
        _unchanged,
        ("",),
        break_manifest=_not_a_manifest,
    ),
)


def broken(twin: Twin, seal: Callable[[Document], Document]) -> Document:
    """The example with the twin's defect, re-sealed by ``seal`` unless the digest is the defect."""
    document = example()
    twin.break_map(document)
    return seal(document) if twin.reseal else document


def twin_manifest(twin: Twin) -> Any:
    """The manifest a twin is checked with: None, or the example's with the twin's change."""
    return None if twin.break_manifest is None else twin.break_manifest(manifest())
