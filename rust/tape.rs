//! A strictly parsed JSON text as a flat tape borrowing the text, validated in place (issue #29:
//! `Validator.validate_json`).
//!
//! [`Tape::parse`] runs the parser of `crate::parse` (one grammar, one set of checks: it accepts
//! exactly what [`parse::parse_strict`] accepts, and refuses the rest with the same error), but
//! where `parse_strict` allocates a `String` per string and a map per object, the tape is one
//! vector of entries in document order: a string without escapes borrows the text, an array or
//! object is an entry followed by its items (an object's as name, value pairs) and knows where
//! they end. [`TapeJson`] is jsonschema's `Json` representation over it, as `python/pynode.rs` is
//! for Python objects, so a compiled schema validates the tape without building a
//! `serde_json::Value`.

use std::borrow::Cow;

use jsonschema::json::{cmp, Array, Json, Node, NodeIdentity, Object};
use jsonschema::JsonType;
use serde_json::{Map, Number, Value};

use crate::parse::{self, JsonError, MemberNames, Scalar, Sink};

/// One entry of a tape.
#[derive(Debug, Clone, PartialEq)]
enum Entry<'t> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'t, str>),
    /// `len` elements follow, up to the entry at `end`.
    Array {
        len: usize,
        end: usize,
    },
    /// `len` name, value pairs follow, up to the entry at `end`; each name is an `Entry::String`.
    Object {
        len: usize,
        end: usize,
    },
}

/// A parsed JSON text: its entries in document order, the root first.
#[derive(Debug)]
pub struct Tape<'t> {
    entries: Vec<Entry<'t>>,
}

impl<'t> Tape<'t> {
    /// `bytes` parsed as [`parse::parse_strict`] parses them, with the same errors.
    pub fn parse(bytes: &'t [u8]) -> Result<Self, JsonError> {
        parse::parse_into::<Writer>(bytes).map(|(writer, ())| Tape {
            entries: writer.entries,
        })
    }

    /// The document's root, for a validator compiled for [`TapeJson`].
    pub fn root(&self) -> TapeNode<'_> {
        TapeNode {
            entries: &self.entries,
            at: 0,
        }
    }
}

/// The sink that writes a tape.
struct Writer<'t> {
    entries: Vec<Entry<'t>>,
}

/// A container being written: its entry, and its items so far.
struct Open {
    at: usize,
    len: usize,
}

impl<'t> Writer<'t> {
    fn open(&mut self, entry: Entry<'t>) -> Open {
        self.entries.push(entry);
        Open {
            at: self.entries.len() - 1,
            len: 0,
        }
    }

    fn close(&mut self, Open { at, len }: Open) {
        let end = self.entries.len();
        if let Some(Entry::Array { len: l, end: e } | Entry::Object { len: l, end: e }) =
            self.entries.get_mut(at)
        {
            (*l, *e) = (len, end);
        }
    }
}

impl<'t> Sink<'t> for Writer<'t> {
    type Value = ();
    type Array = Open;
    type Object = (Open, MemberNames);

    fn for_text(len: usize) -> Self {
        // A journal event has an entry per 12 to 13 bytes of text: room for one from the start.
        Writer {
            entries: Vec::with_capacity(len / 8 + 1),
        }
    }

    fn scalar(&mut self, scalar: Scalar<'t>) {
        self.entries.push(match scalar {
            Scalar::Null => Entry::Null,
            Scalar::Bool(flag) => Entry::Bool(flag),
            Scalar::Number(number) => Entry::Number(number),
            Scalar::String(string) => Entry::String(string),
        });
    }

    fn begin_array(&mut self) -> Open {
        self.open(Entry::Array { len: 0, end: 0 })
    }

    fn element(&mut self, array: &mut Open, (): ()) {
        array.len += 1;
    }

    fn end_array(&mut self, array: Open) {
        self.close(array);
    }

    fn begin_object(&mut self) -> Self::Object {
        (
            self.open(Entry::Object { len: 0, end: 0 }),
            MemberNames::default(),
        )
    }

    fn name(&mut self, (object, names): &mut Self::Object, name: Cow<'t, str>) -> bool {
        let entries = &self.entries;
        let earlier = || members(entries, object.at, object.len).map(|(name, _)| name);
        if !names.insert(earlier, object.len, &name) {
            return false;
        }
        self.entries.push(Entry::String(name));
        true
    }

    fn member(&mut self, (object, _): &mut Self::Object, (): ()) {
        object.len += 1;
    }

    fn end_object(&mut self, (object, _): Self::Object) {
        self.close(object);
    }
}

/// The index of the entry after the value at `at` and everything in it.
fn after(entries: &[Entry<'_>], at: usize) -> usize {
    match entries[at] {
        Entry::Array { end, .. } | Entry::Object { end, .. } => end,
        _ => at + 1,
    }
}

/// Tapes as jsonschema instances.
pub struct TapeJson;

impl Json for TapeJson {
    type Node<'a> = TapeNode<'a>;
    type PreparedKey = Box<str>;
    type StringBuffer = ();
    /// A lookup compares names one by one, so a pass over the members is cheaper than a few.
    const KEYS_PER_LOOKUP: usize = 4;
    /// A tape is a tree: no node contains itself.
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> Box<str> {
        key.into()
    }

    fn with_string_node<T>((): &mut (), string: &str, f: impl FnOnce(TapeNode<'_>) -> T) -> T {
        let entries = [Entry::String(Cow::Borrowed(string))];
        f(TapeNode {
            entries: &entries,
            at: 0,
        })
    }
}

/// One value of a tape.
#[derive(Clone, Copy)]
pub struct TapeNode<'a> {
    entries: &'a [Entry<'a>],
    at: usize,
}

impl<'a> TapeNode<'a> {
    fn entry(&self) -> &'a Entry<'a> {
        &self.entries[self.at]
    }

    fn container(&self, len: usize) -> Container<'a> {
        Container {
            entries: self.entries,
            at: self.at,
            len,
        }
    }

    fn text(&self) -> Option<&'a str> {
        match self.entry() {
            Entry::String(string) => Some(string),
            _ => None,
        }
    }
}

impl<'a> Node<'a, TapeJson> for TapeNode<'a> {
    type Object = Container<'a>;
    type Array = Container<'a>;
    type Number = &'a Number;

    fn as_object(&self) -> Option<Container<'a>> {
        match self.entry() {
            Entry::Object { len, .. } => Some(self.container(*len)),
            _ => None,
        }
    }

    fn as_array(&self) -> Option<Container<'a>> {
        match self.entry() {
            Entry::Array { len, .. } => Some(self.container(*len)),
            _ => None,
        }
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        self.text().map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<&'a Number> {
        match self.entry() {
            Entry::Number(number) => Some(number),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        match self.entry() {
            Entry::Bool(flag) => Some(*flag),
            _ => None,
        }
    }

    fn is_null(&self) -> bool {
        matches!(self.entry(), Entry::Null)
    }

    fn json_type(&self) -> JsonType {
        match self.entry() {
            Entry::Null => JsonType::Null,
            Entry::Bool(_) => JsonType::Boolean,
            Entry::Number(_) => JsonType::Number,
            Entry::String(_) => JsonType::String,
            Entry::Array { .. } => JsonType::Array,
            Entry::Object { .. } => JsonType::Object,
        }
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match (self.entry(), expected) {
            (Entry::String(string), Value::String(text)) => string == text,
            (Entry::Null, _) => expected.is_null(),
            (Entry::Bool(flag), _) => expected.as_bool() == Some(*flag),
            _ => cmp::equal(&self.to_value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(value_at(self.entries, self.at))
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(std::ptr::from_ref(self.entry()) as usize))
    }
}

/// The value at `at`, as `parse_strict` would have built it (cold paths: error messages, `const`
/// against a container).
fn value_at<'a>(entries: &'a [Entry<'a>], at: usize) -> Value {
    match &entries[at] {
        Entry::Null => Value::Null,
        Entry::Bool(flag) => Value::Bool(*flag),
        Entry::Number(number) => Value::Number(number.clone()),
        Entry::String(string) => Value::String(string.clone().into_owned()),
        Entry::Array { len, .. } => Value::Array(
            Items::of(entries, at, *len)
                .map(|item| value_at(entries, item))
                .collect(),
        ),
        Entry::Object { len, .. } => {
            let mut map = Map::with_capacity(*len);
            for (name, item) in members(entries, at, *len) {
                map.insert(name.to_owned(), value_at(entries, item));
            }
            Value::Object(map)
        }
    }
}

/// The entry index of each item of the container at `at` (of `len` items): an array's elements,
/// an object's member values (each name is the entry before its value).
struct Items<'a> {
    entries: &'a [Entry<'a>],
    next: usize,
    left: usize,
    /// 1 for an object, whose items start with a name; 0 for an array.
    name: usize,
}

impl<'a> Items<'a> {
    fn of(entries: &'a [Entry<'a>], at: usize, len: usize) -> Self {
        let name = usize::from(matches!(entries[at], Entry::Object { .. }));
        Items {
            entries,
            next: at + 1,
            left: len,
            name,
        }
    }
}

impl Iterator for Items<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let at = self.next + self.name;
        self.next = after(self.entries, at);
        Some(at)
    }
}

/// The name of the member whose value is at `value`.
fn name_of<'a>(entries: &'a [Entry<'a>], value: usize) -> &'a str {
    match &entries[value - 1] {
        Entry::String(name) => name,
        _ => "",
    }
}

/// An object's members: each name, and the entry index of its value.
fn members<'a>(
    entries: &'a [Entry<'a>],
    at: usize,
    len: usize,
) -> impl Iterator<Item = (&'a str, usize)> {
    Items::of(entries, at, len).map(move |value| (name_of(entries, value), value))
}

/// An array or object of a tape.
#[derive(Clone, Copy)]
pub struct Container<'a> {
    entries: &'a [Entry<'a>],
    at: usize,
    len: usize,
}

impl<'a> Container<'a> {
    fn items(&self) -> Items<'a> {
        Items::of(self.entries, self.at, self.len)
    }
}

/// An object's members as nodes.
pub struct MemberNodes<'a>(Items<'a>);

impl<'a> Iterator for MemberNodes<'a> {
    type Item = (&'a str, TapeNode<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let entries = self.0.entries;
        let at = self.0.next()?;
        Some((name_of(entries, at), TapeNode { entries, at }))
    }
}

impl<'a> Object<'a, TapeJson> for Container<'a> {
    type Node = TapeNode<'a>;
    type MemberName = &'a str;
    type MembersIter = MemberNodes<'a>;

    fn len(&self) -> usize {
        self.len
    }

    fn get(&self, key: &Box<str>) -> Option<TapeNode<'a>> {
        let entries = self.entries;
        members(entries, self.at, self.len)
            .find(|(name, _)| *name == &**key)
            .map(|(_, at)| TapeNode { entries, at })
    }

    fn members(&self) -> MemberNodes<'a> {
        MemberNodes(self.items())
    }
}

/// An array's elements as nodes.
pub struct ElementNodes<'a>(Items<'a>);

impl<'a> Iterator for ElementNodes<'a> {
    type Item = TapeNode<'a>;

    fn next(&mut self) -> Option<TapeNode<'a>> {
        let entries = self.0.entries;
        self.0.next().map(|at| TapeNode { entries, at })
    }
}

impl<'a> Array<'a, TapeJson> for Container<'a> {
    type Node = TapeNode<'a>;
    type ElementsIter = ElementNodes<'a>;

    fn len(&self) -> usize {
        self.len
    }

    fn elements(&self) -> ElementNodes<'a> {
        ElementNodes(self.items())
    }
}

#[cfg(test)]
#[path = "tape_tests.rs"]
mod tests;
