"""The rules of each collection's own entries; bindings have ``bindings``
(↔ ``rust/graph/entries.rs``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ...codes import (
    AMBIGUOUS_RUNTIME_IDENTITY,
    CHANNEL_DIFFERS_FROM_MEMBERSHIP,
    DUPLICATE_EXACT_EXPOSURE,
    DUPLICATE_EXCLUSION,
    LOCAL_ONLY_WITHOUT_REASON,
    OBSERVED_AT_NOT_UTC,
    PAIRLING_LOOSER_THAN_SCHEMA,
    PINNED_WITHOUT_MEMBERSHIP,
    RELEASED_NOT_PINNED,
    RUNTIME_PROVIDER_DIFFERS,
    SCHEMA_LOOSER_THAN_PAIRLING,
    SOURCE_URI_NOT_DIRECT,
    UNRESOLVED_CLAIM_SUBJECT,
    VERSION_DIFFERS_FROM_MEMBERSHIP,
    WHITESPACE_ONLY,
)
from ..findings import RawFinding
from .index import (
    DIGITS,
    LOWER,
    _blank,
    _explicit,
    _finding,
    _graph_id,
    _is_array,
    _Map,
    _schema_provider_id,
    _schema_source_id,
    _text,
    _texts,
)
from .references import IMPLEMENTATIONS_OF_CAPABILITY, TRANSPORTS_OF_IMPLEMENTATION, _same_provider
from .releases import RELEASE_IDENTITY

SUBJECT_COLLECTIONS = {
    "implementation": "implementations",
    "capability": "capabilities",
    "operation_binding": "operation_bindings",
}


LOCAL_ONLY = ("required_local_only", "do_not_expose")


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


def _unreadable_date_time(timestamp: str) -> str | None:
    """Why ``datetime.fromisoformat``, which Pairling's validator parses ``observed_at`` with,
    cannot hold the date and time at the start of ``timestamp`` (↔ ``unreadable_date_time``)."""
    raw = timestamp.encode("utf-8", "surrogatepass")

    def number(start: int, end: int) -> int | None:
        digits = raw[start:end]
        if len(digits) != end - start or not all(48 <= d <= 57 for d in digits):
            return None
        return int(digits)

    extended = raw[4:5] == b"-" and raw[7:8] == b"-"
    if extended:
        year, month, day, after = number(0, 4), number(5, 7), number(8, 10), 10
    else:
        year, month, day, after = number(0, 4), number(4, 6), number(6, 8), 8
    if year is None or month is None or day is None:
        return "it does not begin with a date YYYY-MM-DD"
    if year == 0:
        return "year 0"
    if not 1 <= month <= 12:
        return "no such month"
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (29 if leap else 28) if month == 2 else 30 if month in (4, 6, 9, 11) else 31
    if not 1 <= day <= days:
        return "no such day in its month"
    hour = number(after + 1, after + 3)
    if hour is not None and hour > 23:
        return "hour 24 or more"
    minute = number(after + 4, after + 6)
    if raw[after + 3 : after + 4] == b":" and minute is not None and minute > 59:
        return "minute 60 or more"
    return None


def _leap_second(timestamp: str) -> bool:
    """``…THH:MM:60…``: the one RFC 3339 date-time Python's ``datetime`` cannot hold."""
    return (
        timestamp.isascii()
        and len(timestamp) >= 19
        and timestamp[10] in "Tt "
        and timestamp[16] == ":"
        and timestamp[17:19] == "60"
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
    elif observed_at is not None and (problem := _unreadable_date_time(observed_at)):
        yield _finding(
            OBSERVED_AT_NOT_UTC,
            f"observed_at '{observed_at}' is not a date and time Pairling's timestamp parser "
            f"(Python's datetime) reads: {problem}",
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
