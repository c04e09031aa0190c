"""Cross-references between collections: unique ids, ids that name an entry, unknown providers
reported once at their root, entries nothing refers to (↔ ``rust/graph/references.rs``)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, NamedTuple

from ...codes import (
    CAPABILITY_WITHOUT_EVIDENCE,
    DUPLICATE_ID,
    FOREIGN_IMPLEMENTATION,
    FOREIGN_TRANSPORT,
    ID_REUSED_ACROSS_COLLECTIONS,
    ORPHAN_CAPABILITY,
    ORPHAN_EVIDENCE_SOURCE,
    ORPHAN_TRANSPORT,
    UNKNOWN_BINDING_CAPABILITY,
    UNKNOWN_CAPABILITY_IMPLEMENTATION,
    UNKNOWN_EVIDENCE_CLAIM,
    UNKNOWN_EVIDENCE_SOURCE,
    UNKNOWN_PROVIDER,
    UNKNOWN_TRANSPORT,
)
from ..findings import RawFinding
from .index import (
    CITING_COLLECTIONS,
    GRAPH_ID_COLLECTIONS,
    ID_FIELDS,
    PROVIDER_OWNED_COLLECTIONS,
    Entry,
    _finding,
    _Map,
    _text,
    _texts,
)

# Other pointers a root-cause finding lists before "and N more".
LISTED_REFERENCES = 5


def _references(pointers: list[str]) -> str:
    """``N references: a, b, … and K more`` for a root-cause finding."""
    others = pointers[1:]
    listed = ", ".join(others[:LISTED_REFERENCES])
    more = len(others) - LISTED_REFERENCES
    tail = f" and {more} more" if more > 0 else ""
    return f"{len(pointers)} references (also {listed}{tail})" if others else "1 reference"


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
