"""The one table that says whether a change to a capability map loosens remote control.

``diff_maps`` (``map_diff.py``) names each change by its collection and a generic member path
(``retry/replay``, ``requires/mode``, ``forbids[]`` for an item of a set, ``""`` for the whole
entry) and asks ``classify`` for a verdict: **loosening** (a remote client may now do more, or do
it with less proof), **tightening** (the reverse) or **neutral**. Each rule cites why: where
Pairling's own code consumes the member (``mergimg0/pairling-helper``,
``mac/companiond/providers/capability_graph.py`` and ``controls.py``; read and run as a
reference, none of it copied here), else it is labelled ``ours`` with our reason. A member no
rule names is neutral under ``other``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ABSENT",
    "LOOSENING",
    "NEUTRAL",
    "RULES",
    "TIGHTENING",
    "Rule",
    "Verdict",
    "classify",
    "rule_named",
    "rules_markdown",
]

Verdict = Literal["loosening", "tightening", "neutral"]
LOOSENING: Verdict = "loosening"
TIGHTENING: Verdict = "tightening"
NEUTRAL: Verdict = "neutral"


class _Absent:
    """A member or item that is not there (added: absent before; removed: absent after)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()

Judge = Callable[[Any, Any], Verdict]

CAPABILITY_GRAPH = "Pairling capability_graph.py"
CONTROLS = "Pairling controls.py"


@dataclass(frozen=True)
class Rule:
    name: str
    collection: str
    member: str
    judge: Judge
    source: Literal["pairling", "ours"]
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {
            "rule": self.name,
            "collection": self.collection,
            "member": self.member,
            "source": self.source,
            "reason": self.reason,
        }


def _towards(scale: tuple[Any, ...]) -> Judge:
    """Later in ``scale`` is looser; a value off the scale (or absent) judges neutral."""

    def judge(old: Any, new: Any) -> Verdict:
        if old not in scale or new not in scale:
            return NEUTRAL
        before, after = scale.index(old), scale.index(new)
        return LOOSENING if after > before else TIGHTENING if after < before else NEUTRAL

    return judge


def _to_value(loose: Any) -> Judge:
    """Becoming ``loose`` loosens, leaving it tightens, any other move is neutral."""

    def judge(old: Any, new: Any) -> Verdict:
        if new == loose and old != loose:
            return LOOSENING
        if old == loose and new != loose:
            return TIGHTENING
        return NEUTRAL

    return judge


def _added_loosens(old: Any, new: Any) -> Verdict:
    """An item added to a set loosens, one removed tightens."""
    if old is ABSENT and new is not ABSENT:
        return LOOSENING
    if new is ABSENT and old is not ABSENT:
        return TIGHTENING
    return NEUTRAL


def _removed_loosens(old: Any, new: Any) -> Verdict:
    return {LOOSENING: TIGHTENING, TIGHTENING: LOOSENING, NEUTRAL: NEUTRAL}[
        _added_loosens(old, new)
    ]


def _larger_loosens(old: Any, new: Any) -> Verdict:
    numbers = (int, float)
    if isinstance(old, bool) or isinstance(new, bool):
        return NEUTRAL
    if not isinstance(old, numbers) or not isinstance(new, numbers):
        return _removed_loosens(old, new)
    return LOOSENING if new > old else TIGHTENING if new < old else NEUTRAL


def _any_change_loosens(old: Any, new: Any) -> Verdict:
    return NEUTRAL if old == new else LOOSENING


def _neutral(old: Any, new: Any) -> Verdict:
    return NEUTRAL


def _released(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and entry.get("release_status") == "released"
        and entry.get("implementation_status") == "implemented"
    )


def _binding_entry(old: Any, new: Any) -> Verdict:
    """A binding that comes into the released set loosens; one that leaves it tightens."""
    if _released(new) and not _released(old):
        return LOOSENING
    if _released(old) and not _released(new):
        return TIGHTENING
    return NEUTRAL


EXPOSED_SAFETY = ("safe", "confirmation")


def _capability_entry(old: Any, new: Any) -> Verdict:
    def exposed(entry: Any) -> bool:
        return isinstance(entry, dict) and entry.get("remote_safety") in EXPOSED_SAFETY

    if exposed(new) and not exposed(old):
        return LOOSENING
    if exposed(old) and not exposed(new):
        return TIGHTENING
    return NEUTRAL


def _membership(old: Any, new: Any) -> Verdict:
    has_old, has_new = isinstance(old, dict), isinstance(new, dict)
    if has_new and not has_old:
        return LOOSENING
    if has_old and not has_new:
        return TIGHTENING
    return NEUTRAL


_RELEASED_CATALOG = (
    f"{CAPABILITY_GRAPH}: CapabilityGraphCatalog builds a runtime contract only from bindings "
    "that are implemented and released and whose implementation has a release_membership; "
    "require_operation serves only those"
)
_RUNTIME_KEY = (
    f"{CAPABILITY_GRAPH}: CapabilityGraphCatalog keys each released contract by the "
    "release_membership's runtime_provider_id, provider_version and provider_channel and the "
    "binding's operation_id (require_operation): a change makes the contract answer another "
    "runtime or operation"
)
_REVIEWED_JOIN = (
    f"{CAPABILITY_GRAPH}: validate_capability_graph pins device_scope, resource_proof and "
    "confirmation to the reviewed operation manifest, whose required_device_scope and "
    "resource_proof_kind provider_control_service.py enforces on every request"
)

RULES: tuple[Rule, ...] = (
    # --- capabilities
    Rule(
        "remote_safety_towards_safe",
        "capabilities",
        "remote_safety",
        _towards(("do_not_expose", "required_local_only", "confirmation", "safe")),
        "ours",
        "do_not_expose < required_local_only < confirmation < safe: a step towards safe lets a "
        "remote client reach the capability with less; Pairling's validator only demands a "
        "required_pairling_addition for the two local-only values",
    ),
    Rule(
        "plane_more_powerful",
        "capabilities",
        "plane",
        _towards(("receive", "read", "control", "steer")),
        "ours",
        "receive < read < control < steer: a capability on a stronger plane acts on the session",
    ),
    Rule(
        "maturity_claimed_higher",
        "capabilities",
        "maturity",
        _towards(("unsafe", "unknown", "draft", "experimental", "version_specific", "public")),
        "ours",
        "unsafe < unknown < draft < experimental < version_specific < public: a capability "
        "claimed more mature invites wider remote use",
    ),
    Rule(
        "machine_readable_claimed",
        "capabilities",
        "machine_readable",
        _towards((False, "qualified", True)),
        "ours",
        "false < qualified < true: a surface claimed machine-readable is one a driver parses "
        "instead of showing to a person",
    ),
    Rule(
        "exposure_widened",
        "capabilities",
        "exact_exposure[]",
        _added_loosens,
        "ours",
        "an exact_exposure entry added exposes one more vendor surface",
    ),
    Rule(
        "capability_implementations_widened",
        "capabilities",
        "implementation_ids[]",
        _added_loosens,
        "ours",
        "the capability now applies to one more implementation",
    ),
    Rule(
        "capability_exposed",
        "capabilities",
        "",
        _capability_entry,
        "ours",
        "a capability added (or removed) whose remote_safety is safe or confirmation is one a "
        "remote client may (or may no longer) reach",
    ),
    # --- operation bindings
    Rule(
        "binding_released",
        "operation_bindings",
        "",
        _binding_entry,
        "pairling",
        f"{_RELEASED_CATALOG}: a binding added released (or a released one removed) adds (or "
        "withdraws) a contract",
    ),
    Rule(
        "release_status_released",
        "operation_bindings",
        "release_status",
        _to_value("released"),
        "pairling",
        f"{_RELEASED_CATALOG}: not_released to released makes the binding a served contract",
    ),
    Rule(
        "implementation_status_implemented",
        "operation_bindings",
        "implementation_status",
        _to_value("implemented"),
        "pairling",
        f"{_RELEASED_CATALOG}: only an implemented binding becomes a contract",
    ),
    Rule(
        "operation_rebound",
        "operation_bindings",
        "operation_id",
        _any_change_loosens,
        "pairling",
        f"{_RUNTIME_KEY}; the binding now serves an operation it was not reviewed for",
    ),
    Rule(
        "implementation_rebound",
        "operation_bindings",
        "implementation_id",
        _any_change_loosens,
        "pairling",
        f"{_RUNTIME_KEY}; the binding now serves another implementation's runtime",
    ),
    Rule(
        "requirement_removed",
        "operation_bindings",
        "requires[]",
        _removed_loosens,
        "pairling",
        f"{CAPABILITY_GRAPH}: validate_capability_graph requires all six requirement kinds; a "
        "requirement removed is one a remote request no longer has to meet",
    ),
    Rule(
        "confirmation_to_none",
        "operation_bindings",
        "requires/mode",
        _to_value("none"),
        "pairling",
        f"{_REVIEWED_JOIN}; confirmation.mode none runs the operation without asking the user",
    ),
    Rule(
        "resource_proof_to_none",
        "operation_bindings",
        "requires/proof_kind",
        _to_value("none"),
        "pairling",
        f"{_REVIEWED_JOIN}; proof_kind none asks no resource proof (provider_control_service.py "
        "validates an approval_nonce only when the proof kind asks for it)",
    ),
    Rule(
        "device_scope_changed",
        "operation_bindings",
        "requires/scope",
        _any_change_loosens,
        "pairling",
        f"{_REVIEWED_JOIN}: require_operation_scope admits a device by this scope, so another "
        "scope admits devices that were refused",
    ),
    Rule(
        "snapshot_age_larger",
        "operation_bindings",
        "requires/max_age_seconds",
        _larger_loosens,
        "ours",
        "a larger fresh_snapshot.max_age_seconds accepts an older snapshot (Pairling's validator "
        "only bounds it to 1..30)",
    ),
    Rule(
        "identity_dimension_removed",
        "operation_bindings",
        "requires/dimensions[]",
        _removed_loosens,
        "ours",
        "fewer exact_identity dimensions match a request to its target less exactly (Pairling's "
        "validator only demands provider, implementation, binding, and session with generation)",
    ),
    Rule(
        "process_owner_changed",
        "operation_bindings",
        "requires/owner",
        _neutral,
        "ours",
        "driver and manager are different owners, neither weaker",
    ),
    Rule(
        "effect_added",
        "operation_bindings",
        "effects[]",
        _added_loosens,
        "pairling",
        f"{CAPABILITY_GRAPH}: validate_capability_graph reads effects to tell a read-only "
        "binding (exactly one return_data) from a mutating one; an effect added is one more "
        "thing a remote request does",
    ),
    Rule(
        "invalidation_removed",
        "operation_bindings",
        "invalidates[]",
        _removed_loosens,
        "ours",
        "an invalidation removed lets authority survive an event that used to end it",
    ),
    Rule(
        "forbidden_action_removed",
        "operation_bindings",
        "forbids[]",
        _removed_loosens,
        "ours",
        "a forbids entry removed permits an action the binding ruled out (Pairling's validator "
        "only demands the list be non-empty and without repeats)",
    ),
    Rule(
        "replay_towards_safe",
        "operation_bindings",
        "retry/replay",
        _towards(("forbidden", "recover_only", "same_action_only", "safe")),
        "pairling",
        f"{CAPABILITY_GRAPH}: GraphOperationContract.retry_payload hands replay to the runtime, "
        "and validate_capability_graph allows safe only for a read-only binding; forbidden < "
        "recover_only < same_action_only < safe",
    ),
    Rule(
        "correlation_to_none",
        "operation_bindings",
        "retry/correlation",
        _to_value("none"),
        "pairling",
        f"{CAPABILITY_GRAPH}: GraphOperationContract.retry_payload hands correlation to the "
        "runtime; none leaves an ambiguous outcome uncorrelated",
    ),
    Rule(
        "retry_recovery_changed",
        "operation_bindings",
        "retry/recovery",
        _neutral,
        "pairling",
        f"{CAPABILITY_GRAPH}: GraphOperationContract.retry_payload; another recovery source is "
        "not a weaker one",
    ),
    Rule(
        "retry_ambiguity_changed",
        "operation_bindings",
        "retry/ambiguity",
        _neutral,
        "pairling",
        f"{CAPABILITY_GRAPH}: GraphOperationContract.retry_payload; the rules on correlation and "
        "recovery judge the consequences",
    ),
    Rule(
        "runtime_proof_dropped",
        "operation_bindings",
        "runtime_proofs_required[]",
        _removed_loosens,
        "pairling",
        f"{CONTROLS}: _verified_semantic_proofs refuses an operation lacking any locally "
        "verified proof in runtime_proofs_required; one fewer is one check skipped",
    ),
    # --- implementations and providers
    Rule(
        "release_membership_added",
        "implementations",
        "release_membership",
        _membership,
        "pairling",
        f"{_RELEASED_CATALOG}: an implementation that gains a release_membership turns its "
        "released bindings into contracts",
    ),
    Rule(
        "runtime_identity_changed",
        "implementations",
        "release_membership/runtime_provider_id",
        _any_change_loosens,
        "pairling",
        _RUNTIME_KEY,
    ),
    Rule(
        "runtime_version_changed",
        "implementations",
        "release_membership/provider_version",
        _any_change_loosens,
        "pairling",
        _RUNTIME_KEY,
    ),
    Rule(
        "runtime_channel_changed",
        "implementations",
        "release_membership/provider_channel",
        _any_change_loosens,
        "pairling",
        _RUNTIME_KEY,
    ),
    Rule(
        "physical_device_dropped",
        "implementations",
        "release_membership/physical_device_required",
        _towards((True, False)),
        "pairling",
        f"{CAPABILITY_GRAPH}: GraphOperationContract carries physical_device_required into "
        "every released contract; true to false no longer asks for a physical device",
    ),
    Rule(
        "implementation_transport_added",
        "implementations",
        "transport_ids[]",
        _added_loosens,
        "ours",
        "the implementation reaches its provider over one more transport",
    ),
    Rule(
        "provider_made_releasable",
        "providers",
        "implementation_eligibility/status",
        _to_value("implementation_candidate"),
        "pairling",
        f"{CAPABILITY_GRAPH}: validate_capability_graph lets a binding be released only when its "
        "provider's eligibility is implementation_candidate",
    ),
    # --- exclusions
    Rule(
        "exclusion_removed",
        "exclusions",
        "",
        _removed_loosens,
        "ours",
        "an exclusion removed takes an item off the list of what the map must not claim",
    ),
)

_BY_PLACE: dict[tuple[str, str], Rule] = {(rule.collection, rule.member): rule for rule in RULES}
OTHER = Rule(
    "other",
    "*",
    "*",
    _neutral,
    "ours",
    "no rule names this member: evidence, descriptions and identifiers that do not change what "
    "a remote client may do",
)


def rules_markdown() -> str:
    """The table as docs/maps.md shows it (a test keeps the two equal)."""
    lines = [
        "| rule | collection | member | source | why |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in (*RULES, OTHER):
        member = f"`{rule.member}`" if rule.member else "(the entry)"
        reason = rule.reason.replace("|", "\\|")
        lines.append(
            f"| `{rule.name}` | `{rule.collection}` | {member} | {rule.source} | {reason} |"
        )
    return "\n".join(lines) + "\n"


def rule_named(name: str) -> Rule:
    for rule in (*RULES, OTHER):
        if rule.name == name:
            return rule
    raise KeyError(name)


def classify(collection: str, member: str, old: Any, new: Any) -> tuple[Verdict, Rule]:
    """The verdict on ``member`` of an entry of ``collection`` going from ``old`` to ``new``
    (either may be ``ABSENT``) and the rule that gave it."""
    rule = _BY_PLACE.get((collection, member), OTHER)
    return rule.judge(old, new), rule
