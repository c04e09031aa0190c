//! What changed between two capability maps, over the trees their checks parsed
//! (`pairling_fast.map_diff`; `_fallback/graph/diff.py` is the same in Python, step for step).
//!
//! Entries are matched by their ids (`DIFF_COLLECTIONS`); an entry equal to a removed one but for
//! its id, its digest and references to ids renamed before it is `renamed`, and references to a
//! renamed id are no change. Arrays the schema makes sets (`SET_ARRAYS`) are compared as
//! multisets, `requires` matched by `kind`. Two values are the same when they are the same JSON
//! value: same type, an integer never the same as a non-integer, members in any order. The
//! verdicts are not judged here: the one table of rules is `map_diff_rules.py`, fed these
//! changes in the order they are found.

use std::collections::{HashMap, VecDeque};

use serde_json::{Map, Value};

use super::index::DIGEST_FIELD;
use crate::parse::escape_pointer_token;

/// The entry of the map's own members (`$schema`, `observed_at`, `evidence_policy`, ...).
pub const MAP: &str = "map";
const BINDINGS: &str = "operation_bindings";

/// Each collection of entries and the member that identifies an entry in it, in schema order.
pub const DIFF_COLLECTIONS: [(&str, &str); 8] = [
    ("evidence_sources", "source_id"),
    ("providers", "provider_id"),
    ("implementations", "implementation_id"),
    ("transports", "transport_id"),
    ("capabilities", "capability_id"),
    ("operation_bindings", "implementation_operation_id"),
    ("evidence_claims", "claim_id"),
    ("exclusions", "item"),
];

/// How an array that is a set is compared: as a multiset of values, or its objects matched by
/// `kind` (a changed requirement then shows which of its members changed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetShape {
    Set,
    Kind,
}

/// Arrays that are sets in the schema (uniqueItems, id arrays) or in Pairling's validator, by
/// collection and generic member path: `SET_ARRAYS` in `map_diff.py`, which a test holds equal.
pub const SET_ARRAYS: [(&str, &str, SetShape); 19] = [
    (
        MAP,
        "evidence_policy/machine_readable_values",
        SetShape::Set,
    ),
    ("providers", "source_refs", SetShape::Set),
    ("implementations", "observed_versions", SetShape::Set),
    ("implementations", "observed_channels", SetShape::Set),
    ("implementations", "transport_ids", SetShape::Set),
    ("capabilities", "implementation_ids", SetShape::Set),
    ("capabilities", "exact_exposure", SetShape::Set),
    ("capabilities", "source_refs", SetShape::Set),
    ("operation_bindings", "capability_ids", SetShape::Set),
    ("operation_bindings", "requires", SetShape::Kind),
    ("operation_bindings", "requires/dimensions", SetShape::Set),
    ("operation_bindings", "effects", SetShape::Set),
    ("operation_bindings", "invalidates", SetShape::Set),
    ("operation_bindings", "forbids", SetShape::Set),
    (
        "operation_bindings",
        "runtime_proofs_required",
        SetShape::Set,
    ),
    ("operation_bindings", "evidence_claim_ids", SetShape::Set),
    ("operation_bindings", "source_refs", SetShape::Set),
    ("evidence_claims", "source_refs", SetShape::Set),
    ("exclusions", "source_refs", SetShape::Set),
];

fn set_shape(collection: &str, member: &str) -> Option<SetShape> {
    SET_ARRAYS
        .iter()
        .find(|(name, path, _)| *name == collection && *path == member)
        .map(|(_, _, shape)| *shape)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Added,
    Removed,
    Changed,
    Renamed,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Added => "added",
            Action::Removed => "removed",
            Action::Changed => "changed",
            Action::Renamed => "renamed",
        }
    }
}

/// One change, unjudged: an entry added, removed or renamed, or one member of an entry changed.
/// `member` is the generic path in the entry (`retry/replay`, `forbids[]`, `""` for the entry);
/// a pointer names the value on its side, or the place that would hold it; `None` is absent.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub collection: &'static str,
    pub id: String,
    pub action: Action,
    pub member: String,
    pub old_pointer: Option<String>,
    pub new_pointer: Option<String>,
    pub old: Option<Value>,
    pub new: Option<Value>,
}

/// A binding matched (or renamed) that differs in anything: its digests on both sides (`None`
/// when absent), for the review of semantic digests.
#[derive(Clone, Debug, PartialEq)]
pub struct DifferingBinding {
    pub key: String,
    pub old_index: usize,
    pub new_index: usize,
    pub old_digest: Option<Value>,
    pub new_digest: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct MapDiff {
    pub changes: Vec<Change>,
    pub bindings: Vec<DifferingBinding>,
}

/// The diff of two maps that are both JSON objects (`None` otherwise: nothing to match).
pub fn diff_maps(old: &Value, new: &Value) -> Option<MapDiff> {
    let (Value::Object(old), Value::Object(new)) = (old, new) else {
        return None;
    };
    let mut differ = Differ::default();
    differ.top(old, new);
    Some(MapDiff {
        changes: differ.changes,
        bindings: differ.bindings,
    })
}

fn pointer(tokens: &[&str]) -> String {
    tokens.iter().fold(String::new(), |mut pointer, token| {
        pointer.push('/');
        pointer.push_str(&escape_pointer_token(token));
        pointer
    })
}

fn entry_pointer(name: &str, index: usize) -> String {
    pointer(&[name, &index.to_string()])
}

fn child(at: &str, key: &str) -> String {
    format!("{at}/{}", escape_pointer_token(key))
}

/// A text equal for two values exactly when they are the same JSON value; with `sets`, the items
/// of every array that is a set of `collection` in one order.
fn write_key(value: &Value, sets: Option<(&str, &str)>, out: &mut String) {
    match value {
        Value::Object(members) => {
            let mut sorted: Vec<_> = members.iter().collect();
            sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (name, item)) in sorted.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(name.clone()).to_string());
                out.push(':');
                let inner = sets.map(|(collection, member)| {
                    (
                        collection,
                        if member.is_empty() {
                            name.clone()
                        } else {
                            format!("{member}/{name}")
                        },
                    )
                });
                write_key(item, inner.as_ref().map(|(c, m)| (*c, m.as_str())), out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            let mut keys: Vec<String> = items
                .iter()
                .map(|item| {
                    let mut key = String::new();
                    write_key(item, sets, &mut key);
                    key
                })
                .collect();
            if sets.is_some_and(|(collection, member)| set_shape(collection, member).is_some()) {
                keys.sort_unstable();
            }
            out.push('[');
            out.push_str(&keys.join(","));
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

fn key_of(value: &Value) -> String {
    let mut key = String::new();
    write_key(value, None, &mut key);
    key
}

/// Whether two values are the same JSON value (`Value`'s equality: object members in any order,
/// an integer and a float never equal).
fn same(old: &Value, new: &Value) -> bool {
    old == new
}

/// `value` with every string that is a renamed id replaced by its new name.
fn translated(value: &Value, renamed: &HashMap<String, String>) -> Value {
    if renamed.is_empty() {
        return value.clone();
    }
    match value {
        Value::String(text) => renamed
            .get(text)
            .map_or_else(|| value.clone(), |name| Value::String(name.clone())),
        Value::Array(items) => Value::Array(items.iter().map(|i| translated(i, renamed)).collect()),
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.clone(), translated(v, renamed)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Entry key → index in a collection, in order: its id (a repeated id gets ` (#n)`; an entry
/// without a string id is keyed by position).
struct Keyed {
    order: Vec<(String, usize)>,
    at: HashMap<String, usize>,
}

impl Keyed {
    fn of(entries: Option<&Vec<Value>>, id_member: &str) -> Self {
        let mut keyed = Keyed {
            order: Vec::new(),
            at: HashMap::new(),
        };
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (index, entry) in entries.into_iter().flatten().enumerate() {
            let key = match entry.get(id_member).and_then(Value::as_str) {
                Some(identity) => {
                    let count = seen.entry(identity).or_default();
                    *count += 1;
                    if *count == 1 {
                        identity.to_string()
                    } else {
                        format!("{identity} (#{count})")
                    }
                }
                None => format!("#{index}"),
            };
            match keyed.at.get(&key) {
                // A key met again (an id spelled like a position) keeps its place, takes the index.
                Some(&slot) => keyed.order[slot].1 = index,
                None => {
                    keyed.at.insert(key.clone(), keyed.order.len());
                    keyed.order.push((key, index));
                }
            }
        }
        keyed
    }

    fn get(&self, key: &str) -> Option<usize> {
        self.at.get(key).map(|&slot| self.order[slot].1)
    }

    fn contains(&self, key: &str) -> bool {
        self.at.contains_key(key)
    }
}

/// Items of an array with their indexes in it.
type Indexed = Vec<(usize, Value)>;

/// The objects of an array by `kind`: the first of each kind in order, and the rest.
struct Kinds<'v> {
    order: Vec<(&'v str, usize)>,
    at: HashMap<&'v str, usize>,
    rest: Indexed,
}

impl<'v> Kinds<'v> {
    fn of(items: &'v [Value]) -> Self {
        let mut kinds = Kinds {
            order: Vec::new(),
            at: HashMap::new(),
            rest: Vec::new(),
        };
        for (index, item) in items.iter().enumerate() {
            match item.get("kind").and_then(Value::as_str) {
                Some(kind) if !kinds.at.contains_key(kind) => {
                    kinds.at.insert(kind, index);
                    kinds.order.push((kind, index));
                }
                _ => kinds.rest.push((index, item.clone())),
            }
        }
        kinds
    }
}

/// Where a member is: its entry and generic path.
struct Place<'p> {
    name: &'static str,
    identity: &'p str,
    member: &'p str,
}

#[derive(Default)]
struct Differ {
    changes: Vec<Change>,
    bindings: Vec<DifferingBinding>,
    renamed: HashMap<String, String>,
}

impl Differ {
    fn record(
        &mut self,
        place: &Place<'_>,
        action: Action,
        member: String,
        pointers: (Option<String>, Option<String>),
        old: Option<&Value>,
        new: Option<&Value>,
    ) {
        self.changes.push(Change {
            collection: place.name,
            id: place.identity.to_string(),
            action,
            member,
            old_pointer: pointers.0,
            new_pointer: pointers.1,
            old: old.cloned(),
            new: new.cloned(),
        });
    }

    /// What an entry with a string id is apart from its id and digest, its sets in one order.
    fn signature(name: &str, entry: &Value, id_member: &str) -> Option<String> {
        let members = entry.as_object()?;
        members.get(id_member)?.as_str()?;
        let rest: Map<String, Value> = members
            .iter()
            .filter(|(k, _)| *k != id_member && *k != DIGEST_FIELD)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut key = String::new();
        write_key(&Value::Object(rest), Some((name, "")), &mut key);
        Some(key)
    }

    /// Removed key → added key, for entries equal but for their id, their digest and ids renamed
    /// before them (`self.renamed`, which this extends).
    fn renames(
        &mut self,
        (name, id_member): (&str, &str),
        (old, new): (&[Value], &[Value]),
        (old_keys, new_keys): (&Keyed, &Keyed),
    ) -> HashMap<String, String> {
        let removed: Vec<&(String, usize)> = old_keys
            .order
            .iter()
            .filter(|(key, _)| !new_keys.contains(key))
            .collect();
        let added: Vec<&(String, usize)> = new_keys
            .order
            .iter()
            .filter(|(key, _)| !old_keys.contains(key))
            .collect();
        let mut renamed = HashMap::new();
        if removed.is_empty() || added.is_empty() {
            return renamed;
        }
        let mut waiting: HashMap<String, VecDeque<&(String, usize)>> = HashMap::new();
        for entry in added {
            if let Some(signature) = Self::signature(name, &new[entry.1], id_member) {
                waiting.entry(signature).or_default().push_back(entry);
            }
        }
        for (key, index) in removed {
            let entry = translated(&old[*index], &self.renamed);
            let Some(signature) = Self::signature(name, &entry, id_member) else {
                continue;
            };
            if let Some((to, to_index)) = waiting.get_mut(&signature).and_then(VecDeque::pop_front)
            {
                renamed.insert(key.clone(), to.clone());
                let ids = (old[*index].get(id_member), new[*to_index].get(id_member));
                if let (Some(Value::String(from)), Some(Value::String(into))) = ids {
                    self.renamed.insert(from.clone(), into.clone());
                }
            }
        }
        renamed
    }

    fn collection(
        &mut self,
        (name, id_member): (&'static str, &str),
        (old, new): (&[Value], &[Value]),
        (old_keys, new_keys): (&Keyed, &Keyed),
        renamed: &HashMap<String, String>,
    ) {
        for (key, index) in &old_keys.order {
            let place = Place {
                name,
                identity: key,
                member: "",
            };
            if let Some(new_index) = new_keys.get(key) {
                self.entry(&place, (&old[*index], &new[new_index]), (*index, new_index));
            } else if let Some(to) = renamed.get(key) {
                let new_index = new_keys.get(to).unwrap_or_default();
                self.rename(
                    &place,
                    id_member,
                    (&old[*index], &new[new_index]),
                    (*index, new_index),
                );
            } else {
                let pointers = (Some(entry_pointer(name, *index)), Some(pointer(&[name])));
                self.record(
                    &place,
                    Action::Removed,
                    String::new(),
                    pointers,
                    Some(&old[*index]),
                    None,
                );
            }
        }
        let renamed_to: std::collections::HashSet<&String> = renamed.values().collect();
        for (key, index) in &new_keys.order {
            if !old_keys.contains(key) && !renamed_to.contains(key) {
                let place = Place {
                    name,
                    identity: key,
                    member: "",
                };
                let pointers = (None, Some(entry_pointer(name, *index)));
                self.record(
                    &place,
                    Action::Added,
                    String::new(),
                    pointers,
                    None,
                    Some(&new[*index]),
                );
            }
        }
    }

    fn rename(
        &mut self,
        place: &Place<'_>,
        id_member: &str,
        (before, after): (&Value, &Value),
        (old_index, new_index): (usize, usize),
    ) {
        let name = place.name;
        let pointers = (
            Some(pointer(&[name, &old_index.to_string(), id_member])),
            Some(pointer(&[name, &new_index.to_string(), id_member])),
        );
        self.record(
            place,
            Action::Renamed,
            id_member.to_string(),
            pointers,
            before.get(id_member),
            after.get(id_member),
        );
        self.digest(place, (before, after), (old_index, new_index));
        // Its references to other renamed ids are the renames' doing, not changes of its own.
        let mut translated = translated(before, &self.renamed);
        if let (Value::Object(members), Some(after_members)) = (&mut translated, after.as_object())
        {
            if let Some(identity) = after_members.get(id_member) {
                members.insert(id_member.to_string(), identity.clone());
            }
            if let Some(digest) = before.get(DIGEST_FIELD) {
                let digest = after_members.get(DIGEST_FIELD).unwrap_or(digest).clone();
                members.insert(DIGEST_FIELD.to_string(), digest);
            }
            self.members(
                place,
                (members, after_members),
                (
                    &entry_pointer(name, old_index),
                    &entry_pointer(name, new_index),
                ),
            );
        }
    }

    fn digest(
        &mut self,
        place: &Place<'_>,
        (old, new): (&Value, &Value),
        (old_index, new_index): (usize, usize),
    ) {
        if place.name != BINDINGS {
            return;
        }
        let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
            return;
        };
        self.bindings.push(DifferingBinding {
            key: place.identity.to_string(),
            old_index,
            new_index,
            old_digest: old.get(DIGEST_FIELD).cloned(),
            new_digest: new.get(DIGEST_FIELD).cloned(),
        });
    }

    fn entry(&mut self, place: &Place<'_>, (old, new): (&Value, &Value), indexes: (usize, usize)) {
        if same(old, new) {
            return;
        }
        self.digest(place, (old, new), indexes);
        let pointers = (
            entry_pointer(place.name, indexes.0),
            entry_pointer(place.name, indexes.1),
        );
        match (old.as_object(), new.as_object()) {
            (Some(old), Some(new)) => self.members(place, (old, new), (&pointers.0, &pointers.1)),
            _ => {
                let pointers = (Some(pointers.0), Some(pointers.1));
                self.record(
                    place,
                    Action::Changed,
                    String::new(),
                    pointers,
                    Some(old),
                    Some(new),
                );
            }
        }
    }

    /// The members of two objects at `place.member`.
    fn members(
        &mut self,
        place: &Place<'_>,
        (old, new): (&Map<String, Value>, &Map<String, Value>),
        (old_at, new_at): (&str, &str),
    ) {
        // The fingerprint: reviewed with the binding, not a change in itself.
        let fingerprint =
            |key: &str| key == DIGEST_FIELD && place.member.is_empty() && place.name == BINDINGS;
        let path_of = |key: &str| {
            if place.member.is_empty() {
                key.to_string()
            } else {
                format!("{}/{key}", place.member)
            }
        };
        for (key, before) in old {
            if fingerprint(key) {
                continue;
            }
            let path = path_of(key);
            match new.get(key) {
                None => {
                    let pointers = (Some(child(old_at, key)), Some(new_at.to_string()));
                    self.record(place, Action::Changed, path, pointers, Some(before), None);
                }
                Some(after) if !same(before, after) => {
                    let inner = Place {
                        name: place.name,
                        identity: place.identity,
                        member: &path,
                    };
                    self.value(
                        &inner,
                        (before, after),
                        (child(old_at, key), child(new_at, key)),
                    );
                }
                Some(_) => {}
            }
        }
        for (key, after) in new {
            if !old.contains_key(key) && !fingerprint(key) {
                let pointers = (Some(old_at.to_string()), Some(child(new_at, key)));
                self.record(
                    place,
                    Action::Changed,
                    path_of(key),
                    pointers,
                    None,
                    Some(after),
                );
            }
        }
    }

    fn value(
        &mut self,
        place: &Place<'_>,
        (old, new): (&Value, &Value),
        pointers: (String, String),
    ) {
        if let (Value::Object(old), Value::Object(new)) = (old, new) {
            self.members(place, (old, new), (&pointers.0, &pointers.1));
            return;
        }
        if let (Some(shape), Value::Array(old), Value::Array(new)) =
            (set_shape(place.name, place.member), old, new)
        {
            let (old_at, new_at) = (&pointers.0, &pointers.1);
            match shape {
                SetShape::Kind => self.kinded(place, (old, new), (old_at, new_at)),
                SetShape::Set => {
                    let indexed = |items: &[Value]| {
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, v)| (i, v.clone()))
                            .collect()
                    };
                    self.items(place, (indexed(old), indexed(new)), (old_at, new_at));
                }
            }
            return;
        }
        if let (Value::String(old), Value::String(new)) = (old, new) {
            if self.renamed.get(old) == Some(new) {
                return; // a reference to a renamed entry
            }
        }
        let pointers = (Some(pointers.0), Some(pointers.1));
        self.record(
            place,
            Action::Changed,
            place.member.to_string(),
            pointers,
            Some(old),
            Some(new),
        );
    }

    /// Two arrays (items with their indexes) compared as multisets, so a repeat added or removed
    /// shows; an id renamed in OLD counts as its new name.
    fn items(
        &mut self,
        place: &Place<'_>,
        (old, new): (Indexed, Indexed),
        (old_at, new_at): (&str, &str),
    ) {
        let old: Indexed = old
            .into_iter()
            .map(|(index, item)| match &item {
                Value::String(text) => match self.renamed.get(text) {
                    Some(name) => (index, Value::String(name.clone())),
                    None => (index, item),
                },
                _ => (index, item),
            })
            .collect();
        let member = format!("{}[]", place.member);
        for (this, other, removed) in [(&old, &new, true), (&new, &old, false)] {
            let mut counts: HashMap<String, usize> = HashMap::new();
            for (_, item) in other {
                *counts.entry(key_of(item)).or_default() += 1;
            }
            for (index, item) in this {
                if let Some(count) = counts.get_mut(&key_of(item)).filter(|count| **count > 0) {
                    *count -= 1;
                    continue;
                }
                if removed {
                    let pointers = (Some(format!("{old_at}/{index}")), Some(new_at.to_string()));
                    self.record(
                        place,
                        Action::Changed,
                        member.clone(),
                        pointers,
                        Some(item),
                        None,
                    );
                } else {
                    let pointers = (Some(old_at.to_string()), Some(format!("{new_at}/{index}")));
                    self.record(
                        place,
                        Action::Changed,
                        member.clone(),
                        pointers,
                        None,
                        Some(item),
                    );
                }
            }
        }
    }

    /// Objects matched by their `kind` (the first of each kind; the rest as set items).
    fn kinded(
        &mut self,
        place: &Place<'_>,
        (old, new): (&[Value], &[Value]),
        (old_at, new_at): (&str, &str),
    ) {
        let (old_kinds, new_kinds) = (Kinds::of(old), Kinds::of(new));
        let member = format!("{}[]", place.member);
        for (kind, index) in &old_kinds.order {
            let at = format!("{old_at}/{index}");
            match new_kinds.at.get(kind) {
                Some(&other) => {
                    if let (Some(before), Some(after)) =
                        (old[*index].as_object(), new[other].as_object())
                    {
                        if before != after {
                            self.members(
                                place,
                                (before, after),
                                (&at, &format!("{new_at}/{other}")),
                            );
                        }
                    }
                }
                None => {
                    let pointers = (Some(at), Some(new_at.to_string()));
                    self.record(
                        place,
                        Action::Changed,
                        member.clone(),
                        pointers,
                        Some(&old[*index]),
                        None,
                    );
                }
            }
        }
        for (kind, index) in &new_kinds.order {
            if !old_kinds.at.contains_key(kind) {
                let pointers = (Some(old_at.to_string()), Some(format!("{new_at}/{index}")));
                self.record(
                    place,
                    Action::Changed,
                    member.clone(),
                    pointers,
                    None,
                    Some(&new[*index]),
                );
            }
        }
        if !old_kinds.rest.is_empty() || !new_kinds.rest.is_empty() {
            self.items(place, (old_kinds.rest, new_kinds.rest), (old_at, new_at));
        }
    }

    fn top(&mut self, old: &Map<String, Value>, new: &Map<String, Value>) {
        let is_collection = |key: &str| DIFF_COLLECTIONS.iter().any(|(name, _)| *name == key);
        let own = |members: &Map<String, Value>| -> Map<String, Value> {
            members
                .iter()
                .filter(|(k, _)| !is_collection(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        let (own_old, own_new) = (own(old), own(new));
        let root = Place {
            name: MAP,
            identity: "",
            member: "",
        };
        if own_old != own_new {
            self.members(&root, (&own_old, &own_new), ("", ""));
        }
        let differing: Vec<(&'static str, &str, Option<&Value>, Option<&Value>)> = DIFF_COLLECTIONS
            .iter()
            .map(|&(name, id_member)| (name, id_member, old.get(name), new.get(name)))
            .filter(|(_, _, before, after)| before != after)
            .collect();
        let mut plans = Vec::new();
        for &(name, id_member, before, after) in &differing {
            if let (Some(Value::Array(before)), Some(Value::Array(after))) = (before, after) {
                let keys = (
                    Keyed::of(Some(before), id_member),
                    Keyed::of(Some(after), id_member),
                );
                let renamed = self.renames((name, id_member), (before, after), (&keys.0, &keys.1));
                plans.push(Some((keys, renamed)));
            } else {
                plans.push(None);
            }
        }
        for (&(name, id_member, before, after), plan) in differing.iter().zip(plans) {
            match (plan, before, after) {
                (Some((keys, renamed)), Some(Value::Array(before)), Some(Value::Array(after))) => {
                    self.collection(
                        (name, id_member),
                        (before, after),
                        (&keys.0, &keys.1),
                        &renamed,
                    );
                }
                _ => {
                    let pointers = (
                        Some(before.map_or_else(String::new, |_| pointer(&[name]))),
                        Some(after.map_or_else(String::new, |_| pointer(&[name]))),
                    );
                    self.record(
                        &root,
                        Action::Changed,
                        name.to_string(),
                        pointers,
                        before,
                        after,
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn changes(old: Value, new: Value) -> Vec<(String, &'static str, String)> {
        diff_maps(&old, &new)
            .unwrap()
            .changes
            .into_iter()
            .map(|c| (c.id, c.action.as_str(), c.member))
            .collect()
    }

    #[test]
    fn a_reorder_alone_is_no_change() {
        let old = json!({"operation_bindings": [
            {"implementation_operation_id": "a", "forbids": [{"kind": "x"}, {"kind": "y"}],
             "requires": [{"kind": "k", "dimensions": ["p", "q"]}, {"kind": "m"}]},
            {"implementation_operation_id": "b"}]});
        let new = json!({"operation_bindings": [
            {"implementation_operation_id": "b"},
            {"requires": [{"kind": "m"}, {"dimensions": ["q", "p"], "kind": "k"}],
             "forbids": [{"kind": "y"}, {"kind": "x"}], "implementation_operation_id": "a"}]});
        assert!(changes(old, new).is_empty());
    }

    #[test]
    fn renames_are_found_and_their_references_follow() {
        let old = json!({
            "capabilities": [{"capability_id": "c1", "plane": "read"}],
            "operation_bindings": [{"implementation_operation_id": "b", "capability_ids": ["c1"],
                                    "retry": {"replay": "forbidden"}}]});
        let new = json!({
            "capabilities": [{"capability_id": "c2", "plane": "read"}],
            "operation_bindings": [{"implementation_operation_id": "b", "capability_ids": ["c2"],
                                    "retry": {"replay": "safe"}}]});
        assert_eq!(
            changes(old, new),
            [
                ("c1".to_string(), "renamed", "capability_id".to_string()),
                ("b".to_string(), "changed", "retry/replay".to_string()),
            ]
        );
    }

    #[test]
    fn set_items_and_kinds_are_located_on_their_side() {
        let old = json!({"operation_bindings": [{"implementation_operation_id": "a",
            "forbids": [{"kind": "x"}, {"kind": "y"}],
            "requires": [{"kind": "c", "mode": "ask"}, {"kind": "r"}]}]});
        let new = json!({"operation_bindings": [{"implementation_operation_id": "a",
            "forbids": [{"kind": "y"}],
            "requires": [{"kind": "r"}, {"kind": "c", "mode": "none"}, {"kind": "n"}]}]});
        let diff = diff_maps(&old, &new).unwrap();
        let found: Vec<_> = diff
            .changes
            .iter()
            .map(|c| {
                (
                    c.member.as_str(),
                    c.old_pointer.as_deref(),
                    c.new_pointer.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "forbids[]",
                    Some("/operation_bindings/0/forbids/0"),
                    Some("/operation_bindings/0/forbids")
                ),
                (
                    "requires/mode",
                    Some("/operation_bindings/0/requires/0/mode"),
                    Some("/operation_bindings/0/requires/1/mode")
                ),
                (
                    "requires[]",
                    Some("/operation_bindings/0/requires"),
                    Some("/operation_bindings/0/requires/2")
                ),
            ]
        );
        assert_eq!(diff.bindings.len(), 1);
    }

    #[test]
    fn an_integer_and_a_float_differ() {
        let old = json!({"observed_at": 1});
        let new = json!({"observed_at": 1.0});
        assert_eq!(
            changes(old, new),
            [(String::new(), "changed", "observed_at".to_string())]
        );
    }
}
