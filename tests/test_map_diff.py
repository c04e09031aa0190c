"""``diff_maps`` / ``pairling-fast diff``: entries matched by id, sets compared as sets, each rule
of the classification table exercised in both directions where it has two, on both backends."""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from map_twins import example

from pairling_fast import _backend
from pairling_fast._fallback.graph.diff import COLLECTIONS, SET_ARRAYS
from pairling_fast.locate import pointer_lines
from pairling_fast.map_diff import MapDiff, diff_maps
from pairling_fast.map_diff_rules import OTHER, RULES, rule_named, rules_markdown

Document = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "schemas" / "coding-agent-remote-control-capability-map.schema.json"


def sealed(engine: _backend.Engine, document: Document) -> Document:
    """The map with its digests recomputed, so a change is never masked by a stale digest."""
    result: Document = engine.seal_map(document)
    return result


def _requirement(binding: Document, kind: str) -> Document:
    found: Document = next(r for r in binding["requires"] if r["kind"] == kind)
    return found


def _binding(document: Document, index: int) -> Document:
    found: Document = document["operation_bindings"][index]
    return found


def _capability(document: Document, index: int) -> Document:
    found: Document = document["capabilities"][index]
    return found


Mutation = Callable[[Document], None]


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def change(document: Document) -> None:
        node: Any = document
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = copy.deepcopy(value)

    return change


def _requirement_member(index: int, kind: str, member: str, value: Any) -> Mutation:
    def change(document: Document) -> None:
        _requirement(_binding(document, index), kind)[member] = value

    return change


def _drop_requirement(index: int, kind: str) -> Mutation:
    def change(document: Document) -> None:
        binding = _binding(document, index)
        binding["requires"] = [r for r in binding["requires"] if r["kind"] != kind]

    return change


def _drop_item(path: tuple[Any, ...], item: Any) -> Mutation:
    def change(document: Document) -> None:
        node: Any = document
        for key in path:
            node = node[key]
        node.remove(item)

    return change


def _add_item(path: tuple[Any, ...], item: Any) -> Mutation:
    def change(document: Document) -> None:
        node: Any = document
        for key in path:
            node = node[key]
        node.append(copy.deepcopy(item))

    return change


def _drop_dimension(document: Document) -> None:
    _requirement(_binding(document, 1), "exact_identity")["dimensions"].remove("session")


def _release_binding(document: Document) -> None:
    _binding(document, 8)["release_status"] = "released"


def _add_released_binding(document: Document) -> None:
    binding = copy.deepcopy(_binding(document, 1))
    binding["implementation_operation_id"] = "northwind_cli.2_4.prompt_send_again"
    binding["operation_id"] = "session.prompt.again"
    document["operation_bindings"].append(binding)


def _add_exposed_capability(document: Document) -> None:
    capability = copy.deepcopy(_capability(document, 0))
    capability["capability_id"] = "northwind_cli.session.read_more"
    capability["behavior"] = "Reads more."
    document["capabilities"].append(capability)


def _drop_membership(document: Document) -> None:
    document["implementations"][0]["release_membership"] = None


def _drop_exclusion(document: Document) -> None:
    del document["exclusions"][0]


def _membership(member: str, value: Any) -> Mutation:
    return _set(("implementations", 0, "release_membership", member), value)


B1 = ("operation_bindings", 1)
# (rule, mutation of the example map, verdict, member of the change). The example's bindings[1]
# is Northwind's released prompt_send (recover_only, five identity dimensions, confirmation none);
# bindings[8] is Tern's unreleased model_update; capabilities[0] is safe, [5] do_not_expose.
RULE_CASES: list[tuple[str, Mutation, str, str]] = [
    (
        "remote_safety_towards_safe",
        _set(("capabilities", 5, "remote_safety"), "safe"),
        "loosening",
        "remote_safety",
    ),
    (
        "remote_safety_towards_safe",
        _set(("capabilities", 0, "remote_safety"), "confirmation"),
        "tightening",
        "remote_safety",
    ),
    ("plane_more_powerful", _set(("capabilities", 0, "plane"), "steer"), "loosening", "plane"),
    ("plane_more_powerful", _set(("capabilities", 0, "plane"), "receive"), "tightening", "plane"),
    (
        "maturity_claimed_higher",
        _set(("capabilities", 0, "maturity"), "draft"),
        "tightening",
        "maturity",
    ),
    (
        "maturity_claimed_higher",
        _set(("capabilities", 5, "maturity"), "public"),
        "loosening",
        "maturity",
    ),
    (
        "machine_readable_claimed",
        _set(("capabilities", 0, "machine_readable"), False),
        "tightening",
        "machine_readable",
    ),
    (
        "machine_readable_claimed",
        _set(("capabilities", 0, "machine_readable"), "qualified"),
        "tightening",
        "machine_readable",
    ),
    (
        "exposure_widened",
        _add_item(("capabilities", 0, "exact_exposure"), "session/everything"),
        "loosening",
        "exact_exposure[]",
    ),
    (
        "exposure_widened",
        _drop_item(("capabilities", 0, "exact_exposure"), "session/transcript"),
        "tightening",
        "exact_exposure[]",
    ),
    (
        "capability_implementations_widened",
        _add_item(("capabilities", 0, "implementation_ids"), "tern_sdk.0_9"),
        "loosening",
        "implementation_ids[]",
    ),
    ("capability_exposed", _add_exposed_capability, "loosening", ""),
    ("binding_released", _add_released_binding, "loosening", ""),
    ("release_status_released", _release_binding, "loosening", "release_status"),
    (
        "release_status_released",
        _set((*B1, "release_status"), "not_released"),
        "tightening",
        "release_status",
    ),
    (
        "implementation_status_implemented",
        _set(("operation_bindings", 9, "implementation_status"), "implemented"),
        "loosening",
        "implementation_status",
    ),
    (
        "operation_rebound",
        _set((*B1, "operation_id"), "session.prompt.other"),
        "loosening",
        "operation_id",
    ),
    (
        "implementation_rebound",
        _set((*B1, "implementation_id"), "tern_sdk.0_9"),
        "loosening",
        "implementation_id",
    ),
    ("requirement_removed", _drop_requirement(1, "fresh_snapshot"), "loosening", "requires[]"),
    (
        "confirmation_to_none",
        _requirement_member(3, "confirmation", "mode", "none"),
        "loosening",
        "requires/mode",
    ),
    (
        "confirmation_to_none",
        _requirement_member(1, "confirmation", "mode", "point_of_risk"),
        "tightening",
        "requires/mode",
    ),
    (
        "resource_proof_to_none",
        _requirement_member(1, "resource_proof", "proof_kind", "none"),
        "loosening",
        "requires/proof_kind",
    ),
    (
        "device_scope_changed",
        _requirement_member(1, "device_scope", "scope", "session:admin"),
        "loosening",
        "requires/scope",
    ),
    (
        "snapshot_age_larger",
        _requirement_member(1, "fresh_snapshot", "max_age_seconds", 30),
        "loosening",
        "requires/max_age_seconds",
    ),
    (
        "snapshot_age_larger",
        _requirement_member(1, "fresh_snapshot", "max_age_seconds", 5),
        "tightening",
        "requires/max_age_seconds",
    ),
    ("identity_dimension_removed", _drop_dimension, "loosening", "requires/dimensions[]"),
    (
        "identity_dimension_removed",
        _add_item((*B1, "requires", 2, "dimensions"), "request"),
        "tightening",
        "requires/dimensions[]",
    ),
    (
        "process_owner_changed",
        _requirement_member(1, "owned_process", "owner", "manager"),
        "neutral",
        "requires/owner",
    ),
    (
        "effect_added",
        _add_item((*B1, "effects"), {"kind": "mutate_context"}),
        "loosening",
        "effects[]",
    ),
    (
        "effect_added",
        _drop_item((*B1, "effects"), {"kind": "start_inference"}),
        "tightening",
        "effects[]",
    ),
    (
        "invalidation_removed",
        _drop_item((*B1, "invalidates"), {"kind": "snapshot"}),
        "loosening",
        "invalidates[]",
    ),
    (
        "forbidden_action_removed",
        _drop_item((*B1, "forbids"), {"kind": "terminal_injection"}),
        "loosening",
        "forbids[]",
    ),
    (
        "forbidden_action_removed",
        _add_item((*B1, "forbids"), {"kind": "scope_expansion"}),
        "tightening",
        "forbids[]",
    ),
    (
        "replay_towards_safe",
        _set((*B1, "retry", "replay"), "same_action_only"),
        "loosening",
        "retry/replay",
    ),
    (
        "replay_towards_safe",
        _set((*B1, "retry", "replay"), "forbidden"),
        "tightening",
        "retry/replay",
    ),
    (
        "correlation_to_none",
        _set((*B1, "retry", "correlation"), "none"),
        "loosening",
        "retry/correlation",
    ),
    (
        "retry_recovery_changed",
        _set((*B1, "retry", "recovery"), "provider_status"),
        "neutral",
        "retry/recovery",
    ),
    (
        "retry_ambiguity_changed",
        _set((*B1, "retry", "ambiguity"), "rejected"),
        "neutral",
        "retry/ambiguity",
    ),
    (
        "runtime_proof_dropped",
        _drop_item((*B1, "runtime_proofs_required"), "exact_session"),
        "loosening",
        "runtime_proofs_required[]",
    ),
    (
        "runtime_proof_dropped",
        _add_item((*B1, "runtime_proofs_required"), "provider_authenticated"),
        "tightening",
        "runtime_proofs_required[]",
    ),
    ("release_membership_added", _drop_membership, "tightening", "release_membership"),
    (
        "runtime_identity_changed",
        _membership("runtime_provider_id", "northwind"),
        "loosening",
        "release_membership/runtime_provider_id",
    ),
    (
        "runtime_version_changed",
        _membership("provider_version", "2.5.0"),
        "loosening",
        "release_membership/provider_version",
    ),
    (
        "runtime_channel_changed",
        _membership("provider_channel", "beta"),
        "loosening",
        "release_membership/provider_channel",
    ),
    (
        "physical_device_dropped",
        _membership("physical_device_required", True),
        "tightening",
        "release_membership/physical_device_required",
    ),
    (
        "implementation_transport_added",
        _drop_item(("implementations", 0, "transport_ids"), "northwind_cli.pty"),
        "tightening",
        "transport_ids[]",
    ),
    (
        "provider_made_releasable",
        _set(("providers", 2, "implementation_eligibility", "status"), "implementation_candidate"),
        "loosening",
        "implementation_eligibility/status",
    ),
    ("exclusion_removed", _drop_exclusion, "loosening", ""),
    (
        "other",
        _set(("transports", 0, "description"), "Another description."),
        "neutral",
        "description",
    ),
]


def _with_owned_process(document: Document) -> None:
    """bindings[1] also requires a process its driver owns (the example has no such binding)."""
    _binding(document, 1)["requires"].append({"kind": "owned_process", "owner": "driver"})


# A change to something the example lacks: added to both maps first.
PREPARED: dict[str, Mutation] = {"process_owner_changed": _with_owned_process}


def _diff(
    engine: _backend.Engine, mutate: Mutation, *, reseal: bool = True, rule: str = ""
) -> MapDiff:
    old = example()
    if rule in PREPARED:
        PREPARED[rule](old)
        old = sealed(engine, old)
    new = copy.deepcopy(old)
    mutate(new)
    if reseal:
        new = sealed(engine, new)
    return diff_maps(_text(old), _text(new))


def _text(document: Document) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


def test_every_rule_has_a_case_and_a_reason() -> None:
    covered = {case[0] for case in RULE_CASES}
    assert covered == {rule.name for rule in (*RULES, OTHER)}
    for rule in (*RULES, OTHER):
        assert rule.source in ("pairling", "ours") and len(rule.reason) > 30, rule.name
        if rule.source == "pairling":
            assert "Pairling" in rule.reason, rule.name
    assert len({(rule.collection, rule.member) for rule in RULES}) == len(RULES)


@pytest.mark.parametrize(
    ("rule", "mutate", "verdict", "member"),
    RULE_CASES,
    ids=[f"{case[0]}-{case[2]}-{n}" for n, case in enumerate(RULE_CASES)],
)
def test_rule(
    backend: _backend.Engine, rule: str, mutate: Mutation, verdict: str, member: str
) -> None:
    diff = _diff(backend, mutate, rule=rule)
    assert diff.diffed and diff.old.ok
    ruled = [c for c in diff.changes if c.rule == rule]
    assert ruled, [c.to_dict() for c in diff.changes]
    assert {(c.classification, c.member) for c in ruled} == {(verdict, member)}
    assert rule_named(rule).name == rule
    for change in ruled:
        assert change.new_pointer is not None and change.new_line is not None
        assert change.old_pointer is None or change.old_line is not None
        if change.classification == "loosening":
            assert change.code == "PF270" and change in diff.loosenings


def _permuted(document: Document, seed: int) -> Document:
    """Every collection and every set array shuffled, every object's members reordered."""
    chooser = random.Random(seed)

    def walk(node: Any, collection: str, member: str) -> Any:
        if isinstance(node, dict):
            keys = list(node)
            chooser.shuffle(keys)
            return {k: walk(node[k], collection, f"{member}/{k}" if member else k) for k in keys}
        if isinstance(node, list):
            items = [walk(item, collection, member) for item in node]
            if (collection, member) in SET_ARRAYS:
                chooser.shuffle(items)
            return items
        return node

    result: Document = {}
    names = dict(COLLECTIONS)
    for key in sorted(document, key=lambda _: chooser.random()):
        value = document[key]
        if key in names:
            entries = [walk(entry, key, "") for entry in value]
            chooser.shuffle(entries)
            result[key] = entries
        else:
            result[key] = walk(value, "map", key)
    return result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_reorder_alone_is_no_change(backend: _backend.Engine, seed: int) -> None:
    old = example()
    permuted = _permuted(old, seed)
    assert permuted != old or seed  # the shuffle reordered something
    assert json.dumps(permuted) != json.dumps(old)
    diff = diff_maps(old, permuted)
    assert diff.diffed and diff.changes == []
    # The semantic digest is over the binding's canonical JSON, array order included: a permuted
    # binding is either stale (PF221, no member changed) or, re-sealed, changed by order alone.
    stale = {r.id for r in diff.review if r.stale is not None}
    assert all(not r.members for r in diff.review)
    resealed = diff_maps(old, sealed(backend, permuted))
    assert resealed.changes == [] and resealed.new.ok
    assert all(r.digest_changed and not r.members for r in resealed.review)
    assert {r.id for r in resealed.review} == stale


def test_renamed_entries_are_renames_and_their_references_follow(
    backend: _backend.Engine,
) -> None:
    def rename(document: Document) -> None:
        old_id, new_id = "northwind_cli.pty", "northwind_cli.terminal"
        for entry in document["transports"]:
            if entry["transport_id"] == old_id:
                entry["transport_id"] = new_id
        for implementation in document["implementations"]:
            ids = implementation["transport_ids"]
            implementation["transport_ids"] = [new_id if i == old_id else i for i in ids]
        capability = document["capabilities"][0]
        old_capability, capability["capability_id"] = capability["capability_id"], "northwind.read"
        for binding in document["operation_bindings"]:
            ids = binding["capability_ids"]
            binding["capability_ids"] = [
                "northwind.read" if i == old_capability else i for i in ids
            ]
        for claim in document["evidence_claims"]:
            if claim["subject_id"] == old_capability:
                claim["subject_id"] = "northwind.read"

    diff = _diff(backend, rename)
    assert diff.new.ok
    assert {(c.collection, c.old, c.new) for c in diff.changes} == {
        ("transports", "northwind_cli.pty", "northwind_cli.terminal"),
        ("capabilities", "northwind_cli.session.read_transcript", "northwind.read"),
    }
    assert {(c.action, c.classification) for c in diff.changes} == {("renamed", "neutral")}
    # The binding of the renamed capability keeps its meaning but not its digest.
    assert [r.members for r in diff.review] == [()]


def test_a_renamed_binding_is_reviewed(backend: _backend.Engine) -> None:
    diff = _diff(backend, _set((*B1, "implementation_operation_id"), "northwind_cli.2_4.prompt"))
    (rename,) = [c for c in diff.changes if c.action == "renamed"]
    assert rename.old == "northwind_cli.2_4.prompt_send"
    (review,) = diff.review
    assert review.digest_changed and review.members == ("implementation_operation_id",)


def test_a_changed_binding_with_the_old_digest_is_the_pf221_error(backend: _backend.Engine) -> None:
    diff = _diff(backend, _set((*B1, "retry", "replay"), "safe"), reseal=False)
    (review,) = diff.review
    assert not review.digest_changed and review.members == ("retry/replay",)
    assert review.stale is not None and review.stale.code == "PF221"
    assert not diff.new.ok


def test_a_changed_digest_lists_what_changed(backend: _backend.Engine) -> None:
    def change(document: Document) -> None:
        _set((*B1, "retry", "replay"), "same_action_only")(document)
        _drop_item((*B1, "forbids"), {"kind": "terminal_injection"})(document)

    diff = _diff(backend, change)
    (review,) = diff.review
    assert review.digest_changed and review.stale is None
    assert set(review.members) == {"retry/replay", "forbids[]"}
    assert review.new_pointer == "/operation_bindings/1"


def test_an_invalid_side_is_reported_and_the_diff_still_runs(backend: _backend.Engine) -> None:
    diff = _diff(backend, _drop_requirement(1, "confirmation"))
    assert diff.diffed and diff.old.ok and not diff.new.ok
    assert "PF234" in {f.code for f in diff.new.report.errors}
    assert [c.rule for c in diff.loosenings] == ["requirement_removed"]


def test_a_side_that_is_not_json_is_no_diff(backend: _backend.Engine) -> None:
    diff = diff_maps(json.dumps(example()).encode(), b'{"providers": [')
    assert not diff.diffed and diff.changes == [] and not diff.new.ok
    assert diff.new.report.errors[0].code.startswith("PF0")


def test_both_backends_give_the_same_diff() -> None:
    old = example()
    new = example()
    _set(("capabilities", 5, "remote_safety"), "safe")(new)
    _drop_requirement(1, "fresh_snapshot")(new)
    _drop_exclusion(new)
    new = _permuted(new, 5)
    results = []
    for name in _backend.BACKENDS:
        with _backend.selected(name) as engine:
            sealed_new = sealed(engine, new)
            text = json.dumps(sealed_new, indent=2).encode()
            diff = diff_maps(json.dumps(old, indent=1).encode(), text).to_dict()
            assert diff.pop("backend") == name
            results.append(diff)
    assert results[0] == results[1]
    assert results[0]["summary"]["loosening"] == 3


def test_each_change_is_located_in_old_and_in_new(backend: _backend.Engine) -> None:
    """The lines are where each pointer's value starts in its own text (the entries moved)."""
    old = example()
    new = copy.deepcopy(old)
    _set(("capabilities", 5, "remote_safety"), "safe")(new)
    _drop_requirement(1, "fresh_snapshot")(new)
    _add_item(("operation_bindings", 1, "forbids"), {"kind": "identity_fallback"})(new)
    new["operation_bindings"].reverse()
    new["capabilities"].reverse()
    old_text, new_text = _text(old), json.dumps(sealed(backend, new), indent=1).encode()
    diff = diff_maps(old_text, new_text)
    assert len(diff.changes) >= 3
    for change in diff.changes:
        for text, pointer, line in (
            (old_text, change.old_pointer, change.old_line),
            (new_text, change.new_pointer, change.new_line),
        ):
            assert pointer is not None and line == pointer_lines(text, {pointer})[pointer]
        assert change.to_dict()["old_line"] == change.old_line
    assert {c.old_line for c in diff.changes} != {c.new_line for c in diff.changes}
    # A parsed dict has no lines.
    unlocated = diff_maps(old, new_text)
    assert [c.old_line for c in unlocated.changes] == [None] * len(unlocated.changes)
    assert [c.new_line for c in unlocated.changes] == [c.new_line for c in diff.changes]


def test_values_are_compared_as_json_values(backend: _backend.Engine) -> None:
    """An integer is not the same as a float or a boolean, though Python's == says it is; the
    same on both backends (the core compares JSON values)."""
    old = example()
    for changed in (10.0, True):
        new = copy.deepcopy(old)
        _requirement_member(1, "fresh_snapshot", "max_age_seconds", changed)(new)
        diff = diff_maps(old, new)
        assert [(c.member, c.old, c.new) for c in diff.changes] == [
            ("requires/max_age_seconds", 10, changed)
        ]
        assert type(diff.changes[0].new) is type(changed)


def test_repeated_kinds_are_located_at_their_own_index(backend: _backend.Engine) -> None:
    old = example()
    new = copy.deepcopy(old)
    requires = _binding(new, 1)["requires"]
    requires.append({"kind": "confirmation", "mode": "none"})
    diff = diff_maps(old, new, backend=_backend.name_of(backend))
    added = [c for c in diff.changes if c.member == "requires[]"]
    assert [c.new_pointer for c in added] == [f"/operation_bindings/1/requires/{len(requires) - 1}"]


def test_the_backends_share_one_table_of_set_arrays() -> None:
    core = pytest.importorskip("pairling_fast._core")
    assert {(c, m): shape for c, m, shape in core.map_diff_set_arrays()} == SET_ARRAYS


def test_set_arrays_are_every_unique_array_of_the_schema() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    unique = set()

    def arrays(definition: Any, path: str) -> None:
        if not isinstance(definition, dict):
            return
        if "$ref" in definition:
            target = schema["$defs"][definition["$ref"].rsplit("/", 1)[1]]
            if target.get("uniqueItems"):
                unique.add(path)
            arrays(target, path)
        if definition.get("uniqueItems"):
            unique.add(path)
        for name, sub in definition.get("properties", {}).items():
            arrays(sub, f"{path}/{name}" if path else name)
        for sub in definition.get("oneOf", []):
            arrays(sub, path)

    for collection, _ in COLLECTIONS:
        arrays(schema["properties"][collection]["items"], f"{collection}:")
    arrays(schema["properties"]["evidence_policy"], "map:evidence_policy")
    named = {f"{collection}:{member}" for collection, member in SET_ARRAYS}
    found = {path.replace(":/", ":") for path in unique}
    assert found <= named, found - named


def test_a_real_pairling_map_against_mutated_copies(backend: _backend.Engine) -> None:
    """Pairling's own map (not bundled: no licence) when PAIRLING_HELPER names a checkout."""
    checkout = os.environ.get("PAIRLING_HELPER")
    path = (
        Path(checkout or "")
        / "thoughts/shared/specs/coding-agent-remote-control-capability-map.json"
    )
    if not checkout or not path.is_file():
        pytest.skip("PAIRLING_HELPER names no checkout of mergimg0/pairling-helper")
    old = json.loads(path.read_text(encoding="utf-8"))
    assert diff_maps(old, _permuted(old, 7)).changes == []
    new = copy.deepcopy(old)
    binding = next(
        b
        for b in new["operation_bindings"]
        if b["release_status"] == "released" and b["retry"]["replay"] == "recover_only"
    )
    binding["retry"]["replay"] = "same_action_only"
    binding["forbids"] = binding["forbids"][1:]
    binding["runtime_proofs_required"] = binding["runtime_proofs_required"][1:]
    binding["effects"].append({"kind": "mutate_context"})
    next(r for r in binding["requires"] if r["kind"] == "fresh_snapshot")["max_age_seconds"] = 30
    excluded = next(c for c in new["capabilities"] if c["remote_safety"] == "do_not_expose")
    excluded["remote_safety"] = "safe"
    del new["exclusions"][0]
    new["transports"][0]["description"] = "Renamed transport."
    renamed = new["capabilities"][1]
    old_id, renamed["capability_id"] = renamed["capability_id"], "renamed.capability"
    for entry in new["operation_bindings"]:
        entry["capability_ids"] = [
            "renamed.capability" if i == old_id else i for i in entry["capability_ids"]
        ]
    for claim in new["evidence_claims"]:
        if claim["subject_id"] == old_id:
            claim["subject_id"] = "renamed.capability"
    diff = diff_maps(old, sealed(backend, _permuted(new, 8)))
    assert diff.new.ok
    assert [(c.old, c.new) for c in diff.changes if c.action == "renamed"] == [
        (old_id, "renamed.capability")
    ]
    assert {c.rule for c in diff.loosenings} >= {
        "replay_towards_safe",
        "forbidden_action_removed",
        "runtime_proof_dropped",
        "effect_added",
        "remote_safety_towards_safe",
        "exclusion_removed",
    }
    assert {c.rule for c in diff.changes if c.classification == "neutral"} == {"other"}
    moved = [c.collection for c in diff.changes if c.action in ("added", "removed")]
    assert moved == ["exclusions"]  # the one removed: nothing reordered or renamed shows as moved
    changed = [r for r in diff.review if r.members]
    assert [r.id for r in changed] == [binding["implementation_operation_id"]]


def test_docs_show_the_rule_table_as_the_code_has_it() -> None:
    assert rules_markdown() in (ROOT / "docs" / "maps.md").read_text(encoding="utf-8")


def _resolves(document: Any, pointer: str) -> bool:
    node = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


def _source(value: Any) -> Any:
    """A dict as itself (copied), anything else as its JSON text (a parsed map is a dict)."""
    return copy.deepcopy(value) if isinstance(value, dict) else json.dumps(value).encode()


def test_broken_maps_diff_without_failing(backend: _backend.Engine) -> None:
    """Members of the example deleted or retyped as tests/map_mutations.py does it (a sample:
    every 11th value, each way), and generated maps: diffed against the example both ways, every
    pointer names a value of its document, and a map against itself has no change."""
    from map_mutations import OTHER_TYPES, _changed, _paths, _without

    from pairling_fast.generate.map import generate_map

    base = example()
    cases: list[Any] = [generate_map(3, seed) for seed in range(3)]
    for path, _ in list(_paths(base))[1::53]:
        cases.append(_without(base, path))
        cases += [_changed(base, path, value) for value in OTHER_TYPES]
    cases += [[], "map", None]
    assert len(cases) > 100
    for case in cases:
        for old, new in ((base, case), (case, base)):
            diff = diff_maps(_source(old), _source(new))
            assert diff.diffed == isinstance(case, dict)
            for change in diff.changes:
                assert change.old_pointer is None or _resolves(old, change.old_pointer)
                assert change.new_pointer is None or _resolves(new, change.new_pointer)
        if isinstance(case, dict):
            assert diff_maps(case, copy.deepcopy(case)).changes == []


def test_both_backends_agree_on_a_sample_of_the_mutation_corpus() -> None:
    """The example against 60 cases of tests/map_mutations.py (a fixed sample of the families
    quick to build: structure alone takes half a minute), as text and as parsed values: the same
    diff, lines included, on both backends. A disagreement names its case, which reproduces it
    alone."""
    from map_mutations import corpus

    from pairling_fast.generate.map import generate_map

    with _backend.selected(_backend.BACKENDS[0]) as engine:
        families = ("values", "requirements", "retry", "release")
        cases = list(corpus(engine.seal_map, generate_map, families))
    sample = random.Random(49).sample(cases, 60)
    base = example()
    for case in sample:
        pairs = [(base, case.document)]
        if not isinstance(case.document, (bytes, bytearray)):
            pairs.append((_text(base), json.dumps(case.document, indent=1).encode()))
        for old, new in pairs:
            found = [diff_maps(old, new, backend=name).to_dict() for name in _backend.BACKENDS]
            for diff in found:
                diff.pop("backend")
            assert found[0] == found[1], case.name
