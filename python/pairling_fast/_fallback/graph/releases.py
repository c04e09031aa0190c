"""The release join against Pairling's reviewed operation manifest
(↔ ``rust/graph/releases.rs``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from ...codes import (
    MALFORMED_MANIFEST,
    MEMBERSHIP_UNKNOWN_PROVIDER,
    OPERATION_NOT_REVIEWED,
    RELEASE_IDENTITY_DIFFERS,
    RELEASED_BINDINGS_DIFFER,
    REQUIREMENT_DIFFERS_FROM_REVIEW,
    REVIEWED_WITHOUT_BINDING,
)
from ...errors import CanonicalizationError
from ..canonical import canonicalize
from ..findings import RawFinding
from .index import _finding, _is_array, _Map, _objects, _text, _texts

RELEASE_IDENTITY = ("runtime_provider_id", "provider_version", "provider_channel")


RELEASE_FIELDS = (*RELEASE_IDENTITY, "launch_config_digest", "physical_device_required")


# (requirement kind, its field, the manifest operation's field it must equal)
REVIEWED_REQUIREMENTS = (
    ("device_scope", "scope", "required_device_scope"),
    ("resource_proof", "proof_kind", "resource_proof_kind"),
    ("confirmation", "mode", "confirmation_requirement"),
)


class _Manifest(NamedTuple):
    operations: dict[str, dict[str, Any]]
    memberships: dict[str, dict[str, Any]]
    released: dict[str, set[str]]


def _read_manifest(manifest: Any) -> tuple[_Manifest, list[RawFinding]]:
    problems: list[RawFinding] = []
    index = _Manifest({}, {}, {})
    if not isinstance(manifest, dict):
        problems.append(_finding(MALFORMED_MANIFEST, "the operation manifest is not an object", ""))
        return index, problems
    for field in ("operations", "release_memberships"):
        if not _is_array(manifest.get(field)):
            problems.append(
                _finding(
                    MALFORMED_MANIFEST, f"the operation manifest's {field} is not an array", ""
                )
            )
    for _, row in _objects(manifest, "operations"):
        operation_id = _text(row, "id")
        if operation_id is not None:
            index.operations[operation_id] = row
    for _, row in _objects(manifest, "release_memberships"):
        provider_id = _text(row, "map_provider_id")
        if provider_id is None:
            continue
        index.memberships[provider_id] = row
        index.released[provider_id] = {
            value
            for _, capability in _objects(row, "capabilities")
            for _, value in _texts(capability, "operation_ids")
        }
    return index, problems


def _shown(value: Any) -> str:
    """A JSON value as messages show it: its canonical (RFC 8785) text."""
    try:
        return canonicalize(value).decode("utf-8")
    except CanonicalizationError:
        return "(a value without canonical form)"


def _listed(items: Iterable[str]) -> str:
    return "[" + ", ".join(f"'{item}'" for item in sorted(items)) + "]"


def _release_join(graph: _Map, manifest: Any) -> Iterator[RawFinding]:
    reviewed, problems = _read_manifest(manifest)
    yield from problems
    if not reviewed.operations:
        return
    implementations = graph.index["implementations"]
    providers = graph.first["providers"]
    bound: set[str] = set()
    released: dict[str, set[str]] = {}
    for i, binding in graph.entries["operation_bindings"]:
        base = f"/operation_bindings/{i}"
        implementation = implementations.get(_text(binding, "implementation_id") or "")
        operation_id = _text(binding, "operation_id")
        if implementation is None or operation_id is None:
            continue
        bound.add(operation_id)
        if _text(binding, "release_status") == "released":
            provider = graph.own_provider(implementation) or ""
            released.setdefault(provider, set()).add(operation_id)
        definition = reviewed.operations.get(operation_id)
        if definition is None:
            yield _finding(
                OPERATION_NOT_REVIEWED,
                f"operation '{operation_id}' is not in the reviewed operation manifest",
                f"{base}/operation_id",
            )
            continue
        rows = {
            kind: j
            for j, requirement in _objects(binding, "requires")
            if (kind := _text(requirement, "kind")) is not None
        }
        for kind, field, reviewed_field in REVIEWED_REQUIREMENTS:
            j = rows.get(kind)
            expected = definition.get(reviewed_field)
            row = binding["requires"][j] if j is not None else None
            if (
                row is None
                or row.get(field) != expected
                or type(row.get(field)) is not type(expected)
            ):
                yield _finding(
                    REQUIREMENT_DIFFERS_FROM_REVIEW,
                    f"{kind} {field} differs from the reviewed operation's {reviewed_field} "
                    f"{_shown(expected)}",
                    f"{base}/requires/{j}" if j is not None else f"{base}/requires",
                )
    missing = sorted(set(reviewed.operations) - bound)
    if missing:
        yield _finding(
            REVIEWED_WITHOUT_BINDING,
            f"reviewed operations without a binding: {', '.join(missing)}",
            "/operation_bindings",
        )
    strangers = sorted(set(reviewed.memberships) - set(providers))
    if strangers:
        yield _finding(
            MEMBERSHIP_UNKNOWN_PROVIDER,
            f"release memberships of the manifest name no map provider: {', '.join(strangers)}",
            "/providers",
        )
    for provider_id in sorted(set(reviewed.released) | set(released)):
        expected_ops = reviewed.released.get(provider_id, set())
        actual = released.get(provider_id, set())
        where = (
            f"/providers/{providers[provider_id]}/provider_id"
            if provider_id in providers
            else "/providers"
        )
        if actual != expected_ops:
            yield _finding(
                RELEASED_BINDINGS_DIFFER,
                f"released bindings of provider '{provider_id}' differ from the manifest: "
                f"missing {_listed(expected_ops - actual)}, not in the manifest "
                f"{_listed(actual - expected_ops)}",
                where,
            )
        membership = reviewed.memberships.get(provider_id)
        pinned = next(
            (
                (i, entry)
                for i, entry in graph.entries["implementations"]
                if graph.first["implementations"].get(_text(entry, "implementation_id") or "") == i
                and _text(entry, "provider_id") == provider_id
                and isinstance(entry.get("release_membership"), dict)
            ),
            None,
        )
        if membership is None or pinned is None:
            continue
        i, implementation = pinned
        release = implementation["release_membership"]
        for field in RELEASE_FIELDS:
            value, expected = release.get(field), membership.get(field)
            if value != expected or type(value) is not type(expected):
                yield _finding(
                    RELEASE_IDENTITY_DIFFERS,
                    f"release {field} {_shown(value)} differs from the manifest's "
                    f"{_shown(expected)}",
                    f"/implementations/{i}/release_membership/{field}",
                )


# ---------------------------------------------------------------------------------------------
# Digests, order, entry points
