"""Capability maps: schema, Pairling's own rules and semantic digests (↔ ``rust/graph.rs``).

One pass over a ``pairling.capability-map.2.0.0`` document: strict parse, schema validation, then
every rule of ``docs/maps.md``, which run even when the schema found errors: an entry or field of
the wrong type is skipped, never trusted. The error rules are those of Pairling's own map
validator (``validate_capability_graph`` in Pairling's companion); the schema is the bundled one,
widened where that validator accepts more (PF229 names each such value), and the rules add what
the validator rejects beyond the schema. pairling_fast's own extra rules are lints (warning or
info). Findings come out in document order (see ``_document_position``), so both backends list
them identically.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Generator, Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from ..codes import (
    AMBIGUOUS_RUNTIME_IDENTITY,
    CAPABILITY_NOT_OFFERED,
    CAPABILITY_WITHOUT_EVIDENCE,
    CHANNEL_DIFFERS_FROM_MEMBERSHIP,
    CONFIRMATION_NOT_BOUND,
    DIGEST_MISMATCH,
    DO_NOT_EXPOSE_RELEASED,
    DUPLICATE_EXACT_EXPOSURE,
    DUPLICATE_EXCLUSION,
    DUPLICATE_ID,
    EXACT_IDENTITY_INCOMPLETE,
    FORBIDDEN_ACTION_REPEATED,
    FOREIGN_IMPLEMENTATION,
    FOREIGN_TRANSPORT,
    ID_REUSED_ACROSS_COLLECTIONS,
    LOCAL_ONLY_WITHOUT_REASON,
    MALFORMED_MANIFEST,
    MAX_AGE_NOT_INTEGER,
    MEMBERSHIP_UNKNOWN_PROVIDER,
    MUTATING_REPLAY_SAFE,
    NOT_RELEASED_WITHOUT_REASON,
    OBSERVED_AT_NOT_UTC,
    OPERATION_NOT_REVIEWED,
    ORPHAN_CAPABILITY,
    ORPHAN_EVIDENCE_SOURCE,
    ORPHAN_TRANSPORT,
    PAIRLING_LOOSER_THAN_SCHEMA,
    PINNED_WITHOUT_MEMBERSHIP,
    RECOVERY_UNAVAILABLE,
    RELEASE_IDENTITY_DIFFERS,
    RELEASED_BINDING_UNRELEASED_IMPLEMENTATION,
    RELEASED_BINDINGS_DIFFER,
    RELEASED_NON_RELEASABLE_PROVIDER,
    RELEASED_NOT_IMPLEMENTED,
    RELEASED_NOT_PINNED,
    REQUIREMENT_DIFFERS_FROM_REVIEW,
    REQUIREMENT_KIND_REPEATED,
    REQUIREMENT_KINDS_MISSING,
    REVIEWED_WITHOUT_BINDING,
    RUNTIME_PROVIDER_DIFFERS,
    SCHEMA_LOOSER_THAN_PAIRLING,
    SCHEMA_VIOLATION,
    SESSION_WITHOUT_GENERATION,
    SOURCE_URI_NOT_DIRECT,
    UNCORRELATED_AMBIGUITY,
    UNKNOWN_BINDING_CAPABILITY,
    UNKNOWN_BINDING_IMPLEMENTATION,
    UNKNOWN_CAPABILITY_IMPLEMENTATION,
    UNKNOWN_EVIDENCE_CLAIM,
    UNKNOWN_EVIDENCE_SOURCE,
    UNKNOWN_PROVIDER,
    UNKNOWN_TRANSPORT,
    UNRELATED_EVIDENCE,
    UNRESOLVED_CLAIM_SUBJECT,
    UNSUPPORTED_MAP_VERSION,
    VERSION_DIFFERS_FROM_MEMBERSHIP,
    WHITESPACE_ONLY,
    severity,
)
from ..errors import CanonicalizationError
from ..report import RawFinding
from .canonical import canonicalize, digest_hex
from .parse import check_value, parse_json, unescape_pointer_token
from .validate import CompiledSchema, bundled_schema, compile_schema

__all__ = ["check_map", "check_map_json", "seal_map", "seal_map_json"]

MAP_SCHEMA_ID = "pairling.capability-map.2.0.0"
MAP_SCHEMA_VERSION = "2.0.0"
DIGEST_FIELD = "semantic_digest"
DIGEST_PREFIX = "sha256:"

COLLECTIONS = (
    "evidence_sources",
    "providers",
    "implementations",
    "transports",
    "capabilities",
    "operation_bindings",
    "evidence_claims",
    "exclusions",
)
ID_FIELDS = {
    "evidence_sources": "source_id",
    "providers": "provider_id",
    "implementations": "implementation_id",
    "transports": "transport_id",
    "capabilities": "capability_id",
    "operation_bindings": "implementation_operation_id",
    "evidence_claims": "claim_id",
}
# Collections whose ids share the schema's graph_id space (PF202 looks across these).
GRAPH_ID_COLLECTIONS = (
    "implementations",
    "transports",
    "capabilities",
    "operation_bindings",
    "evidence_claims",
)
CITING_COLLECTIONS = (
    "providers",
    "capabilities",
    "operation_bindings",
    "evidence_claims",
    "exclusions",
)
PROVIDER_OWNED_COLLECTIONS = ("implementations", "transports", "capabilities")
SUBJECT_COLLECTIONS = {
    "implementation": "implementations",
    "capability": "capabilities",
    "operation_binding": "operation_bindings",
}

# Where the bundled schema is narrower than Pairling's validator, the schema is widened to what
# the validator accepts (docs/maps.md, "Schema and validator"); PF229 then names each value the
# unwidened schema would have refused, and PF228 each value the schema allows but the validator
# refuses.
SCHEMA_WIDENINGS: tuple[tuple[str, Any], ...] = (
    ("/$defs/provider_id/pattern", "^[a-z][a-z0-9_.-]{0,255}$"),
    ("/$defs/source_id/pattern", "^[a-z][a-z0-9_.-]{1,255}$"),
    (
        "/$defs/release_membership/properties/runtime_provider_id",
        {"type": "string", "minLength": 1},
    ),
    (
        "/$defs/implementation/properties/identity_status/enum",
        ["release_pinned", "source_pinned", "observed", "unversioned"],
    ),
    (
        "/$defs/evidence_claim/properties/classification/enum",
        [
            "vendor_surface",
            "pairling_support",
            "behavioral_evidence",
            "runtime_behavior",
            "exclusion",
        ],
    ),
    ("/$defs/effect/properties/target", {"type": "string", "minLength": 1}),
    (
        "/$defs/capability/properties/shared_semantics",
        {"oneOf": [{"type": "string", "minLength": 1}, {"type": "null"}]},
    ),
)
SCHEMA_TARGET_MAX = 128
# The six requirement kinds every binding must carry (Pairling's validator).
MANDATORY_REQUIREMENTS = (
    "confirmation",
    "device_scope",
    "exact_identity",
    "fresh_snapshot",
    "release_membership",
    "resource_proof",
)
EXACT_DIMENSIONS = ("provider", "implementation", "binding")
LOCAL_ONLY = ("required_local_only", "do_not_expose")
READ_EFFECT = "return_data"
RELEASABLE = "implementation_candidate"
RELEASE_IDENTITY = ("runtime_provider_id", "provider_version", "provider_channel")
RELEASE_FIELDS = (*RELEASE_IDENTITY, "launch_config_digest", "physical_device_required")
# (requirement kind, its field, the manifest operation's field it must equal)
REVIEWED_REQUIREMENTS = (
    ("device_scope", "scope", "required_device_scope"),
    ("resource_proof", "proof_kind", "resource_proof_kind"),
    ("confirmation", "mode", "confirmation_requirement"),
)
# Other pointers a root-cause finding lists before "and N more".
LISTED_REFERENCES = 5

if TYPE_CHECKING:
    from typing import TypeGuard

Entry = tuple[int, dict[str, Any]]


def _finding(code: str, message: str, pointer: str) -> RawFinding:
    return (code, severity(code), message, None, pointer, None)


def _is_array(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, (list, tuple))


def _text(entry: Any, key: str) -> str | None:
    value = entry.get(key) if isinstance(entry, dict) else None
    return value if isinstance(value, str) else None


def _texts(entry: dict[str, Any], key: str) -> Iterator[tuple[int, str]]:
    """(index, string) of each string in the array ``entry[key]``; nothing if it is no array."""
    values = entry.get(key)
    if _is_array(values):
        for index, value in enumerate(values):
            if isinstance(value, str):
                yield index, value


def _objects(entry: dict[str, Any], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, object) of each object in the array ``entry[key]``."""
    values = entry.get(key)
    if _is_array(values):
        for index, value in enumerate(values):
            if isinstance(value, dict):
                yield index, value


def _contains(entry: dict[str, Any], key: str, wanted: str) -> bool:
    return any(value == wanted for _, value in _texts(entry, key))


def _explicit(value: Any) -> bool:
    """Pairling's "explicit" text: a string with something besides whitespace (``str.strip``)."""
    return isinstance(value, str) and bool(value.strip())


def _blank(value: Any) -> bool:
    """A non-empty string of whitespace only (an empty one is the schema's minLength)."""
    return isinstance(value, str) and bool(value) and not value.strip()


def _id_chars(value: str, first: str, rest: str, low: int, high: int) -> bool:
    return (
        low <= len(value) <= high
        and value[0] in first
        and all(character in rest for character in value[1:])
    )


LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"


def _graph_id(value: str) -> bool:
    """Pairling's id pattern (its validator's; the schema's graph_id): [a-z][a-z0-9_.-]{1,255}."""
    return _id_chars(value, LOWER, LOWER + DIGITS + "_.-", 2, 256)


def _schema_provider_id(value: str) -> bool:
    """The bundled schema's provider_id: [a-z][a-z0-9_]{0,63}."""
    return _id_chars(value, LOWER, LOWER + DIGITS + "_", 1, 64)


def _schema_source_id(value: str) -> bool:
    """The bundled schema's source_id: [a-z][a-z0-9-]{1,127}."""
    return _id_chars(value, LOWER, LOWER + DIGITS + "-", 2, 128)


SCHEME_CHARS = frozenset(LOWER + LOWER.upper() + DIGITS + "+-.")


def _direct_source_uri(uri: str, kind: Any) -> bool:
    """A direct ``https://host/…`` URL without user info, or (for a ``checked_in_source``) a
    relative repository path with no empty, ``.`` or ``..`` segment. The scheme and host are
    split as ``urllib.parse.urlsplit`` does (leading controls and spaces ignored, tabs and line
    breaks dropped), so the verdict is the one Pairling's validator reaches."""
    if not uri.strip():
        return False
    parsed = "".join(c for c in uri.lstrip("".join(map(chr, range(33)))) if c not in "\t\r\n")
    colon = parsed.find(":")
    scheme = ""
    rest = parsed
    if colon > 0 and parsed[0] in LOWER + LOWER.upper() and set(parsed[:colon]) <= SCHEME_CHARS:
        scheme, rest = parsed[:colon].lower(), parsed[colon + 1 :]
    if scheme == "https":
        if not rest.startswith("//"):
            return False
        host = rest[2:]
        for delimiter in "/?#":
            host = host.split(delimiter, 1)[0]
        return bool(host) and "@" not in host and ("[" in host) == ("]" in host)
    if kind != "checked_in_source" or scheme or uri.startswith(("/", "~")):
        return False
    return all(part not in ("", ".", "..") for part in uri.split("/"))


def _leap_second(timestamp: str) -> bool:
    """``…THH:MM:60…``: the one RFC 3339 date-time Python's ``datetime`` cannot hold."""
    return (
        timestamp.isascii()
        and len(timestamp) >= 19
        and timestamp[10] in "Tt "
        and timestamp[16] == ":"
        and timestamp[17:19] == "60"
    )


def _references(pointers: list[str]) -> str:
    """``N references: a, b, … and K more`` for a root-cause finding."""
    others = pointers[1:]
    listed = ", ".join(others[:LISTED_REFERENCES])
    more = len(others) - LISTED_REFERENCES
    tail = f" and {more} more" if more > 0 else ""
    return f"{len(pointers)} references (also {listed}{tail})" if others else "1 reference"


class _Map:
    """The collections of one document, indexed by id (the first entry of an id wins)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.entries: dict[str, list[Entry]] = {}
        self.index: dict[str, dict[str, dict[str, Any]]] = {}
        self.first: dict[str, dict[str, int]] = {}
        for collection in COLLECTIONS:
            items = document.get(collection)
            entries = (
                [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]
                if _is_array(items)
                else []
            )
            self.entries[collection] = entries
            id_field = ID_FIELDS.get(collection)
            by_id: dict[str, dict[str, Any]] = {}
            first: dict[str, int] = {}
            if id_field is not None:
                for i, entry in entries:
                    entry_id = _text(entry, id_field)
                    if entry_id is not None and entry_id not in by_id:
                        by_id[entry_id] = entry
                        first[entry_id] = i
            self.index[collection] = by_id
            self.first[collection] = first

    def known_provider(self, provider_id: str | None) -> bool:
        return provider_id is not None and provider_id in self.index["providers"]

    def own_provider(self, entry: dict[str, Any]) -> str | None:
        """The provider of an entry, when it has one and that provider is itself known."""
        provider = _text(entry, "provider_id")
        return provider if self.known_provider(provider) else None

    def provider_of(self, collection: str, entry_id: str) -> str | None:
        """The known provider of the known entry ``entry_id`` of ``collection``."""
        entry = self.index[collection].get(entry_id)
        return self.own_provider(entry) if entry is not None else None


def _uniqueness(graph: _Map) -> Iterator[RawFinding]:
    for collection, id_field in ID_FIELDS.items():
        first = graph.first[collection]
        for i, entry in graph.entries[collection]:
            entry_id = _text(entry, id_field)
            if entry_id is not None and first[entry_id] != i:
                yield _finding(
                    DUPLICATE_ID,
                    f"duplicate {id_field} '{entry_id}': already used by "
                    f"/{collection}/{first[entry_id]}",
                    f"/{collection}/{i}/{id_field}",
                )
    owners: dict[str, tuple[str, int]] = {}
    for collection in GRAPH_ID_COLLECTIONS:
        id_field = ID_FIELDS[collection]
        for entry_id, i in graph.first[collection].items():
            owner = owners.get(entry_id)
            if owner is None:
                owners[entry_id] = (collection, i)
                continue
            owner_collection, owner_index = owner
            yield _finding(
                ID_REUSED_ACROSS_COLLECTIONS,
                f"graph id '{entry_id}' is also the {ID_FIELDS[owner_collection]} of "
                f"/{owner_collection}/{owner_index}",
                f"/{collection}/{i}/{id_field}",
            )


def _source_refs(graph: _Map) -> Iterator[RawFinding]:
    for collection in CITING_COLLECTIONS:
        for i, entry in graph.entries[collection]:
            yield from _resolve(graph, CITED_SOURCES, entry, f"/{collection}/{i}")


def _providers(graph: _Map) -> Iterator[RawFinding]:
    """PF204 once per unknown provider id, at its first reference, with how many there are: a
    renamed provider is one defect, not one per entry that names it."""
    unknown: dict[str, list[str]] = {}
    for collection in PROVIDER_OWNED_COLLECTIONS:
        for i, entry in graph.entries[collection]:
            provider = _text(entry, "provider_id")
            if provider is not None and not graph.known_provider(provider):
                unknown.setdefault(provider, []).append(f"/{collection}/{i}/provider_id")
    for provider, pointers in unknown.items():
        yield _finding(
            UNKNOWN_PROVIDER,
            f"provider_id '{provider}' names no provider; {_references(pointers)}",
            pointers[0],
        )


class _Reference(NamedTuple):
    """A list of ids, ``field``, whose every id must name an entry of the collection ``target``;
    one that names none is ``unknown_code``."""

    field: str
    target: str
    unknown_code: str
    target_noun: str


CITED_SOURCES = _Reference(
    "source_refs", "evidence_sources", UNKNOWN_EVIDENCE_SOURCE, "evidence source"
)
BOUND_CAPABILITIES = _Reference(
    "capability_ids", "capabilities", UNKNOWN_BINDING_CAPABILITY, "capability"
)
BINDING_EVIDENCE = _Reference(
    "evidence_claim_ids", "evidence_claims", UNKNOWN_EVIDENCE_CLAIM, "evidence claim"
)


class _SameProviderRule(NamedTuple):
    """Each entry of the reference list names an entry of its target (else its unknown code) that
    belongs to the referring entry's provider (else ``foreign_code``, when both providers are
    known)."""

    reference: _Reference
    foreign_code: str
    owner_noun: str


# PF206 is pairling_fast's own lint: Pairling's validator does not compare transport providers.
TRANSPORTS_OF_IMPLEMENTATION = _SameProviderRule(
    _Reference("transport_ids", "transports", UNKNOWN_TRANSPORT, "transport"),
    FOREIGN_TRANSPORT,
    "implementation",
)
IMPLEMENTATIONS_OF_CAPABILITY = _SameProviderRule(
    _Reference(
        "implementation_ids", "implementations", UNKNOWN_CAPABILITY_IMPLEMENTATION, "implementation"
    ),
    FOREIGN_IMPLEMENTATION,
    "capability",
)


def _resolve(
    graph: _Map, reference: _Reference, entry: dict[str, Any], base: str
) -> Generator[RawFinding, None, list[tuple[str, str, dict[str, Any]]]]:
    """Yields a finding for each id of ``reference.field`` in ``entry`` that names no entry of its
    target; returns (pointer, id, entry) of the others, for the caller's further rules. The one
    place that words and locates an unknown reference."""
    field = reference.field
    target = graph.index[reference.target]
    resolved = []
    for j, target_id in _texts(entry, field):
        pointer = f"{base}/{field}/{j}"
        found = target.get(target_id)
        if found is None:
            message = f"{field} entry '{target_id}' names no {reference.target_noun}"
            yield _finding(reference.unknown_code, message, pointer)
        else:
            resolved.append((pointer, target_id, found))
    return resolved


def _same_provider(
    graph: _Map, rule: _SameProviderRule, entry: dict[str, Any], base: str
) -> Iterator[RawFinding]:
    own_provider = graph.own_provider(entry)
    noun = rule.reference.target_noun
    resolved = yield from _resolve(graph, rule.reference, entry, base)
    for pointer, target_id, _ in resolved:
        other = graph.provider_of(rule.reference.target, target_id)
        if own_provider is not None and other not in (None, own_provider):
            yield _finding(
                rule.foreign_code,
                f"{noun} '{target_id}' belongs to provider '{other}', not to the "
                f"{rule.owner_noun}'s provider '{own_provider}'",
                pointer,
            )


def _explicit_texts(
    base: str, entry: dict[str, Any], fields: Iterable[str]
) -> Iterator[RawFinding]:
    for field in fields:
        if _blank(entry.get(field)):
            yield _finding(WHITESPACE_ONLY, f"{field} is only whitespace", f"{base}/{field}")


def _explicit_items(base: str, entry: dict[str, Any], field: str) -> Iterator[RawFinding]:
    for j, value in _texts(entry, field):
        if _blank(value):
            yield _finding(
                WHITESPACE_ONLY, f"{field} entry is only whitespace", f"{base}/{field}/{j}"
            )


def _document(graph: _Map) -> Iterator[RawFinding]:
    document = graph.document
    observed_at = _text(document, "observed_at")
    if observed_at is not None and not observed_at.endswith("Z"):
        yield _finding(
            OBSERVED_AT_NOT_UTC,
            f"observed_at '{observed_at}' is not in UTC (Pairling requires the 'Z' suffix)",
            "/observed_at",
        )
    elif observed_at is not None and _leap_second(observed_at):
        yield _finding(
            OBSERVED_AT_NOT_UTC,
            f"observed_at '{observed_at}' has second 60: RFC 3339 allows a leap second, "
            "Pairling's timestamp parser does not",
            "/observed_at",
        )
    policy = document.get("evidence_policy")
    if isinstance(policy, dict):
        yield from _explicit_texts(
            "/evidence_policy", policy, ("rule", "machine_readable_qualification", "safety_rule")
        )
    exclusions = document.get("exclusions")
    if _is_array(exclusions) and not exclusions:
        yield _finding(
            SCHEMA_LOOSER_THAN_PAIRLING,
            "exclusions is empty: the schema allows it, Pairling's validator requires at least "
            "one exclusion",
            "/exclusions",
        )


def _sources(graph: _Map) -> Iterator[RawFinding]:
    for i, source in graph.entries["evidence_sources"]:
        base = f"/evidence_sources/{i}"
        source_id = _text(source, "source_id")
        if source_id is not None and _graph_id(source_id) and not _schema_source_id(source_id):
            yield _finding(
                PAIRLING_LOOSER_THAN_SCHEMA,
                f"source_id '{source_id}' is accepted by Pairling's validator but not by the "
                "bundled schema's source_id pattern ^[a-z][a-z0-9-]{1,127}$",
                f"{base}/source_id",
            )
        uri = _text(source, "uri")
        if uri and not _direct_source_uri(uri, source.get("kind")):
            yield _finding(
                SOURCE_URI_NOT_DIRECT,
                f"uri '{uri}' is neither a direct https:// URL nor, for a checked_in_source, a "
                "relative repository path",
                f"{base}/uri",
            )


def _provider_entries(graph: _Map) -> Iterator[RawFinding]:
    for i, provider in graph.entries["providers"]:
        base = f"/providers/{i}"
        provider_id = _text(provider, "provider_id")
        if provider_id is not None and _graph_id(provider_id) != _schema_provider_id(provider_id):
            if _graph_id(provider_id):
                yield _finding(
                    PAIRLING_LOOSER_THAN_SCHEMA,
                    f"provider_id '{provider_id}' is accepted by Pairling's validator but not by "
                    "the bundled schema's provider_id pattern ^[a-z][a-z0-9_]{0,63}$",
                    f"{base}/provider_id",
                )
            elif _schema_provider_id(provider_id):
                yield _finding(
                    SCHEMA_LOOSER_THAN_PAIRLING,
                    f"provider_id '{provider_id}' matches the bundled schema but Pairling's "
                    "validator requires ids of at least two characters",
                    f"{base}/provider_id",
                )
        yield from _explicit_texts(base, provider, ("display_name",))
        eligibility = provider.get("implementation_eligibility")
        if isinstance(eligibility, dict):
            yield from _explicit_texts(
                f"{base}/implementation_eligibility", eligibility, ("reason",)
            )


def _implementations(graph: _Map) -> Iterator[RawFinding]:
    runtime_identities: dict[tuple[str, str, str], int] = {}
    for i, entry in graph.entries["implementations"]:
        base = f"/implementations/{i}"
        own_provider = graph.own_provider(entry)
        yield from _same_provider(graph, TRANSPORTS_OF_IMPLEMENTATION, entry, base)
        status = _text(entry, "identity_status")
        if status == "unversioned":
            yield _finding(
                PAIRLING_LOOSER_THAN_SCHEMA,
                "identity_status 'unversioned' is accepted by Pairling's validator but not by the "
                "bundled schema",
                f"{base}/identity_status",
            )
        yield from _explicit_texts(base, entry, ("provider_version", "provider_channel"))
        yield from _explicit_items(base, entry, "observed_versions")
        yield from _explicit_items(base, entry, "observed_channels")
        membership = entry.get("release_membership")
        if not isinstance(membership, dict):
            if status == "release_pinned":
                yield _finding(
                    PINNED_WITHOUT_MEMBERSHIP,
                    "identity_status is release_pinned but the implementation has no "
                    "release_membership",
                    f"{base}/identity_status",
                )
            continue
        release = f"{base}/release_membership"
        yield from _explicit_texts(release, membership, RELEASE_IDENTITY)
        runtime = _text(membership, "runtime_provider_id")
        if _explicit(runtime) and not _schema_provider_id(runtime or ""):
            yield _finding(
                PAIRLING_LOOSER_THAN_SCHEMA,
                f"runtime_provider_id '{runtime}' is accepted by Pairling's validator but not "
                "by the bundled schema's provider_id pattern",
                f"{release}/runtime_provider_id",
            )
        if runtime is not None and own_provider is not None and runtime != own_provider:
            yield _finding(
                RUNTIME_PROVIDER_DIFFERS,
                f"runtime_provider_id '{runtime}' (the runtime's provider key) differs from the "
                f"map provider '{own_provider}'",
                f"{release}/runtime_provider_id",
            )
        if status is not None and status != "release_pinned":
            yield _finding(
                RELEASED_NOT_PINNED,
                f"the implementation has a release_membership but its identity_status is "
                f"'{status}', not release_pinned",
                f"{base}/identity_status",
            )
        for code, field in (
            (VERSION_DIFFERS_FROM_MEMBERSHIP, "provider_version"),
            (CHANNEL_DIFFERS_FROM_MEMBERSHIP, "provider_channel"),
        ):
            own, released = _text(entry, field), _text(membership, field)
            if own is not None and released is not None and own != released:
                yield _finding(
                    code,
                    f"{field} '{own}' differs from the release membership's '{released}'",
                    f"{base}/{field}",
                )
        # Like Pairling's validator, only the first entry of an id has a runtime identity.
        first = graph.first["implementations"].get(_text(entry, "implementation_id") or "") == i
        identity = tuple(_text(membership, field) for field in RELEASE_IDENTITY)
        if first and all(part is not None for part in identity):
            key = (identity[0] or "", identity[1] or "", identity[2] or "")
            prior = runtime_identities.setdefault(key, i)
            if prior != i:
                yield _finding(
                    AMBIGUOUS_RUNTIME_IDENTITY,
                    f"runtime identity {key[0]} {key[1]} {key[2]} (runtime_provider_id, "
                    f"provider_version, provider_channel) is also /implementations/{prior}'s: "
                    "the runtime cannot tell them apart",
                    release,
                )


def _transports(graph: _Map) -> Iterator[RawFinding]:
    for i, transport in graph.entries["transports"]:
        base = f"/transports/{i}"
        yield from _explicit_texts(base, transport, ("description",))
        if _text(transport, "kind") == "manager":
            yield _finding(
                SCHEMA_LOOSER_THAN_PAIRLING,
                "transport kind 'manager' is in the bundled schema but not among the kinds "
                "Pairling's validator accepts",
                f"{base}/kind",
            )


def _capabilities(graph: _Map) -> Iterator[RawFinding]:
    for i, entry in graph.entries["capabilities"]:
        base = f"/capabilities/{i}"
        yield from _same_provider(graph, IMPLEMENTATIONS_OF_CAPABILITY, entry, base)
        yield from _explicit_texts(base, entry, ("behavior", "version_constraints"))
        yield from _explicit_items(base, entry, "exact_exposure")
        exposure = entry.get("exact_exposure")
        if _is_array(exposure) and all(_explicit(value) for value in exposure):
            seen: set[str] = set()
            for j, value in _texts(entry, "exact_exposure"):
                if value in seen:
                    yield _finding(
                        DUPLICATE_EXACT_EXPOSURE,
                        f"exact_exposure entry '{value}' is repeated",
                        f"{base}/exact_exposure/{j}",
                    )
                seen.add(value)
        shared = _text(entry, "shared_semantics")
        if _blank(shared):
            yield _finding(
                WHITESPACE_ONLY, "shared_semantics is only whitespace", f"{base}/shared_semantics"
            )
        elif shared and not _graph_id(shared):
            yield _finding(
                PAIRLING_LOOSER_THAN_SCHEMA,
                f"shared_semantics '{shared}' is accepted by Pairling's validator but is not a "
                "graph id as the bundled schema requires",
                f"{base}/shared_semantics",
            )
        safety = _text(entry, "remote_safety")
        if safety in LOCAL_ONLY and not _explicit(entry.get("required_pairling_addition")):
            yield _finding(
                LOCAL_ONLY_WITHOUT_REASON,
                f"remote_safety is {safety} but required_pairling_addition does not say why or "
                "what would make it safe",
                f"{base}/required_pairling_addition",
            )


def _requirements(binding: dict[str, Any], base: str) -> Iterator[RawFinding]:
    requires = binding.get("requires")
    if not _is_array(requires):
        return
    kinds: set[str] = set()
    for j, requirement in _objects(binding, "requires"):
        kind = _text(requirement, "kind")
        if kind is None:
            continue
        pointer = f"{base}/requires/{j}"
        if kind in kinds:
            yield _finding(
                REQUIREMENT_KIND_REPEATED, f"requirement kind {kind} is repeated", pointer
            )
        kinds.add(kind)
        age = requirement.get("max_age_seconds")
        if (
            kind == "fresh_snapshot"
            and isinstance(age, float)
            and age.is_integer()
            and 1 <= age <= 30
        ):
            yield _finding(
                MAX_AGE_NOT_INTEGER,
                f"max_age_seconds {age!r} is a float: Pairling's validator wants an integer "
                "literal (and its digest of the binding differs)",
                f"{pointer}/max_age_seconds",
            )
        if kind == "exact_identity" and _is_array(requirement.get("dimensions")):
            dimensions = {value for _, value in _texts(requirement, "dimensions")}
            lacking = [item for item in EXACT_DIMENSIONS if item not in dimensions]
            if lacking:
                yield _finding(
                    EXACT_IDENTITY_INCOMPLETE,
                    f"exact_identity dimensions lack {', '.join(lacking)} (an exact "
                    "implementation identity is provider, implementation and binding)",
                    f"{pointer}/dimensions",
                )
            if ("session" in dimensions) != ("generation" in dimensions):
                yield _finding(
                    SESSION_WITHOUT_GENERATION,
                    "exact_identity dimensions must name session and generation together",
                    f"{pointer}/dimensions",
                )
    missing = [kind for kind in MANDATORY_REQUIREMENTS if kind not in kinds]
    if missing:
        yield _finding(
            REQUIREMENT_KINDS_MISSING,
            f"requires lacks the mandatory requirement kinds {', '.join(missing)}",
            f"{base}/requires",
        )


def _retry(binding: dict[str, Any], base: str) -> Iterator[RawFinding]:
    retry = binding.get("retry")
    if not isinstance(retry, dict):
        return
    effects = binding.get("effects")
    read_only = (
        _is_array(effects)
        and len(effects) == 1
        and isinstance(effects[0], dict)
        and effects[0].get("kind") == READ_EFFECT
    )
    replay, recovery = _text(retry, "replay"), _text(retry, "recovery")
    ambiguity, correlation = _text(retry, "ambiguity"), _text(retry, "correlation")
    if replay == "safe" and not read_only:
        yield _finding(
            MUTATING_REPLAY_SAFE,
            "retry.replay is safe but the binding has effects other than return_data",
            f"{base}/retry/replay",
        )
    if replay == "recover_only" and recovery == "unavailable":
        yield _finding(
            RECOVERY_UNAVAILABLE,
            "retry.replay is recover_only but recovery is unavailable",
            f"{base}/retry/recovery",
        )
    if ambiguity == "outcome_unknown" and correlation == "none":
        yield _finding(
            UNCORRELATED_AMBIGUITY,
            "retry.ambiguity is outcome_unknown but correlation is none: an unknown outcome "
            "could never be matched to its action",
            f"{base}/retry/correlation",
        )


def _has_confirmation(binding: dict[str, Any]) -> bool:
    return any(
        requirement.get("kind") == "confirmation"
        and isinstance(requirement.get("mode"), str)
        and requirement.get("mode") != "none"
        for _, requirement in _objects(binding, "requires")
    )


def _bindings(graph: _Map) -> Iterator[RawFinding]:
    implementations = graph.index["implementations"]
    for i, binding in graph.entries["operation_bindings"]:
        base = f"/operation_bindings/{i}"
        binding_id = _text(binding, "implementation_operation_id")
        implementation_id = _text(binding, "implementation_id")
        implementation = (
            implementations.get(implementation_id) if implementation_id is not None else None
        )
        if implementation_id is not None and implementation is None:
            yield _finding(
                UNKNOWN_BINDING_IMPLEMENTATION,
                f"implementation_id '{implementation_id}' names no implementation",
                f"{base}/implementation_id",
            )
        released = _text(binding, "release_status") == "released"
        exposed = released and _text(binding, "implementation_status") == "implemented"
        confirmed = _has_confirmation(binding)
        bound = yield from _resolve(graph, BOUND_CAPABILITIES, binding, base)
        for pointer, capability_id, capability in bound:
            if (
                implementation is not None
                and _is_array(capability.get("implementation_ids"))
                and not _contains(capability, "implementation_ids", implementation_id or "")
            ):
                yield _finding(
                    CAPABILITY_NOT_OFFERED,
                    f"capability '{capability_id}' does not list implementation "
                    f"'{implementation_id}' in its implementation_ids",
                    pointer,
                )
            safety = _text(capability, "remote_safety")
            if safety == "do_not_expose" and exposed:
                yield _finding(
                    DO_NOT_EXPOSE_RELEASED,
                    f"implemented and released binding exposes capability '{capability_id}' "
                    "whose remote_safety is do_not_expose",
                    pointer,
                )
            if safety == "confirmation" and not confirmed:
                yield _finding(
                    CONFIRMATION_NOT_BOUND,
                    f"capability '{capability_id}' requires confirmation but the binding has no "
                    "confirmation requirement with a mode other than none",
                    pointer,
                )
        related = {value for _, value in _texts(binding, "capability_ids") if value}
        if binding_id is not None:
            related.add(binding_id)
        cited = yield from _resolve(graph, BINDING_EVIDENCE, binding, base)
        for pointer, claim_id, claim in cited:
            if (subject := _text(claim, "subject_id")) not in related:
                about = "no subject id" if subject is None else f"'{subject}'"
                yield _finding(
                    UNRELATED_EVIDENCE,
                    f"evidence claim '{claim_id}' is about {about}, neither this binding nor one "
                    "of its capabilities",
                    pointer,
                )
        yield from _requirements(binding, base)
        for j, effect in _objects(binding, "effects"):
            if _blank(effect.get("target")):
                yield _finding(
                    WHITESPACE_ONLY, "target is only whitespace", f"{base}/effects/{j}/target"
                )
            target = _text(effect, "target")
            if target is not None and len(target) > SCHEMA_TARGET_MAX and _explicit(target):
                yield _finding(
                    PAIRLING_LOOSER_THAN_SCHEMA,
                    f"target of {len(target)} characters is accepted by Pairling's validator but "
                    f"the bundled schema allows at most {SCHEMA_TARGET_MAX}",
                    f"{base}/effects/{j}/target",
                )
        forbidden: set[str] = set()
        for j, row in _objects(binding, "forbids"):
            kind = _text(row, "kind")
            if kind is not None and kind in forbidden:
                yield _finding(
                    FORBIDDEN_ACTION_REPEATED,
                    f"forbidden action {kind} is repeated",
                    f"{base}/forbids/{j}",
                )
            if kind is not None:
                forbidden.add(kind)
        yield from _retry(binding, base)
        if _text(binding, "release_status") == "not_released" and not _explicit(
            binding.get("required_pairling_addition")
        ):
            yield _finding(
                NOT_RELEASED_WITHOUT_REASON,
                "the binding is not_released but required_pairling_addition gives no reason",
                f"{base}/required_pairling_addition",
            )
        if not released:
            continue
        status = _text(binding, "implementation_status")
        if status is not None and status != "implemented":
            yield _finding(
                RELEASED_NOT_IMPLEMENTED,
                f"release_status is released but implementation_status is '{status}'",
                f"{base}/implementation_status",
            )
        if implementation is None:
            continue
        if not isinstance(implementation.get("release_membership"), dict):
            yield _finding(
                RELEASED_BINDING_UNRELEASED_IMPLEMENTATION,
                f"release_status is released but implementation '{implementation_id}' has no "
                "release_membership",
                f"{base}/release_status",
            )
        provider_id = graph.own_provider(implementation)
        provider = graph.index["providers"].get(provider_id) if provider_id else None
        if provider is not None:
            eligibility = provider.get("implementation_eligibility")
            status = _text(eligibility, "status")
            if status != RELEASABLE:
                described = "without an eligibility status" if status is None else f"'{status}'"
                yield _finding(
                    RELEASED_NON_RELEASABLE_PROVIDER,
                    f"release_status is released but provider '{provider_id}' is {described}, "
                    f"not {RELEASABLE}",
                    f"{base}/release_status",
                )


def _claims(graph: _Map) -> Iterator[RawFinding]:
    for i, claim in graph.entries["evidence_claims"]:
        base = f"/evidence_claims/{i}"
        subject_type = _text(claim, "subject_type")
        subject_id = _text(claim, "subject_id")
        collection = SUBJECT_COLLECTIONS.get(subject_type or "")
        if collection is not None and subject_id is not None:
            if subject_id not in graph.index[collection]:
                yield _finding(
                    UNRESOLVED_CLAIM_SUBJECT,
                    f"subject_id '{subject_id}' names no entry of {collection} "
                    f"(subject_type {subject_type})",
                    f"{base}/subject_id",
                )
        classification = _text(claim, "classification")
        if classification == "behavioral_evidence":
            yield _finding(
                SCHEMA_LOOSER_THAN_PAIRLING,
                "classification 'behavioral_evidence' is in the bundled schema but Pairling's "
                "validator accepts vendor_surface, pairling_support, runtime_behavior and "
                "exclusion",
                f"{base}/classification",
            )
        elif classification in ("runtime_behavior", "exclusion"):
            yield _finding(
                PAIRLING_LOOSER_THAN_SCHEMA,
                f"classification '{classification}' is accepted by Pairling's validator but not "
                "by the bundled schema",
                f"{base}/classification",
            )
        yield from _explicit_texts(base, claim, ("assertion",))


def _exclusions(graph: _Map) -> Iterator[RawFinding]:
    items: dict[str, int] = {}
    for i, exclusion in graph.entries["exclusions"]:
        base = f"/exclusions/{i}"
        yield from _explicit_texts(base, exclusion, ("item", "reason"))
        item = _text(exclusion, "item")
        if item is not None and _explicit(item):
            prior = items.setdefault(item, i)
            if prior != i:
                yield _finding(
                    DUPLICATE_EXCLUSION,
                    f"exclusion item '{item}' is already /exclusions/{prior}",
                    f"{base}/item",
                )


def _orphans(graph: _Map) -> Iterator[RawFinding]:
    policy = graph.document.get("evidence_policy")
    if isinstance(policy, dict) and policy.get("missing_evidence_is_unsupported") is True:
        evidenced = {
            subject
            for _, claim in graph.entries["evidence_claims"]
            if _text(claim, "subject_type") == "capability"
            and (subject := _text(claim, "subject_id")) is not None
        }
        yield from _unused(
            graph,
            "capabilities",
            evidenced,
            CAPABILITY_WITHOUT_EVIDENCE,
            lambda capability_id: (
                f"no evidence claim has capability '{capability_id}' as its "
                "subject (evidence_policy.missing_evidence_is_unsupported)"
            ),
        )
    yield from _unused(
        graph,
        "transports",
        _cited(graph.entries["implementations"], "transport_ids"),
        ORPHAN_TRANSPORT,
        lambda transport_id: f"no implementation uses transport '{transport_id}'",
    )
    yield from _unused(
        graph,
        "evidence_sources",
        _cited(
            (entry for collection in CITING_COLLECTIONS for entry in graph.entries[collection]),
            "source_refs",
        ),
        ORPHAN_EVIDENCE_SOURCE,
        lambda source_id: f"nothing cites evidence source '{source_id}'",
    )
    yield from _unused(
        graph,
        "capabilities",
        _cited(graph.entries["operation_bindings"], "capability_ids"),
        ORPHAN_CAPABILITY,
        lambda capability_id: f"no operation binding binds capability '{capability_id}'",
    )


def _unused(
    graph: _Map, collection: str, used: set[str], code: str, message: Callable[[str], str]
) -> Iterator[RawFinding]:
    """A warning for each entry of ``collection`` whose id is not in ``used``."""
    id_field = ID_FIELDS[collection]
    for i, entry in graph.entries[collection]:
        entry_id = _text(entry, id_field)
        if entry_id is not None and entry_id not in used:
            yield _finding(code, message(entry_id), f"/{collection}/{i}/{id_field}")


def _cited(entries: Iterable[Entry], key: str) -> set[str]:
    return {value for _, entry in entries for _, value in _texts(entry, key)}


# ---------------------------------------------------------------------------------------------
# The release join against Pairling's reviewed operation manifest


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


def semantic_digest(binding: dict[str, Any]) -> str:
    """``pairling.semantic-digest.v1``: sha256 of JCS(binding without ``semantic_digest``)."""
    content = {key: value for key, value in binding.items() if key != DIGEST_FIELD}
    return DIGEST_PREFIX + digest_hex(content)


def _digests(graph: _Map, counts: dict[str, int]) -> Iterator[RawFinding]:
    for i, binding in graph.entries["operation_bindings"]:
        recorded = _text(binding, DIGEST_FIELD)
        if recorded is None:
            continue
        try:
            expected = semantic_digest(binding)
        except CanonicalizationError as error:
            yield _finding(error.code, error.message, f"/operation_bindings/{i}{error.pointer}")
            continue
        if expected == recorded:
            counts["verified"] += 1
        else:
            counts["mismatched"] += 1
            yield _finding(
                DIGEST_MISMATCH,
                f"semantic_digest mismatch: expected {expected}, found {recorded}",
                f"/operation_bindings/{i}/{DIGEST_FIELD}",
            )
    bindings = graph.document.get("operation_bindings")
    total = len(bindings) if _is_array(bindings) else 0
    counts["unchecked"] = total - counts["verified"] - counts["mismatched"]


def _document_position(document: Any, pointer: str | None) -> list[tuple[int, str]]:
    """Where ``pointer`` is in the document: member and item positions, token by token.

    Object members count in their order in the document, array items by index; a token that does
    not resolve (a missing member) sorts after everything that does, by its text.
    """
    position: list[tuple[int, str]] = []
    node: Any = document
    resolved = True
    for raw_token in (pointer or "").split("/")[1:]:
        token = unescape_pointer_token(raw_token)
        if resolved and isinstance(node, dict) and token in node:
            position.append((list(node).index(token), ""))
            node = node[token]
        elif (
            resolved
            and _is_array(node)
            and token.isascii()
            and token.isdigit()
            and int(token) < len(node)
        ):
            position.append((int(token), ""))
            node = node[int(token)]
        else:
            resolved = False
            position.append((sys.maxsize, token))
    return position


def _in_document_order(document: Any, findings: list[RawFinding]) -> list[RawFinding]:
    return sorted(
        findings,
        key=lambda f: (_document_position(document, f[4]), f[0], f[5] or ""),
    )


def _empty_stats() -> dict[str, Any]:
    return {
        "collections": dict.fromkeys(COLLECTIONS, 0),
        "schema_violations": 0,
        "digests": {"verified": 0, "mismatched": 0, "unchecked": 0},
    }


@cache
def map_validator() -> CompiledSchema:
    """The bundled map schema with ``SCHEMA_WIDENINGS`` applied, compiled once."""
    schema = copy.deepcopy(bundled_schema(MAP_SCHEMA_ID))
    for pointer, value in SCHEMA_WIDENINGS:
        *path, last = pointer.split("/")[1:]
        node = schema
        for token in path:
            node = node[token]
        node[last] = value
    return compile_schema(schema, validate_formats=True)


def _other_version(document: Any) -> RawFinding | None:
    """A map of another schema_version is reported as such, not checked against 2.0.0 rules."""
    version = _text(document, "schema_version")
    if version is None or version == MAP_SCHEMA_VERSION:
        return None
    return _finding(
        UNSUPPORTED_MAP_VERSION,
        f"capability map schema_version '{version}': pairling_fast checks schema_version "
        f"{MAP_SCHEMA_VERSION} only (Pairling's validator rejects other versions too)",
        "/schema_version",
    )


def _check_document(document: Any, manifest: Any = None) -> tuple[list[RawFinding], dict[str, Any]]:
    stats = _empty_stats()
    other_version = _other_version(document)
    if other_version is not None:
        return [other_version], stats
    findings: list[RawFinding] = [
        (SCHEMA_VIOLATION, severity(SCHEMA_VIOLATION), message, None, pointer, schema_pointer)
        for pointer, schema_pointer, _keyword, message in map_validator().errors(document)
    ]
    stats["schema_violations"] = len(findings)
    if not isinstance(document, dict):
        return _in_document_order(document, findings), stats
    for collection in COLLECTIONS:
        items = document.get(collection)
        stats["collections"][collection] = len(items) if _is_array(items) else 0
    graph = _Map(document)
    for rule in (
        _document,
        _uniqueness,
        _source_refs,
        _sources,
        _provider_entries,
        _providers,
        _implementations,
        _transports,
        _capabilities,
        _bindings,
        _claims,
        _exclusions,
    ):
        findings.extend(rule(graph))
    findings.extend(_digests(graph, stats["digests"]))
    findings.extend(_orphans(graph))
    if manifest is not None:
        findings.extend(_release_join(graph, manifest))
    return _in_document_order(document, findings), stats


def check_map(document: Any, manifest: Any = None) -> tuple[list[RawFinding], dict[str, Any]]:
    """Check a parsed map (Python values); a value outside the JSON model is one finding.

    ``manifest``, when given, is Pairling's reviewed operation manifest (parsed JSON; a value
    outside the JSON model raises ``CanonicalizationError``): the release-join rules PF254 to PF260
    then run too."""
    if manifest is not None:
        check_value(manifest)
    try:
        check_value(document)
    except CanonicalizationError as error:
        return [_finding(error.code, error.message, error.pointer)], _empty_stats()
    return _check_document(document, manifest)


def check_map_json(
    data: bytes | str, manifest: Any = None
) -> tuple[list[RawFinding], dict[str, Any]]:
    """Parse JSON text strictly, then check it; a parse error is the one finding."""
    if manifest is not None:
        check_value(manifest)
    try:
        document = parse_json(data)
    except CanonicalizationError as error:
        message = error.message
        if error.line is not None and error.column is not None:
            message += f" (line {error.line}, column {error.column})"
        finding: RawFinding = (
            error.code,
            severity(error.code),
            message,
            error.line,
            error.pointer,
            None,
        )
        return [finding], _empty_stats()
    return _check_document(document, manifest)


def seal_map(document: Any) -> Any:
    """A copy of the map with every binding's semantic_digest recomputed (no other check)."""
    check_value(document)
    if not isinstance(document, dict) or not _is_array(document.get("operation_bindings")):
        return document
    bindings = []
    for i, binding in enumerate(document["operation_bindings"]):
        if isinstance(binding, dict):
            try:
                binding = {**binding, DIGEST_FIELD: semantic_digest(binding)}
            except CanonicalizationError as error:
                pointer = f"/operation_bindings/{i}{error.pointer}"
                raise CanonicalizationError(error.code, error.message, pointer) from None
        bindings.append(binding)
    return {**document, "operation_bindings": bindings}


def seal_map_json(data: bytes | str) -> Any:
    """Parse JSON text strictly, then seal it (see ``seal_map``)."""
    return seal_map(parse_json(data))
