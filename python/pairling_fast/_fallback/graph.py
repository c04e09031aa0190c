"""Capability maps: schema, referential integrity and semantic digests (↔ ``rust/graph.rs``).

One pass over a ``pairling.capability-map.2.0.0`` document: strict parse, schema validation, then
every integrity rule of ``docs/maps.md`` (PF201 to PF227), which run even when the schema found
errors: an entry or field of the wrong type is skipped, never trusted. Findings come out in
document order (see ``_document_position``), so both backends list them identically.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import CanonicalizationError
from ..report import RawFinding, Severity
from .canonical import digest_hex
from .parse import check_value, parse_json
from .validate import bundled_validator

__all__ = ["check_map", "check_map_json", "seal_map", "seal_map_json"]

MAP_SCHEMA_ID = "pairling.capability-map.2.0.0"
SCHEMA_VIOLATION = "PF101"
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

if TYPE_CHECKING:
    from typing import TypeGuard

Entry = tuple[int, dict[str, Any]]


def _finding(code: str, severity: Severity, message: str, pointer: str) -> RawFinding:
    return (code, severity, message, None, pointer, None)


def _error(code: str, message: str, pointer: str) -> RawFinding:
    return _finding(code, "error", message, pointer)


def _warning(code: str, message: str, pointer: str) -> RawFinding:
    return _finding(code, "warning", message, pointer)


def _is_array(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, (list, tuple))


def _text(entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    return value if isinstance(value, str) else None


def _texts(entry: dict[str, Any], key: str) -> Iterator[tuple[int, str]]:
    """(index, string) of each string in the array ``entry[key]``; nothing if it is no array."""
    values = entry.get(key)
    if _is_array(values):
        for index, value in enumerate(values):
            if isinstance(value, str):
                yield index, value


def _contains(entry: dict[str, Any], key: str, wanted: str) -> bool:
    return any(value == wanted for _, value in _texts(entry, key))


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
                yield _error(
                    "PF201",
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
            yield _warning(
                "PF202",
                f"graph id '{entry_id}' is also the {ID_FIELDS[owner_collection]} of "
                f"/{owner_collection}/{owner_index}",
                f"/{collection}/{i}/{id_field}",
            )


def _source_refs(graph: _Map) -> Iterator[RawFinding]:
    sources = graph.index["evidence_sources"]
    for collection in CITING_COLLECTIONS:
        for i, entry in graph.entries[collection]:
            for j, source_id in _texts(entry, "source_refs"):
                if source_id not in sources:
                    yield _error(
                        "PF203",
                        f"source_refs entry '{source_id}' names no evidence source",
                        f"/{collection}/{i}/source_refs/{j}",
                    )


def _providers(graph: _Map) -> Iterator[RawFinding]:
    for collection in PROVIDER_OWNED_COLLECTIONS:
        for i, entry in graph.entries[collection]:
            provider = _text(entry, "provider_id")
            if provider is not None and not graph.known_provider(provider):
                yield _error(
                    "PF204",
                    f"provider_id '{provider}' names no provider",
                    f"/{collection}/{i}/provider_id",
                )


class _SameProviderRule(NamedTuple):
    """Each entry of ``field`` names an entry of ``target`` (else ``unknown_code``) that belongs to
    the referring entry's provider (else ``foreign_code``, when both providers are known)."""

    field: str
    target: str
    unknown_code: str
    foreign_code: str
    target_noun: str
    owner_noun: str


TRANSPORTS_OF_IMPLEMENTATION = _SameProviderRule(
    "transport_ids", "transports", "PF205", "PF206", "transport", "implementation"
)
IMPLEMENTATIONS_OF_CAPABILITY = _SameProviderRule(
    "implementation_ids", "implementations", "PF209", "PF210", "implementation", "capability"
)


def _same_provider(
    graph: _Map, rule: _SameProviderRule, entry: dict[str, Any], base: str
) -> Iterator[RawFinding]:
    own_provider = graph.own_provider(entry)
    for j, target_id in _texts(entry, rule.field):
        pointer = f"{base}/{rule.field}/{j}"
        if target_id not in graph.index[rule.target]:
            message = f"{rule.field} entry '{target_id}' names no {rule.target_noun}"
            yield _error(rule.unknown_code, message, pointer)
            continue
        other = graph.provider_of(rule.target, target_id)
        if own_provider is not None and other not in (None, own_provider):
            yield _error(
                rule.foreign_code,
                f"{rule.target_noun} '{target_id}' belongs to provider '{other}', not to the "
                f"{rule.owner_noun}'s provider '{own_provider}'",
                pointer,
            )


def _implementations(graph: _Map) -> Iterator[RawFinding]:
    for i, entry in graph.entries["implementations"]:
        base = f"/implementations/{i}"
        own_provider = graph.own_provider(entry)
        yield from _same_provider(graph, TRANSPORTS_OF_IMPLEMENTATION, entry, base)
        membership = entry.get("release_membership")
        runtime = _text(membership, "runtime_provider_id") if isinstance(membership, dict) else None
        pointer = f"{base}/release_membership/runtime_provider_id"
        if runtime is not None and not graph.known_provider(runtime):
            yield _error("PF207", f"runtime_provider_id '{runtime}' names no provider", pointer)
        elif runtime is not None and own_provider is not None and runtime != own_provider:
            yield _warning(
                "PF208",
                f"runtime_provider_id '{runtime}' differs from the implementation's provider "
                f"'{own_provider}'",
                pointer,
            )
        yield from _identity(entry, base)


def _identity(implementation: dict[str, Any], base: str) -> Iterator[RawFinding]:
    for code, field, observed in (
        ("PF217", "provider_version", "observed_versions"),
        ("PF218", "provider_channel", "observed_channels"),
    ):
        value = _text(implementation, field)
        if (
            value is not None
            and _is_array(implementation.get(observed))
            and not _contains(implementation, observed, value)
        ):
            yield _error(code, f"{field} '{value}' is not in {observed}", f"{base}/{field}")
    if _text(implementation, "identity_status") == "release_pinned" and not isinstance(
        implementation.get("release_membership"), dict
    ):
        yield _error(
            "PF219",
            "identity_status is release_pinned but the implementation has no release_membership",
            f"{base}/identity_status",
        )


def _capabilities(graph: _Map) -> Iterator[RawFinding]:
    capabilities = graph.index["capabilities"]
    for i, entry in graph.entries["capabilities"]:
        base = f"/capabilities/{i}"
        yield from _same_provider(graph, IMPLEMENTATIONS_OF_CAPABILITY, entry, base)
        shared = _text(entry, "shared_semantics")
        if shared is not None and shared not in capabilities:
            yield _error(
                "PF211",
                f"shared_semantics '{shared}' names no capability",
                f"{base}/shared_semantics",
            )


def _has_confirmation(binding: dict[str, Any]) -> bool:
    requirements = binding.get("requires")
    return _is_array(requirements) and any(
        isinstance(requirement, dict)
        and requirement.get("kind") == "confirmation"
        and isinstance(requirement.get("mode"), str)
        and requirement.get("mode") != "none"
        for requirement in requirements
    )


def _bindings(graph: _Map) -> Iterator[RawFinding]:
    implementations = graph.index["implementations"]
    capabilities = graph.index["capabilities"]
    claims = graph.index["evidence_claims"]
    for i, binding in graph.entries["operation_bindings"]:
        base = f"/operation_bindings/{i}"
        implementation_id = _text(binding, "implementation_id")
        implementation = (
            implementations.get(implementation_id) if implementation_id is not None else None
        )
        if implementation_id is not None and implementation is None:
            yield _error(
                "PF212",
                f"implementation_id '{implementation_id}' names no implementation",
                f"{base}/implementation_id",
            )
        exposed = (
            _text(binding, "implementation_status") == "implemented"
            and _text(binding, "release_status") == "released"
        )
        confirmed = _has_confirmation(binding)
        for j, capability_id in _texts(binding, "capability_ids"):
            pointer = f"{base}/capability_ids/{j}"
            capability = capabilities.get(capability_id)
            if capability is None:
                yield _error(
                    "PF213", f"capability_ids entry '{capability_id}' names no capability", pointer
                )
                continue
            if (
                implementation is not None
                and _is_array(capability.get("implementation_ids"))
                and not _contains(capability, "implementation_ids", implementation_id or "")
            ):
                yield _error(
                    "PF214",
                    f"capability '{capability_id}' does not list implementation "
                    f"'{implementation_id}' in its implementation_ids",
                    pointer,
                )
            safety = _text(capability, "remote_safety")
            if safety == "do_not_expose" and exposed:
                yield _error(
                    "PF222",
                    f"implemented and released binding exposes capability '{capability_id}' "
                    "whose remote_safety is do_not_expose",
                    pointer,
                )
            if safety == "confirmation" and not confirmed:
                yield _warning(
                    "PF223",
                    f"capability '{capability_id}' requires confirmation but the binding has no "
                    "confirmation requirement with a mode other than none",
                    pointer,
                )
        for j, claim_id in _texts(binding, "evidence_claim_ids"):
            if claim_id not in claims:
                yield _error(
                    "PF215",
                    f"evidence_claim_ids entry '{claim_id}' names no evidence claim",
                    f"{base}/evidence_claim_ids/{j}",
                )
        if (
            implementation is not None
            and _text(binding, "release_status") == "released"
            and not isinstance(implementation.get("release_membership"), dict)
        ):
            yield _error(
                "PF220",
                f"release_status is released but implementation '{implementation_id}' has no "
                "release_membership",
                f"{base}/release_status",
            )


def _claims(graph: _Map) -> Iterator[RawFinding]:
    for i, claim in graph.entries["evidence_claims"]:
        subject_type = _text(claim, "subject_type")
        subject_id = _text(claim, "subject_id")
        collection = SUBJECT_COLLECTIONS.get(subject_type or "")
        if collection is not None and subject_id is not None:
            if subject_id not in graph.index[collection]:
                yield _error(
                    "PF216",
                    f"subject_id '{subject_id}' names no entry of {collection} "
                    f"(subject_type {subject_type})",
                    f"/evidence_claims/{i}/subject_id",
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
            "PF224",
            lambda capability_id: (
                f"no evidence claim has capability '{capability_id}' as its "
                "subject (evidence_policy.missing_evidence_is_unsupported)"
            ),
        )
    yield from _unused(
        graph,
        "transports",
        _cited(graph.entries["implementations"], "transport_ids"),
        "PF225",
        lambda transport_id: f"no implementation uses transport '{transport_id}'",
    )
    yield from _unused(
        graph,
        "evidence_sources",
        _cited(
            (entry for collection in CITING_COLLECTIONS for entry in graph.entries[collection]),
            "source_refs",
        ),
        "PF226",
        lambda source_id: f"nothing cites evidence source '{source_id}'",
    )
    yield from _unused(
        graph,
        "capabilities",
        _cited(graph.entries["operation_bindings"], "capability_ids"),
        "PF227",
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
            yield _warning(code, message(entry_id), f"/{collection}/{i}/{id_field}")


def _cited(entries: Iterable[Entry], key: str) -> set[str]:
    return {value for _, entry in entries for _, value in _texts(entry, key)}


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
            yield _error(error.code, error.message, f"/operation_bindings/{i}{error.pointer}")
            continue
        if expected == recorded:
            counts["verified"] += 1
        else:
            counts["mismatched"] += 1
            yield _error(
                "PF221",
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
        token = raw_token.replace("~1", "/").replace("~0", "~")
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


def _check_document(document: Any) -> tuple[list[RawFinding], dict[str, Any]]:
    stats = _empty_stats()
    findings: list[RawFinding] = [
        (SCHEMA_VIOLATION, "error", message, None, pointer, schema_pointer)
        for pointer, schema_pointer, _keyword, message in bundled_validator(MAP_SCHEMA_ID).errors(
            document
        )
    ]
    stats["schema_violations"] = len(findings)
    if not isinstance(document, dict):
        return _in_document_order(document, findings), stats
    for collection in COLLECTIONS:
        items = document.get(collection)
        stats["collections"][collection] = len(items) if _is_array(items) else 0
    graph = _Map(document)
    for rule in (_uniqueness, _source_refs, _providers, _implementations, _capabilities):
        findings.extend(rule(graph))
    findings.extend(_bindings(graph))
    findings.extend(_claims(graph))
    findings.extend(_digests(graph, stats["digests"]))
    findings.extend(_orphans(graph))
    return _in_document_order(document, findings), stats


def check_map(document: Any) -> tuple[list[RawFinding], dict[str, Any]]:
    """Check a parsed map (Python values); a value outside the JSON model is one finding."""
    try:
        check_value(document)
    except CanonicalizationError as error:
        return [_error(error.code, error.message, error.pointer)], _empty_stats()
    return _check_document(document)


def check_map_json(data: bytes | str) -> tuple[list[RawFinding], dict[str, Any]]:
    """Parse JSON text strictly, then check it; a parse error is the one finding."""
    try:
        document = parse_json(data)
    except CanonicalizationError as error:
        message = error.message
        if error.line is not None and error.column is not None:
            message += f" (line {error.line}, column {error.column})"
        finding: RawFinding = (error.code, "error", message, error.line, error.pointer, None)
        return [finding], _empty_stats()
    return _check_document(document)


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
