"""The rules of operation bindings (↔ ``rust/graph/bindings.rs``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...codes import (
    CAPABILITY_NOT_OFFERED,
    CONFIRMATION_NOT_BOUND,
    DO_NOT_EXPOSE_RELEASED,
    EXACT_IDENTITY_INCOMPLETE,
    FORBIDDEN_ACTION_REPEATED,
    MAX_AGE_NOT_INTEGER,
    MUTATING_REPLAY_SAFE,
    NOT_RELEASED_WITHOUT_REASON,
    PAIRLING_LOOSER_THAN_SCHEMA,
    RECOVERY_UNAVAILABLE,
    RELEASED_BINDING_UNRELEASED_IMPLEMENTATION,
    RELEASED_NON_RELEASABLE_PROVIDER,
    RELEASED_NOT_IMPLEMENTED,
    REQUIREMENT_KIND_REPEATED,
    REQUIREMENT_KINDS_MISSING,
    SESSION_WITHOUT_GENERATION,
    UNCORRELATED_AMBIGUITY,
    UNKNOWN_BINDING_IMPLEMENTATION,
    UNRELATED_EVIDENCE,
    WHITESPACE_ONLY,
)
from ..findings import RawFinding
from .index import _blank, _contains, _explicit, _finding, _is_array, _Map, _objects, _text, _texts
from .references import BINDING_EVIDENCE, BOUND_CAPABILITIES, _resolve

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


READ_EFFECT = "return_data"


RELEASABLE = "implementation_candidate"


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
