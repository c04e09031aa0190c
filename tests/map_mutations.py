"""A mutation corpus of capability maps, for the differential check against Pairling's validator.

Every case derives from our own maps (``examples/maps/capability-map.json``, its operation
manifest ``tests/data/maps/operation-manifest.json``, and ``generate_map``), never from Pairling's
data. ``corpus()`` yields the cases in a fixed order, each with the rule family it exercises:

- ``twin``: every broken twin of ``map_twins.py`` (one per rule, release join included);
- ``structure``: every member of every object deleted, replaced by null, by a value of another
  JSON type, by an empty and by a whitespace-only string; an unknown member added to every
  object; every array emptied and its first item repeated;
- ``values``: the enumerations of both the schema and Pairling's validator tried at every enum
  field, ids of edge lengths and characters, source URIs, timestamps, max_age_seconds values;
- ``requirements``, ``retry``, ``release``: the combinations those rule families look at;
- ``manifest``: the release join with changed manifests;
- ``generated``: generated maps and mutations of them.

Each mutated map is re-sealed (its digests recomputed with ``seal``), so a digest never masks the
mutation; the ``digest`` family keeps stale digests on purpose.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from map_twins import TWINS, broken, example, manifest, twin_manifest

Document = dict[str, Any]
Seal = Callable[[Document], Document]


class Case(NamedTuple):
    name: str
    family: str
    document: Any
    manifest: Any = None


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(path, value) of every value below ``node``, parents before children."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*path, index))


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for token in path:
        document = document[token]
    return document


def _pointer(path: tuple[Any, ...]) -> str:
    return "".join(f"/{token}" for token in path)


def _changed(document: Document, path: tuple[Any, ...], value: Any) -> Document:
    copied = copy.deepcopy(document)
    if path:
        _at(copied, path[:-1])[path[-1]] = copy.deepcopy(value)
        return copied
    result: Document = copy.deepcopy(value)
    return result


def _without(document: Document, path: tuple[Any, ...]) -> Document:
    copied = copy.deepcopy(document)
    del _at(copied, path[:-1])[path[-1]]
    return copied


OTHER_TYPES: tuple[Any, ...] = (None, 7, True, [], {})
SCHEMA_ENUMS = {
    "kind": (
        "manager",
        "unknown",
        "acp_stdio",
        "official_docs",
        "checked_in_source",
        "return_data",
        "snapshot",
        "identity_fallback",
        "fresh_snapshot",
        "owned_process",
    ),
    "identity_status": ("release_pinned", "source_pinned", "observed", "unversioned"),
    "classification": (
        "vendor_surface",
        "pairling_support",
        "behavioral_evidence",
        "runtime_behavior",
        "exclusion",
    ),
    "status": ("implementation_candidate", "research_candidate", "terminal_floor", "map_only"),
    "implementation_status": ("implemented", "mapped", "excluded"),
    "release_status": ("released", "not_released"),
    "remote_safety": ("safe", "confirmation", "required_local_only", "do_not_expose"),
    "maturity": ("public", "experimental", "draft", "version_specific", "unsafe", "unknown"),
    "subject_type": ("implementation", "capability", "operation_binding", "transport"),
    "mode": ("none", "user_confirmation", "point_of_risk", "always"),
    "proof_kind": ("none", "provider_binding", "screen_v2", "biometric"),
    "owner": ("driver", "manager", "user"),
}
IDS = (
    "a",
    "ab",
    "a.b",
    "a-b",
    "a_b",
    "A",
    "1a",
    "a b",
    "a" * 64,
    "a" * 65,
    "a" * 128,
    "a" * 129,
    "a" * 256,
    "a" * 257,
)
URIS = (
    "https://docs.example/x",
    "HTTPS://docs.example",
    "https://user@docs.example/",
    "https://:pw@docs.example/",
    "https://",
    "https:docs.example",
    "http://docs.example",
    "ftp://docs.example",
    " https://docs.example",
    "https://docs.example/\tx",
    "https://[::1]/x",
    "https://[::1/x",
    "drivers/tests",
    "./drivers/tests",
    "drivers//tests",
    "drivers/../tests",
    "/drivers/tests",
    "~/drivers",
    "file:drivers/tests",
    "drivers/tests/",
    " ",
)
TIMESTAMPS = (
    "2026-11-20T09:30:00Z",
    "2026-11-20T09:30:00.123456Z",
    "2026-11-20T09:30:00z",
    "2026-11-20T09:30:00+00:00",
    "2026-11-20T09:30:00-05:00",
    "2026-11-20 09:30:00Z",
    "2026-11-20t09:30:00Z",
    "2026-11-20T09:30Z",
    "2026-11-20Z",
    "2026-11-20T24:00:00Z",
    "2026-11-20T23:59:60Z",
    "2026-02-30T09:30:00Z",
    "2026-11-20T09:30:00.123456789Z",
    "Z",
)
AGES: tuple[Any, ...] = (0, 1, 30, 31, -1, 30.0, 1.0, 0.5, 1e1, True, "30", None)
WHITESPACE = (" ", "\t", "\u3000", "\u00a0", "\u001f", "\u200b", " x ")


def _structure(document: Document, seal: Seal) -> Iterator[Case]:
    for path, value in list(_paths(document)):
        where = _pointer(path)
        if path:
            if isinstance(path[-1], str):
                yield Case(f"delete {where}", "structure", seal(_without(document, path)))
            for other in OTHER_TYPES:
                if type(other) is not type(value):
                    yield Case(
                        f"{where} = {json.dumps(other)}",
                        "structure",
                        seal(_changed(document, path, other)),
                    )
        if isinstance(value, str):
            for text in ("", " ", value + " "):
                yield Case(
                    f"{where} = {json.dumps(text)}",
                    "structure",
                    seal(_changed(document, path, text)),
                )
        if isinstance(value, dict):
            added = {**value, "x_extra": 1}
            yield Case(
                f"{where} + unknown member", "structure", seal(_changed(document, path, added))
            )
        if isinstance(value, list) and value:
            yield Case(f"{where} = []", "structure", seal(_changed(document, path, [])))
            repeated = [*value, copy.deepcopy(value[0])]
            yield Case(
                f"{where} repeats its first item",
                "structure",
                seal(_changed(document, path, repeated)),
            )


def _values(document: Document, seal: Seal) -> Iterator[Case]:
    for path, value in list(_paths(document)):
        if not path or not isinstance(value, str):
            continue
        where = _pointer(path)
        field = path[-1] if isinstance(path[-1], str) else path[-2]
        for candidate in SCHEMA_ENUMS.get(str(field), ()):
            if candidate != value:
                yield Case(
                    f"{where} = {candidate}", "values", seal(_changed(document, path, candidate))
                )
        if field in ("provider_id", "runtime_provider_id", "source_id", "shared_semantics"):
            for candidate in IDS:
                yield Case(
                    f"{where} = {candidate[:12]}…{len(candidate)}",
                    "values",
                    seal(_changed(document, path, candidate)),
                )
        if field == "uri":
            for candidate in URIS:
                yield Case(
                    f"{where} = {candidate!r}", "values", seal(_changed(document, path, candidate))
                )
        if field in (
            "display_name",
            "reason",
            "description",
            "behavior",
            "assertion",
            "item",
            "provider_version",
            "provider_channel",
            "target",
            "version_constraints",
            "rule",
            "safety_rule",
            "machine_readable_qualification",
            "required_pairling_addition",
        ):
            for candidate in WHITESPACE:
                yield Case(
                    f"{where} = {candidate!r}", "values", seal(_changed(document, path, candidate))
                )
    for stamp in TIMESTAMPS:
        yield Case(
            f"observed_at = {stamp}", "values", seal(_changed(document, ("observed_at",), stamp))
        )
    for version in ("1.0.0", "2.0.1", "2.0", ""):
        yield Case(
            f"schema_version = {version!r}",
            "values",
            seal(_changed(document, ("schema_version",), version)),
        )
    for target in ("x" * 128, "x" * 129, " " * 200):
        yield Case(
            f"target of {len(target)}",
            "values",
            seal(_changed(document, ("operation_bindings", 0, "effects", 0, "target"), target)),
        )


KINDS = (
    "release_membership",
    "fresh_snapshot",
    "exact_identity",
    "device_scope",
    "resource_proof",
    "confirmation",
)
DIMENSIONS = (
    "provider",
    "implementation",
    "binding",
    "session",
    "generation",
    "request",
    "arguments",
)


def _requirements(document: Document, seal: Seal) -> Iterator[Case]:
    base = document["operation_bindings"][0]["requires"]
    by_kind = {row["kind"]: row for row in base}
    for size in range(len(KINDS)):
        for kept in itertools.combinations(KINDS, size):
            rows = [by_kind[kind] for kind in kept] or [
                {"kind": "owned_process", "owner": "driver"}
            ]
            yield Case(
                f"requires only {'+'.join(kept) or 'owned_process'}",
                "requirements",
                seal(_changed(document, ("operation_bindings", 0, "requires"), rows)),
            )
    for size in range(len(DIMENSIONS) + 1):
        for dims in itertools.combinations(DIMENSIONS, size):
            yield Case(
                f"dimensions {'+'.join(dims) or 'none'}",
                "requirements",
                seal(
                    _changed(
                        document, ("operation_bindings", 0, "requires", 2, "dimensions"), list(dims)
                    )
                ),
            )
    for age in AGES:
        yield Case(
            f"max_age_seconds {age!r}",
            "requirements",
            seal(
                _changed(document, ("operation_bindings", 0, "requires", 1, "max_age_seconds"), age)
            ),
        )
    for scope in ("session:read", "session", "Session:read", "session:read:x", "a:b", ":"):
        yield Case(
            f"scope {scope!r}",
            "requirements",
            seal(_changed(document, ("operation_bindings", 0, "requires", 3, "scope"), scope)),
        )
    for kind in KINDS:
        yield Case(
            f"{kind} twice",
            "requirements",
            seal(_changed(document, ("operation_bindings", 0, "requires"), [*base, by_kind[kind]])),
        )


RETRY = {
    "replay": ("safe", "same_action_only", "recover_only", "forbidden"),
    "recovery": (
        "provider_status",
        "provider_event",
        "manager_receipt",
        "process_observation",
        "unavailable",
    ),
    "ambiguity": ("outcome_unknown", "rejected"),
    "correlation": ("none", "client_action_id", "provider_operation_id", "client_and_provider"),
}
EFFECTS: tuple[list[Any], ...] = (
    [{"kind": "return_data"}],
    [{"kind": "return_data", "target": "t"}],
    [{"kind": "start_inference"}],
    [{"kind": "return_data"}, {"kind": "return_data"}],
    [{"kind": "return_data"}, {"kind": "steer_turn"}],
)


def _retry(document: Document, seal: Seal) -> Iterator[Case]:
    for effects in EFFECTS:
        for values in itertools.product(*RETRY.values()):
            retry = dict(zip(RETRY, values, strict=True))
            changed = _changed(document, ("operation_bindings", 0, "retry"), retry)
            changed["operation_bindings"][0]["effects"] = copy.deepcopy(effects)
            name = f"effects {'+'.join(e['kind'] for e in effects)} retry {'/'.join(values)}"
            yield Case(name, "retry", seal(changed))


def _release(document: Document, seal: Seal) -> Iterator[Case]:
    statuses = list(
        itertools.product(
            ("implemented", "mapped", "excluded"), ("released", "not_released"), ("", "Because.")
        )
    )
    for index in (0, 5, 8, 9):
        for status, release, reason in statuses:
            changed = copy.deepcopy(document)
            binding = changed["operation_bindings"][index]
            binding.update(
                implementation_status=status,
                release_status=release,
                required_pairling_addition=reason,
            )
            yield Case(f"binding {index} {status}/{release}/{reason!r}", "release", seal(changed))
    for index in range(3):
        for identity in SCHEMA_ENUMS["identity_status"]:
            for membership in (True, False):
                changed = copy.deepcopy(document)
                implementation = changed["implementations"][index]
                implementation["identity_status"] = identity
                if not membership:
                    implementation["release_membership"] = None
                elif implementation["release_membership"] is None:
                    implementation["release_membership"] = copy.deepcopy(
                        document["implementations"][0]["release_membership"]
                    )
                    implementation["release_membership"]["runtime_provider_id"] = implementation[
                        "provider_id"
                    ]
                yield Case(
                    f"implementation {index} {identity} membership={membership}",
                    "release",
                    seal(changed),
                )
        for field, value in (("provider_version", "9.9.9"), ("provider_channel", "nightly")):
            changed = _changed(document, ("implementations", index, field), value)
            yield Case(f"implementation {index} {field} {value}", "release", seal(changed))
    for provider in range(3):
        for status in SCHEMA_ENUMS["status"]:
            yield Case(
                f"provider {provider} {status}",
                "release",
                seal(
                    _changed(
                        document,
                        ("providers", provider, "implementation_eligibility", "status"),
                        status,
                    )
                ),
            )
    twin = copy.deepcopy(document)
    twin["implementations"][1]["release_membership"].update(
        {
            key: document["implementations"][0]["release_membership"][key]
            for key in ("runtime_provider_id", "provider_version", "provider_channel")
        }
    )
    yield Case("two implementations share a runtime identity", "release", seal(twin))
    for safety in SCHEMA_ENUMS["remote_safety"]:
        for reason in ("", " ", "Why."):
            changed = copy.deepcopy(document)
            changed["capabilities"][0].update(
                remote_safety=safety, required_pairling_addition=reason
            )
            yield Case(f"capability 0 {safety} reason {reason!r}", "release", seal(changed))
    for claim in (
        "claim.northwind_cli.2_4.prompt_send",
        "claim.northwind_cli.2_4.release",
        "claim.northwind_cli.session.read_transcript",
        "claim.tern_sdk.0_9.source",
    ):
        yield Case(
            f"binding 0 cites {claim}",
            "release",
            seal(_changed(document, ("operation_bindings", 0, "evidence_claim_ids"), [claim])),
        )


def _manifests(document: Document) -> Iterator[Case]:
    reviewed = manifest()
    yield Case("with its manifest", "manifest", document, reviewed)
    for path, value in list(_paths(reviewed)):
        where = "manifest" + _pointer(path)
        if path and isinstance(path[-1], str):
            yield Case(f"delete {where}", "manifest", document, _without(reviewed, path))
        if isinstance(value, str):
            yield Case(
                f"{where} changed", "manifest", document, _changed(reviewed, path, value + "x")
            )
        if isinstance(value, bool):
            yield Case(
                f"{where} flipped", "manifest", document, _changed(reviewed, path, not value)
            )
        if isinstance(value, list) and value:
            yield Case(f"{where} = []", "manifest", document, _changed(reviewed, path, []))
    others: tuple[Any, ...] = ([], 7, {"operations": {}, "release_memberships": []}, {})
    for other in others:
        yield Case(f"manifest {json.dumps(other)}", "manifest", document, other)


def _generated(seal: Seal, generate: Callable[[int, int], Document]) -> Iterator[Case]:
    for bindings, seed in ((1, 1), (9, 2), (40, 3)):
        document = generate(bindings, seed)
        yield Case(f"generated {bindings}/{seed}", "generated", document)
        for path, value in list(_paths(document))[:: max(1, bindings // 3)]:
            if path and isinstance(path[-1], str) and isinstance(value, (str, bool, int)):
                yield Case(
                    f"generated {bindings}/{seed} delete {_pointer(path)}",
                    "generated",
                    seal(_without(document, path)),
                )


FAMILIES = (
    "example",
    "twin",
    "digest",
    "structure",
    "values",
    "requirements",
    "retry",
    "release",
    "manifest",
    "generated",
)


def _fixed(document: Document, seal: Seal) -> Iterator[Case]:
    yield Case("example", "example", document)
    for twin in TWINS:
        yield Case(f"twin {twin.code} {twin.name}", "twin", broken(twin, seal), twin_manifest(twin))
    changed = _changed(document, ("operation_bindings", 0, "operation_id"), "session.turn.stop")
    yield Case("stale digest", "digest", changed)


def corpus(
    seal: Seal,
    generate: Callable[[int, int], Document],
    families: tuple[str, ...] = FAMILIES,
) -> Iterator[Case]:
    """Every case of ``families``, in a fixed order; ``seal`` recomputes digests, ``generate``
    is ``generate_map``."""
    document = example()
    makers: dict[str, Callable[[], Iterator[Case]]] = {
        "fixed": lambda: _fixed(document, seal),
        "structure": lambda: _structure(document, seal),
        "values": lambda: _values(document, seal),
        "requirements": lambda: _requirements(document, seal),
        "retry": lambda: _retry(document, seal),
        "release": lambda: _release(document, seal),
        "manifest": lambda: _manifests(document),
        "generated": lambda: _generated(seal, generate),
    }
    for name, make in makers.items():
        if name in families or (name == "fixed" and {"example", "twin", "digest"} & set(families)):
            yield from (case for case in make() if case.family in families)
