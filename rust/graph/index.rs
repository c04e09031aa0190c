//! The collections of a map indexed by id, and the small readers every rule shares (an entry's
//! text fields, lists, objects; Pairling's id patterns and its notion of explicit text).

use serde_json::{Map, Value};

use crate::codes::Code;
use crate::report::Finding;

// The rules' indices are keyed by ids from the document: ahash with a random state keeps
// SipHash's resistance to chosen collisions and costs a fraction of it on short ids.
pub const MAP_SCHEMA_ID: &str = "pairling.capability-map.2.0.0";
pub const DIGEST_FIELD: &str = "semantic_digest";
pub const MAP_SCHEMA_VERSION: &str = "2.0.0";

pub(super) type HashMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;
pub(super) type HashSet<T> = std::collections::HashSet<T, ahash::RandomState>;

pub(super) type Object = Map<String, Value>;

/// The collections of a map, in schema order.
pub(super) const COLLECTIONS: [&str; 8] = [
    "evidence_sources",
    "providers",
    "implementations",
    "transports",
    "capabilities",
    "operation_bindings",
    "evidence_claims",
    "exclusions",
];
pub(super) const SOURCES: usize = 0;
pub(super) const PROVIDERS: usize = 1;
pub(super) const IMPLEMENTATIONS: usize = 2;
pub(super) const TRANSPORTS: usize = 3;
pub(super) const CAPABILITIES: usize = 4;
pub(super) const BINDINGS: usize = 5;
pub(super) const CLAIMS: usize = 6;
pub(super) const EXCLUSIONS: usize = 7;

/// The id member of each collection (exclusions have none).
pub(super) const ID_FIELDS: [Option<&str>; 8] = [
    Some("source_id"),
    Some("provider_id"),
    Some("implementation_id"),
    Some("transport_id"),
    Some("capability_id"),
    Some("implementation_operation_id"),
    Some("claim_id"),
    None,
];
/// Collections whose ids share the schema's graph_id space (PF202 looks across these).
pub(super) const GRAPH_ID_COLLECTIONS: [usize; 5] =
    [IMPLEMENTATIONS, TRANSPORTS, CAPABILITIES, BINDINGS, CLAIMS];
pub(super) const CITING_COLLECTIONS: [usize; 5] =
    [PROVIDERS, CAPABILITIES, BINDINGS, CLAIMS, EXCLUSIONS];
pub(super) const PROVIDER_OWNED_COLLECTIONS: [usize; 3] =
    [IMPLEMENTATIONS, TRANSPORTS, CAPABILITIES];

pub(super) fn text<'a>(entry: &'a Object, key: &str) -> Option<&'a str> {
    entry.get(key).and_then(Value::as_str)
}

/// (index, element) of each element of the array `entry[key]` that `cast` accepts; nothing if it
/// is no array. The index is the element's place in the array, skipped elements included.
fn elements<'a, T: ?Sized + 'a>(
    entry: &'a Object,
    key: &str,
    cast: fn(&'a Value) -> Option<&'a T>,
) -> impl Iterator<Item = (usize, &'a T)> {
    entry
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(move |(index, value)| cast(value).map(|element| (index, element)))
}

/// (index, string) of each string in the array `entry[key]`; nothing if it is no array.
pub(super) fn texts<'a>(entry: &'a Object, key: &str) -> impl Iterator<Item = (usize, &'a str)> {
    elements(entry, key, Value::as_str)
}

pub(super) fn contains(entry: &Object, key: &str, wanted: &str) -> bool {
    texts(entry, key).any(|(_, value)| value == wanted)
}

pub(super) fn located(code: Code, message: String, pointer: String) -> Finding {
    Finding::new(code, message).at(pointer)
}

#[derive(Default)]
pub(super) struct Collection<'a> {
    /// (index in the document, entry) of every entry that is an object.
    pub(super) entries: Vec<(usize, &'a Object)>,
    /// id → (index, entry) of the first entry with that id.
    pub(super) by_id: HashMap<&'a str, (usize, &'a Object)>,
}

impl<'a> Collection<'a> {
    pub(super) fn get(&self, id: &str) -> Option<&'a Object> {
        self.by_id.get(id).map(|(_, entry)| *entry)
    }

    pub(super) fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// (index, id) of the entries that hold the first occurrence of their id, in document order.
    pub(super) fn first_ids(
        &self,
        id_field: &'a str,
    ) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        self.entries.iter().filter_map(move |(index, entry)| {
            let id = text(entry, id_field)?;
            (self.by_id[id].0 == *index).then_some((*index, id))
        })
    }
}

/// The collections of one document, indexed by id (the first entry of an id wins).
pub(super) struct Graph<'a> {
    pub(super) document: &'a Object,
    pub(super) collections: Vec<Collection<'a>>,
}

/// Pairling's "explicit" text: something besides whitespace. Python's `str.strip`, which
/// Pairling's validator uses, also strips the separators U+001C–U+001F.
pub(super) fn explicit(value: &str) -> bool {
    value.chars().any(|c| !is_python_space(c))
}

fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// A non-empty string of whitespace only (an empty one is the schema's minLength).
pub(super) fn blank(value: &str) -> bool {
    !value.is_empty() && !explicit(value)
}

fn id_chars(
    value: &str,
    rest: impl Fn(u8) -> bool,
    length: std::ops::RangeInclusive<usize>,
) -> bool {
    let bytes = value.as_bytes();
    length.contains(&bytes.len())
        && bytes[0].is_ascii_lowercase()
        && bytes[1..].iter().all(|&b| rest(b))
}

fn lower_or_digit(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// Pairling's id pattern (its validator's, and the schema's graph_id): [a-z][a-z0-9_.-]{1,255}.
pub(super) fn is_graph_id(value: &str) -> bool {
    id_chars(value, |b| lower_or_digit(b) || b"_.-".contains(&b), 2..=256)
}

/// The bundled schema's provider_id: [a-z][a-z0-9_]{0,63}.
pub(super) fn is_schema_provider_id(value: &str) -> bool {
    id_chars(value, |b| lower_or_digit(b) || b == b'_', 1..=64)
}

/// The bundled schema's source_id: [a-z][a-z0-9-]{1,127}.
pub(super) fn is_schema_source_id(value: &str) -> bool {
    id_chars(value, |b| lower_or_digit(b) || b == b'-', 2..=128)
}

/// (index, object) of each object in the array `entry[key]`.
pub(super) fn objects<'a>(
    entry: &'a Object,
    key: &str,
) -> impl Iterator<Item = (usize, &'a Object)> {
    elements(entry, key, Value::as_object)
}

/// The keys of `entries` that `known` rejects, sorted (the fallback's `sorted(set(a) - b)`): a
/// finding that lists ids reads the same on both backends whatever the hash order.
pub(super) fn sorted_keys_without<'a, V>(
    entries: &HashMap<&'a str, V>,
    known: impl Fn(&str) -> bool,
) -> Vec<&'a str> {
    let mut keys: Vec<&str> = entries.keys().copied().filter(|key| !known(key)).collect();
    keys.sort_unstable();
    keys
}

impl<'a> Graph<'a> {
    pub(super) fn new(document: &'a Object) -> Self {
        let collections = COLLECTIONS
            .iter()
            .zip(ID_FIELDS)
            .map(|(name, id_field)| {
                let mut collection = Collection::default();
                let items = document
                    .get(*name)
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                for (index, item) in items.iter().enumerate() {
                    if let Some(entry) = item.as_object() {
                        collection.entries.push((index, entry));
                        if let Some(id) = id_field.and_then(|field| text(entry, field)) {
                            collection.by_id.entry(id).or_insert((index, entry));
                        }
                    }
                }
                collection
            })
            .collect();
        Graph {
            document,
            collections,
        }
    }

    pub(super) fn known_provider(&self, provider_id: Option<&str>) -> bool {
        provider_id.is_some_and(|id| self.collections[PROVIDERS].contains(id))
    }

    /// The provider of an entry, when the entry has one and that provider is itself known.
    pub(super) fn own_provider(&self, entry: &'a Object) -> Option<&'a str> {
        text(entry, "provider_id").filter(|id| self.known_provider(Some(id)))
    }

    /// The known provider of the known entry `id` of `collection`.
    pub(super) fn provider_of(&self, collection: usize, id: &str) -> Option<&'a str> {
        self.collections[collection]
            .get(id)
            .and_then(|entry| self.own_provider(entry))
    }

    pub(super) fn cited(&self, collections: &[usize], key: &str) -> HashSet<&'a str> {
        collections
            .iter()
            .flat_map(|&collection| self.collections[collection].entries.iter())
            .flat_map(|(_, entry)| texts(entry, key).map(|(_, value)| value))
            .collect()
    }
}
