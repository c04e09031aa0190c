//! Strict JSON text to `serde_json::Value`, enforcing the value model of `docs/architecture.md`.
//!
//! Hand-written rather than `serde_json::from_slice` because the value model needs what serde_json
//! hides or forgives: the pointer of a duplicate key, lone surrogate escapes, integers beyond 64 bits
//! (serde_json turns them into f64) and float literals that overflow.
//!
//! The pure-Python fallback (`_fallback/parse.py`) is built on `json.loads`, and both backends must
//! agree, so this parser reproduces CPython's syntax errors: the same `JSONDecodeError.msg` text at
//! the same position (line, and column counted in characters). Defects rank in two tiers:
//! 1. text defects: invalid UTF-8 (PF003, the whole input is checked first), syntax (PF001) and
//!    nesting deeper than [`MAX_DEPTH`] (PF008); the first in document order wins;
//! 2. value-model defects: duplicate key (PF002), lone surrogate (PF004), integer outside 64 bits
//!    (PF005), NaN/Infinity/overflowing float (PF006); reported only for text without a text
//!    defect, the first in document order.
//!
//! `-0` is the integer 0, as in Python. `NaN`, `Infinity` and `-Infinity` are reported as PF006
//! (not PF001) because `json.loads` accepts them as literals.

use crate::codes::{self, Code};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde_json::{Map, Number, Value};

/// The deepest nesting of arrays and objects accepted; the outermost container is depth 1.
pub const MAX_DEPTH: usize = 512;

// Messages shared with `python/pyvalue.rs` and the fallback, so every backend words a defect
// alike.
pub(crate) const TOO_DEEP: &str = "nesting deeper than 512 arrays/objects";
pub(crate) const LONE_SURROGATE: &str = "string contains a lone UTF-16 surrogate";
pub(crate) const NOT_FINITE: &str = "NaN and Infinity are not JSON numbers";

// CPython's `JSONDecodeError.msg` texts, kept verbatim for parity with the fallback.
const EXPECTING_VALUE: &str = "Expecting value";
const EXPECTING_COMMA: &str = "Expecting ',' delimiter";
const EXPECTING_COLON: &str = "Expecting ':' delimiter";
const EXPECTING_NAME: &str = "Expecting property name enclosed in double quotes";
const EXTRA_DATA: &str = "Extra data";
const UNTERMINATED_STRING: &str = "Unterminated string starting at";
const CONTROL_CHARACTER: &str = "Invalid control character at";
const INVALID_ESCAPE: &str = "Invalid \\escape";
const INVALID_UNICODE_ESCAPE: &str = "Invalid \\uXXXX escape";

/// Why a JSON text was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    pub code: Code,
    pub message: String,
    /// RFC 6901 pointer of the offending value; `""` for text defects.
    pub pointer: String,
    /// 1-based line of a text defect (PF001, PF003, PF008); `None` for value-model defects.
    pub line: Option<usize>,
    /// 1-based column, in characters, of a text defect; `None` for value-model defects.
    pub column: Option<usize>,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if !self.pointer.is_empty() {
            write!(f, " at {:?}", self.pointer)?;
        }
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, " (line {line}, column {column})")?;
        }
        Ok(())
    }
}

impl std::error::Error for JsonError {}

/// Unescapes one JSON Pointer reference token (RFC 6901 §4: `~1` to `/` first, then `~0` to `~`).
pub fn unescape_pointer_token(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// Escapes one JSON Pointer reference token (RFC 6901: `~` as `~0`, `/` as `~1`).
pub fn escape_pointer_token(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// A JSON Pointer assembled while an error unwinds out of nested values, innermost token first,
/// so the success path never pays for tracking where it is.
#[derive(Debug, Default)]
pub(crate) struct UnwindingPointer(Vec<String>);

impl UnwindingPointer {
    pub(crate) fn push_key(&mut self, key: &str) {
        self.0.push(escape_pointer_token(key).into_owned());
    }

    pub(crate) fn push_index(&mut self, index: usize) {
        self.0.push(index.to_string());
    }

    pub(crate) fn render(&self) -> String {
        self.0
            .iter()
            .rev()
            .fold(String::new(), |mut pointer, token| {
                pointer.push('/');
                pointer.push_str(token);
                pointer
            })
    }
}

/// Tells whether a member name is new to an object being parsed: by comparing while the object
/// is small (nearly all are), through an index once it is not, so an object of a million members
/// is not quadratic.
#[derive(Default)]
pub(crate) struct MemberNames(Option<HashSet<String, ahash::RandomState>>);

impl MemberNames {
    const COMPARED: usize = 16;

    /// Whether `name` is not among the `count` names `earlier()` lists (the object's so far);
    /// a new name is recorded.
    pub(crate) fn insert<'n, I: Iterator<Item = &'n str>>(
        &mut self,
        earlier: impl Fn() -> I,
        count: usize,
        name: &str,
    ) -> bool {
        if let Some(index) = &mut self.0 {
            return index.insert(name.to_owned());
        }
        if earlier().any(|member| member == name) {
            return false;
        }
        if count + 1 >= Self::COMPARED {
            let mut index: HashSet<String, _> = earlier().map(str::to_owned).collect();
            index.insert(name.to_owned());
            self.0 = Some(index);
        }
        true
    }
}

/// One scalar as parsed; a string borrows the text unless it has escapes.
pub(crate) enum Scalar<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
}

/// What the parser builds: a `serde_json::Value` tree ([`parse_strict`]) or a flat tape over the
/// text (`crate::tape`). One grammar and one set of checks for both; the sink only stores.
pub(crate) trait Sink<'a> {
    type Value;
    type Array;
    type Object;
    /// A sink for a text of `len` bytes.
    fn for_text(len: usize) -> Self;
    fn scalar(&mut self, scalar: Scalar<'a>) -> Self::Value;
    fn begin_array(&mut self) -> Self::Array;
    fn element(&mut self, array: &mut Self::Array, element: Self::Value);
    fn end_array(&mut self, array: Self::Array) -> Self::Value;
    fn begin_object(&mut self) -> Self::Object;
    /// Records `name` as the next member's; false, recording nothing, when the object has it.
    fn name(&mut self, object: &mut Self::Object, name: Cow<'a, str>) -> bool;
    /// The value of the member named last.
    fn member(&mut self, object: &mut Self::Object, value: Self::Value);
    fn end_object(&mut self, object: Self::Object) -> Self::Value;
}

/// The `serde_json::Value` tree of [`parse_strict`].
struct Tree;

impl<'a> Sink<'a> for Tree {
    type Value = Value;
    type Array = Vec<Value>;
    type Object = (Vec<(String, Value)>, MemberNames);

    fn for_text(_: usize) -> Self {
        Tree
    }

    fn scalar(&mut self, scalar: Scalar<'a>) -> Value {
        match scalar {
            Scalar::Null => Value::Null,
            Scalar::Bool(flag) => Value::Bool(flag),
            Scalar::Number(number) => Value::Number(number),
            Scalar::String(string) => Value::String(string.into_owned()),
        }
    }

    fn begin_array(&mut self) -> Vec<Value> {
        Vec::new()
    }

    fn element(&mut self, array: &mut Vec<Value>, element: Value) {
        array.push(element);
    }

    fn end_array(&mut self, mut elements: Vec<Value>) -> Value {
        // A vector grown item by item has room for at least 4: a one-item array, the commonest
        // in a map, would keep three empty 72-byte `Value` slots (docs/maps.md, "Memory").
        elements.shrink_to_fit();
        Value::Array(elements)
    }

    // Members are gathered first and the map built at its final size: grown member by member it
    // keeps up to twice the room it needs (three 104-byte member slots for one member), a third
    // of a parsed capability map. Each name is then hashed once, by the map.
    fn begin_object(&mut self) -> Self::Object {
        (Vec::new(), MemberNames::default())
    }

    fn name(&mut self, (members, names): &mut Self::Object, name: Cow<'a, str>) -> bool {
        let earlier = || members.iter().map(|(member, _)| member.as_str());
        if !names.insert(earlier, members.len(), &name) {
            return false;
        }
        members.push((name.into_owned(), Value::Null));
        true
    }

    fn member(&mut self, (members, _): &mut Self::Object, value: Value) {
        if let Some((_, slot)) = members.last_mut() {
            *slot = value;
        }
    }

    fn end_object(&mut self, (members, _): Self::Object) -> Value {
        let mut map = Map::with_capacity(members.len());
        map.extend(members);
        Value::Object(map)
    }
}

/// Parses one strict JSON text (see the module documentation for the rules and their ranking).
pub fn parse_strict(bytes: &[u8]) -> Result<Value, JsonError> {
    parse_into::<Tree>(bytes).map(|(_, value)| value)
}

/// [`parse_strict`] into any sink: the sink and the document's value, or the same error.
pub(crate) fn parse_into<'a, S: Sink<'a>>(bytes: &'a [u8]) -> Result<(S, S::Value), JsonError> {
    let text = std::str::from_utf8(bytes).map_err(|error| {
        Failure::text(
            codes::NOT_UTF8,
            "text is not valid UTF-8",
            error.valid_up_to(),
        )
        .into_error(bytes)
    })?;
    if text.starts_with('\u{feff}') {
        return Err(Failure::text(codes::INVALID_JSON, "BOM not allowed", 0).into_error(bytes));
    }
    Parser::<S>::new(text, true).document().map_err(|failure| {
        let failure = match failure.location {
            // A text defect anywhere outranks a value-model defect: look for one past this point.
            Location::Value(_) => Parser::<S>::new(text, false)
                .document()
                .err()
                .unwrap_or(failure),
            Location::Text(_) => failure,
        };
        failure.into_error(bytes)
    })
}

#[derive(Debug)]
enum Location {
    /// Byte offset of a text defect.
    Text(usize),
    Value(UnwindingPointer),
}

#[derive(Debug)]
struct Failure {
    code: Code,
    message: &'static str,
    location: Location,
}

type Parsed<T> = Result<T, Box<Failure>>;

impl Failure {
    fn text(code: Code, message: &'static str, offset: usize) -> Box<Self> {
        Box::new(Self {
            code,
            message,
            location: Location::Text(offset),
        })
    }

    fn value(code: Code, message: &'static str) -> Box<Self> {
        Box::new(Self {
            code,
            message,
            location: Location::Value(UnwindingPointer::default()),
        })
    }

    fn within_index(mut self: Box<Self>, index: usize) -> Box<Self> {
        if let Location::Value(pointer) = &mut self.location {
            pointer.push_index(index);
        }
        self
    }

    fn within_key(mut self: Box<Self>, key: &str) -> Box<Self> {
        if let Location::Value(pointer) = &mut self.location {
            pointer.push_key(key);
        }
        self
    }

    fn into_error(self, bytes: &[u8]) -> JsonError {
        let (pointer, line, column) = match &self.location {
            Location::Text(offset) => {
                let (line, column) = line_and_column(bytes, *offset);
                (String::new(), Some(line), Some(column))
            }
            Location::Value(pointer) => (pointer.render(), None, None),
        };
        JsonError {
            code: self.code,
            message: self.message.to_owned(),
            pointer,
            line,
            column,
        }
    }
}

/// 1-based line and character column of a byte offset, like `JSONDecodeError.lineno`/`colno`.
/// Only the bytes before `offset` are read, and they are valid UTF-8.
fn line_and_column(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |newline| newline + 1);
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let is_char_start = |b: &&u8| (**b & 0xC0) != 0x80;
    let column = 1 + before[line_start..].iter().filter(is_char_start).count();
    (line, column)
}

struct Parser<'a, S> {
    sink: S,
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    /// Off for the re-scan that only looks for text defects; value-model defects then become
    /// placeholders (null, U+FFFD) so parsing can go on.
    check_values: bool,
}

impl<'a, S: Sink<'a>> Parser<'a, S> {
    fn new(text: &'a str, check_values: bool) -> Self {
        Self {
            sink: S::for_text(text.len()),
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
            check_values,
        }
    }

    fn document(mut self) -> Parsed<(S, S::Value)> {
        self.skip_whitespace();
        let value = self.value()?;
        self.skip_whitespace();
        if self.pos != self.bytes.len() {
            return Err(Failure::text(codes::INVALID_JSON, EXTRA_DATA, self.pos));
        }
        Ok((self.sink, value))
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn value_defect(&self, code: Code, message: &'static str) -> Parsed<Scalar<'a>> {
        if self.check_values {
            Err(Failure::value(code, message))
        } else {
            Ok(Scalar::Null)
        }
    }

    fn value(&mut self) -> Parsed<S::Value> {
        let scalar = match self.peek() {
            Some(b'{') => return self.object(),
            Some(b'[') => return self.array(),
            _ => self.scalar()?,
        };
        Ok(self.sink.scalar(scalar))
    }

    fn scalar(&mut self) -> Parsed<Scalar<'a>> {
        let start = self.pos;
        match self.peek() {
            Some(b'"') => {
                let (string, has_lone_surrogate) = self.string()?;
                if has_lone_surrogate {
                    return self.value_defect(codes::LONE_SURROGATE, LONE_SURROGATE);
                }
                Ok(Scalar::String(string))
            }
            Some(b'n') => self.literal("null", Ok(Scalar::Null)),
            Some(b't') => self.literal("true", Ok(Scalar::Bool(true))),
            Some(b'f') => self.literal("false", Ok(Scalar::Bool(false))),
            Some(b'N') => self.literal("NaN", self.non_finite()),
            Some(b'I') => self.literal("Infinity", self.non_finite()),
            Some(b'-') if self.bytes[start..].starts_with(b"-Infinity") => {
                self.literal("-Infinity", self.non_finite())
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Failure::text(codes::INVALID_JSON, EXPECTING_VALUE, start)),
        }
    }

    fn non_finite(&self) -> Parsed<Scalar<'a>> {
        self.value_defect(codes::NOT_FINITE, NOT_FINITE)
    }

    fn literal(&mut self, word: &str, parsed: Parsed<Scalar<'a>>) -> Parsed<Scalar<'a>> {
        if !self.bytes[self.pos..].starts_with(word.as_bytes()) {
            return Err(Failure::text(
                codes::INVALID_JSON,
                EXPECTING_VALUE,
                self.pos,
            ));
        }
        self.pos += word.len();
        parsed
    }

    /// The number grammar of CPython's scanner: a `.` or exponent without digits ends the number
    /// (and becomes the next, unexpected, character) instead of being an error inside it.
    fn number(&mut self) -> Parsed<Scalar<'a>> {
        let bytes = self.bytes;
        let start = self.pos;
        let negative = bytes[start] == b'-';
        let mut pos = start + usize::from(negative);
        match bytes.get(pos) {
            Some(b'0') => pos += 1,
            Some(b'1'..=b'9') => pos = skip_digits(bytes, pos + 1),
            _ => return Err(Failure::text(codes::INVALID_JSON, EXPECTING_VALUE, start)),
        }
        let integer_end = pos;
        if bytes.get(pos) == Some(&b'.') && bytes.get(pos + 1).is_some_and(u8::is_ascii_digit) {
            pos = skip_digits(bytes, pos + 2);
        }
        if matches!(bytes.get(pos), Some(b'e' | b'E')) {
            let mut digits_start = pos + 1;
            if matches!(bytes.get(digits_start), Some(b'+' | b'-')) {
                digits_start += 1;
            }
            let exponent_end = skip_digits(bytes, digits_start);
            if exponent_end > digits_start {
                pos = exponent_end;
            }
        }
        self.pos = pos;
        if pos == integer_end {
            self.integer(&bytes[start + usize::from(negative)..pos], negative)
        } else {
            self.float(&self.text[start..pos])
        }
    }

    fn integer(&self, digits: &[u8], negative: bool) -> Parsed<Scalar<'a>> {
        let magnitude = digits.iter().try_fold(0u64, |acc, &digit| {
            acc.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
        });
        let number = match magnitude {
            Some(magnitude) if negative => 0i64.checked_sub_unsigned(magnitude).map(Number::from),
            Some(magnitude) => Some(Number::from(magnitude)),
            None => None,
        };
        match number {
            Some(number) => Ok(Scalar::Number(number)),
            None => self.value_defect(
                codes::INTEGER_OUT_OF_RANGE,
                "integer outside the 64-bit range",
            ),
        }
    }

    fn float(&self, literal: &str) -> Parsed<Scalar<'a>> {
        // Rust's float parsing is correctly rounded, like Python's float(); an overflow gives inf.
        let parsed = match without_large_exponent(literal) {
            Some(rewritten) => rewritten.parse::<f64>(),
            None => literal.parse::<f64>(),
        }
        .unwrap_or(f64::INFINITY);
        match Number::from_f64(parsed) {
            Some(number) => Ok(Scalar::Number(number)),
            None => self.non_finite(),
        }
    }

    /// Counts a container being entered at `self.pos`.
    fn enter(&mut self) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Failure::text(codes::TOO_DEEP, TOO_DEEP, self.pos));
        }
        self.pos += 1;
        self.skip_whitespace();
        Ok(())
    }

    /// After an element or member: true at the container's `close`, which stays at `self.pos`;
    /// false past a comma, at the next item. Anything else is a syntax error.
    fn closes_after_item(&mut self, close: u8) -> Parsed<bool> {
        self.skip_whitespace();
        match self.peek() {
            Some(byte) if byte == close => Ok(true),
            Some(b',') => {
                self.pos += 1;
                self.skip_whitespace();
                Ok(false)
            }
            _ => Err(Failure::text(
                codes::INVALID_JSON,
                EXPECTING_COMMA,
                self.pos,
            )),
        }
    }

    /// Counts the container whose closing bracket is at `self.pos` as left.
    fn leave(&mut self) {
        self.pos += 1;
        self.depth -= 1;
    }

    fn array(&mut self) -> Parsed<S::Value> {
        self.enter()?;
        let mut elements = self.sink.begin_array();
        if self.peek() != Some(b']') {
            let mut index = 0;
            loop {
                let element = self.value().map_err(|f| f.within_index(index))?;
                self.sink.element(&mut elements, element);
                index += 1;
                if self.closes_after_item(b']')? {
                    break;
                }
            }
        }
        self.leave();
        Ok(self.sink.end_array(elements))
    }

    fn object(&mut self) -> Parsed<S::Value> {
        self.enter()?;
        let mut members = self.sink.begin_object();
        if self.peek() != Some(b'}') {
            loop {
                if self.peek() != Some(b'"') {
                    return Err(Failure::text(codes::INVALID_JSON, EXPECTING_NAME, self.pos));
                }
                let (key, has_lone_surrogate) = self.string()?;
                if has_lone_surrogate && self.check_values {
                    return Err(
                        Failure::value(codes::LONE_SURROGATE, LONE_SURROGATE).within_key(&key)
                    );
                }
                self.skip_whitespace();
                if self.peek() != Some(b':') {
                    return Err(Failure::text(
                        codes::INVALID_JSON,
                        EXPECTING_COLON,
                        self.pos,
                    ));
                }
                self.pos += 1;
                self.skip_whitespace();
                if self.sink.name(&mut members, key.clone()) {
                    let value = self.value().map_err(|f| f.within_key(&key))?;
                    self.sink.member(&mut members, value);
                } else if self.check_values {
                    return Err(
                        Failure::value(codes::DUPLICATE_KEY, "duplicate key").within_key(&key)
                    );
                } else {
                    // The re-scan for text defects, whose document is dropped: only the text of
                    // the repeated member's value is checked.
                    self.value()?;
                }
                if self.closes_after_item(b'}')? {
                    break;
                }
            }
        }
        self.leave();
        Ok(self.sink.end_object(members))
    }

    /// Decodes the string whose opening quote is at `self.pos`: borrowed from the text when it
    /// has no escape. A lone surrogate escape becomes U+FFFD and is reported in the second field,
    /// for the caller to locate.
    fn string(&mut self) -> Parsed<(Cow<'a, str>, bool)> {
        let bytes = self.bytes;
        let quote = self.pos;
        let mut decoded = String::new();
        let mut has_lone_surrogate = false;
        let mut chunk_start = quote + 1;
        let mut pos = chunk_start;
        loop {
            pos += next_special(&bytes[pos..]).unwrap_or(bytes.len() - pos);
            match bytes.get(pos) {
                Some(b'"') if chunk_start == quote + 1 => {
                    self.pos = pos + 1;
                    return Ok((Cow::Borrowed(&self.text[chunk_start..pos]), false));
                }
                Some(b'"') => {
                    decoded.push_str(&self.text[chunk_start..pos]);
                    self.pos = pos + 1;
                    return Ok((Cow::Owned(decoded), has_lone_surrogate));
                }
                Some(b'\\') => {
                    decoded.push_str(&self.text[chunk_start..pos]);
                    pos = self.escape(pos, quote, &mut decoded, &mut has_lone_surrogate)?;
                    chunk_start = pos;
                }
                Some(_) => return Err(Failure::text(codes::INVALID_JSON, CONTROL_CHARACTER, pos)),
                None => {
                    return Err(Failure::text(
                        codes::INVALID_JSON,
                        UNTERMINATED_STRING,
                        quote,
                    ))
                }
            }
        }
    }

    /// Decodes the escape at `backslash` into `decoded`; returns the offset after it.
    fn escape(
        &self,
        backslash: usize,
        quote: usize,
        decoded: &mut String,
        has_lone_surrogate: &mut bool,
    ) -> Parsed<usize> {
        let unescaped = match self.bytes.get(backslash + 1) {
            None => {
                return Err(Failure::text(
                    codes::INVALID_JSON,
                    UNTERMINATED_STRING,
                    quote,
                ))
            }
            Some(b'u') => return self.unicode_escape(backslash + 1, decoded, has_lone_surrogate),
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(_) => {
                return Err(Failure::text(
                    codes::INVALID_JSON,
                    INVALID_ESCAPE,
                    backslash,
                ))
            }
        };
        decoded.push(unescaped);
        Ok(backslash + 2)
    }

    /// Decodes `\uXXXX` (with `u` at `u_pos`), joining a surrogate pair exactly when CPython does.
    fn unicode_escape(
        &self,
        u_pos: usize,
        decoded: &mut String,
        has_lone_surrogate: &mut bool,
    ) -> Parsed<usize> {
        let bytes = self.bytes;
        let unit = self.hex_quad(u_pos)?;
        let mut end = u_pos + 5;
        let mut scalar = char::from_u32(unit);
        let pair_follows = bytes.len() > end + 6 && bytes[end] == b'\\' && bytes[end + 1] == b'u';
        if (0xD800..0xDC00).contains(&unit) && pair_follows {
            let low = self.hex_quad(end + 1)?;
            if (0xDC00..0xE000).contains(&low) {
                scalar = char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
                end += 6;
            }
        }
        if scalar.is_none() {
            *has_lone_surrogate = true;
        }
        decoded.push(scalar.unwrap_or(char::REPLACEMENT_CHARACTER));
        Ok(end)
    }

    /// The four hex digits after the `u` at `u_pos`. Like CPython, at least one more character
    /// must follow them, otherwise the escape (not the string) is reported as broken.
    fn hex_quad(&self, u_pos: usize) -> Parsed<u32> {
        self.bytes
            .get(u_pos + 1..u_pos + 6)
            .and_then(|digits| {
                digits[..4].iter().try_fold(0u32, |acc, &digit| {
                    Some(acc << 4 | char::from(digit).to_digit(16)?)
                })
            })
            .ok_or_else(|| Failure::text(codes::INVALID_JSON, INVALID_UNICODE_ESCAPE, u_pos))
    }
}

/// The offset of the first byte of `bytes` that [`STRING_SPECIAL`] marks, if any. Eight bytes are
/// tested at a time (SWAR: a word has a special byte when one of its bytes is `"`, `\\` or below
/// 0x20), and only a word that has one is scanned byte by byte. The string scan was half of
/// parsing a journal event for `validate_json` (benches/RESULTS.md, #29); canonical output's
/// escaping scan is the same.
#[inline]
pub(crate) fn next_special(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte of `word` is zero: the classic `(w - 1…1) & !w & 0x80…80`, exact as to whether any is.
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS != 0;
    let mut start = 0;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let word = u64::from_ne_bytes(chunk.try_into().unwrap_or([0; 8]));
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0;
        if control
            || has_zero(word ^ (ONES * u64::from(b'"')))
            || has_zero(word ^ (ONES * u64::from(b'\\')))
        {
            break;
        }
        start += 8;
    }
    bytes[start..]
        .iter()
        .position(|&byte| STRING_SPECIAL[usize::from(byte)])
        .map(|offset| start + offset)
}

/// The bytes that end a run of literal string content, in JSON text (`"`, `\\`, the C0 controls,
/// which are errors) and equally in canonical output, where exactly these are escaped.
pub(crate) const STRING_SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = true;
        byte += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Exponents from here on are not read exactly by Rust's float parser (it stops accumulating
/// exponent digits at 0x10000), which matters only when a very long mantissa offsets them.
const LARGE_EXPONENT: u64 = 0x10000;

/// `literal` (a float in the JSON grammar) with the same exact value but a small exponent, when its
/// exponent is at least [`LARGE_EXPONENT`] and it is not plainly out of the double range;
/// otherwise `None` (parse it as it is). `"1" * 1_000_000 + "e-999990"` is 1111111111.1111112 in
/// Python; without this rewrite Rust reads it as infinity.
fn without_large_exponent(literal: &str) -> Option<String> {
    let (mantissa, exponent) = literal.split_once(['e', 'E'])?;
    let (exponent_negative, exponent_digits) = match exponent.as_bytes().first() {
        Some(b'-') => (true, &exponent[1..]),
        Some(b'+') => (false, &exponent[1..]),
        _ => (false, exponent),
    };
    // Saturating: an exponent beyond 10^15 outweighs any mantissa that fits in memory.
    let magnitude = exponent_digits.bytes().fold(0u64, |acc, digit| {
        acc.saturating_mul(10)
            .saturating_add(u64::from(digit - b'0'))
            .min(1_000_000_000_000_000)
    });
    if magnitude < LARGE_EXPONENT {
        return None;
    }
    let (sign, unsigned) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let (integer, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let digits = || integer.bytes().chain(fraction.bytes());
    let leading_zeros = digits().take_while(|&digit| digit == b'0').count();
    let significant: String = digits().skip(leading_zeros).map(char::from).collect();
    let significant = significant.trim_end_matches('0');
    if significant.is_empty() {
        return Some(format!("{sign}0.0"));
    }
    // The value is 0.<significant> * 10^point.
    let exponent = i128::from(magnitude) * if exponent_negative { -1 } else { 1 };
    let point = integer.len() as i128 - leading_zeros as i128 + exponent;
    Some(match point {
        // Beyond the largest double (about 1.8e308), or below half the smallest (about 4.9e-324).
        400.. => format!("{sign}1e400"),
        ..=-400 => format!("{sign}0.0"),
        _ => format!("{sign}0.{significant}e{point}"),
    })
}

fn skip_digits(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Result<Value, JsonError> {
        parse_strict(text.as_bytes())
    }

    #[test]
    fn next_special_finds_what_the_table_finds() {
        let by_table = |bytes: &[u8]| bytes.iter().position(|&b| STRING_SPECIAL[usize::from(b)]);
        // Every byte value at every position of words and tails, among plain and high bytes.
        for filler in [b'a', 0x7f, 0x80, 0xff, 0x21, b'!', b']', b'#'] {
            for len in 0..40 {
                for at in 0..len {
                    for special in 0..=255u8 {
                        let mut bytes = vec![filler; len];
                        bytes[at] = special;
                        assert_eq!(next_special(&bytes), by_table(&bytes), "{bytes:?}");
                    }
                }
                assert_eq!(
                    next_special(&vec![filler; len]),
                    by_table(&vec![filler; len])
                );
            }
        }
    }

    fn value_defect(text: &str) -> (&'static str, String) {
        let error = parse(text).expect_err(text);
        assert_eq!((error.line, error.column), (None, None), "{text}");
        (error.code.id, error.pointer)
    }

    fn text_defect(bytes: &[u8]) -> (&'static str, String, usize, usize) {
        let error = parse_strict(bytes).expect_err("must be rejected");
        assert_eq!(error.pointer, "");
        (
            error.code.id,
            error.message,
            error.line.unwrap(),
            error.column.unwrap(),
        )
    }

    #[test]
    fn parses_documents_like_serde_json() {
        let text = r#" {"a": [1, -2, 3.5, -0.0, 1e2, true, false, null, "x\u00e9\ud83d\ude00\n"],
            "b": {}, "c": [], "d": 18446744073709551615, "e": -9223372036854775808} "#;
        let expected: Value = serde_json::from_str(text).unwrap();
        assert_eq!(parse(text).unwrap(), expected);
    }

    #[test]
    fn keeps_member_order() {
        let value = parse(r#"{"b":1,"a":2}"#).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["b", "a"]);
    }

    #[test]
    fn arrays_are_built_at_their_final_size() {
        // A parsed map is mostly small containers; the room left from growing them was a third
        // of its tree (docs/maps.md, "Memory").
        let value = parse(r#"{"a":[1],"b":[1,2,3,4,5],"c":[]}"#).unwrap();
        for items in value.as_object().unwrap().values() {
            let items = items.as_array().unwrap();
            assert_eq!(items.capacity(), items.len());
        }
    }

    #[test]
    fn duplicate_names_are_found_in_objects_of_any_size() {
        // Past `MemberNames::COMPARED` members the names are looked up in an index.
        for size in [1, MemberNames::COMPARED - 1, MemberNames::COMPARED, 100] {
            let names: Vec<String> = (0..size).map(|i| format!("k{i}")).collect();
            let members: Vec<String> = names.iter().map(|name| format!(r#""{name}":0"#)).collect();
            let members = members.join(",");
            let unique = parse(&format!("{{{members}}}")).unwrap();
            let keys: Vec<&String> = unique.as_object().unwrap().keys().collect();
            assert_eq!(keys, names.iter().collect::<Vec<_>>());
            for repeated in [0, size - 1] {
                let twice = format!(r#"{{{members},"k{repeated}":NaN}}"#);
                assert_eq!(value_defect(&twice), ("PF002", format!("/k{repeated}")));
                // The re-scan for text defects reads past the duplicate to the one after it.
                let (code, message, ..) =
                    text_defect(format!("{{{members},\"k{repeated}\":1,}}").as_bytes());
                assert_eq!((code, message.as_str()), ("PF001", EXPECTING_NAME));
            }
        }
    }

    #[test]
    fn negative_zero_integer_is_zero_and_float_keeps_its_sign() {
        assert_eq!(parse("-0").unwrap(), json!(0));
        assert!(parse("-0").unwrap().is_u64());
        assert!(parse("-0.0").unwrap().as_f64().unwrap().is_sign_negative());
    }

    #[test]
    fn floats_round_trip_exactly() {
        for literal in [
            "0.1",
            "5e-324",
            "1.7976931348623157e308",
            "2.2250738585072014e-308",
            "1e-400",
        ] {
            let expected: f64 = literal.parse().unwrap();
            assert_eq!(
                parse(literal).unwrap().as_f64().unwrap().to_bits(),
                expected.to_bits()
            );
        }
    }

    #[test]
    fn long_mantissas_offset_large_exponents_exactly() {
        let ones = "1".repeat(1_000_000);
        let cases: [(String, Option<f64>); 8] = [
            (format!("{ones}e-999990"), Some(1_111_111_111.111_111_2)),
            (format!("-{ones}e-999990"), Some(-1_111_111_111.111_111_2)),
            (format!("0.{}1e+1000000", "0".repeat(999_999)), Some(1.0)),
            (format!("{ones}e-70000"), None),
            ("1e65536".to_owned(), None),
            ("1e-99999999999999999999999".to_owned(), Some(0.0)),
            ("-0.0e99999".to_owned(), Some(-0.0)),
            (format!("1{}e-{}", "0".repeat(70_000), 70_000), Some(1.0)),
        ];
        for (literal, expected) in cases {
            let parsed = parse(&literal);
            match expected {
                Some(expected) => {
                    let value = parsed.unwrap().as_f64().unwrap();
                    assert_eq!(value.to_bits(), expected.to_bits(), "{expected}");
                }
                None => assert_eq!(parsed.unwrap_err().code, "PF006"),
            }
        }
    }

    #[test]
    fn integer_range_is_64_bits() {
        assert_eq!(parse("18446744073709551615").unwrap(), json!(u64::MAX));
        assert_eq!(parse("-9223372036854775808").unwrap(), json!(i64::MIN));
        assert_eq!(
            value_defect(r#"{"n": 18446744073709551616}"#),
            ("PF005", "/n".into())
        );
        assert_eq!(
            value_defect("[-9223372036854775809]"),
            ("PF005", "/0".into())
        );
        assert_eq!(
            value_defect(&format!("[{}]", "9".repeat(5000))),
            ("PF005", "/0".into())
        );
    }

    #[test]
    fn value_defects_carry_the_pointer() {
        assert_eq!(
            value_defect(r#"{"a":{"b":1,"b":2}}"#),
            ("PF002", "/a/b".into())
        );
        assert_eq!(
            value_defect(r#"{"a":[1,"\ud800"]}"#),
            ("PF004", "/a/1".into())
        );
        assert_eq!(
            value_defect(r#"{"k\udc00":1}"#),
            ("PF004", "/k\u{fffd}".into())
        );
        assert_eq!(value_defect("[1e400]"), ("PF006", "/0".into()));
        assert_eq!(value_defect("[-1e400]"), ("PF006", "/0".into()));
        assert_eq!(value_defect("[NaN]"), ("PF006", "/0".into()));
        assert_eq!(value_defect(r#"{"x": Infinity}"#), ("PF006", "/x".into()));
        assert_eq!(value_defect("[0, -Infinity]"), ("PF006", "/1".into()));
        assert_eq!(
            value_defect(r#"{"a/b": {"~": NaN}}"#),
            ("PF006", "/a~1b/~0".into())
        );
    }

    #[test]
    fn first_value_defect_in_document_order_wins() {
        assert_eq!(value_defect(r#"{"a":1,"a":NaN}"#), ("PF002", "/a".into()));
        assert_eq!(value_defect(r#"{"a":NaN,"a":1}"#), ("PF006", "/a".into()));
        assert_eq!(
            value_defect(r#"[[1e999], "\udfff"]"#),
            ("PF006", "/0/0".into())
        );
    }

    #[test]
    fn surrogate_pairs_join_and_lone_halves_do_not() {
        assert_eq!(parse(r#""\ud83d\ude00""#).unwrap(), json!("\u{1f600}"));
        assert_eq!(parse(r#""\uD83D\uDE00""#).unwrap(), json!("\u{1f600}"));
        assert_eq!(value_defect(r#"["\ud83d\u0041"]"#), ("PF004", "/0".into()));
        assert_eq!(value_defect(r#"["\ude00\ud83d"]"#), ("PF004", "/0".into()));
    }

    #[test]
    fn text_defect_outranks_an_earlier_value_defect() {
        let (code, message, ..) = text_defect(br#"[NaN, 1,]"#);
        assert_eq!((code, message.as_str()), ("PF001", EXPECTING_VALUE));
        let (code, ..) = text_defect(format!("[NaN, {}]", "[".repeat(600)).as_bytes());
        assert_eq!(code, "PF008");
    }

    #[test]
    fn syntax_errors_match_cpython_messages_and_positions() {
        // (input, message, line, column) as reported by CPython's json.loads.
        let cases: &[(&str, &str, usize, usize)] = &[
            ("", EXPECTING_VALUE, 1, 1),
            ("  ", EXPECTING_VALUE, 1, 3),
            ("[", EXPECTING_VALUE, 1, 2),
            ("{", EXPECTING_NAME, 1, 2),
            ("[1", EXPECTING_COMMA, 1, 3),
            ("{\"a\"", EXPECTING_COLON, 1, 5),
            ("{\"a\":", EXPECTING_VALUE, 1, 6),
            ("{\"a\":1", EXPECTING_COMMA, 1, 7),
            ("[1,]", EXPECTING_VALUE, 1, 4),
            ("{\"a\":1,}", EXPECTING_NAME, 1, 8),
            ("01", EXTRA_DATA, 1, 2),
            ("1.", EXTRA_DATA, 1, 2),
            ("1e", EXTRA_DATA, 1, 2),
            ("1e+", EXTRA_DATA, 1, 2),
            ("-", EXPECTING_VALUE, 1, 1),
            ("-a", EXPECTING_VALUE, 1, 1),
            ("-NaN", EXPECTING_VALUE, 1, 1),
            ("tru", EXPECTING_VALUE, 1, 1),
            ("NaNx", EXTRA_DATA, 1, 4),
            ("[1 [", EXPECTING_COMMA, 1, 4),
            ("[1,,2]", EXPECTING_VALUE, 1, 4),
            ("\"ab", UNTERMINATED_STRING, 1, 1),
            ("\"ab\\", UNTERMINATED_STRING, 1, 1),
            ("\"a\u{1}\"", CONTROL_CHARACTER, 1, 3),
            ("\"é\u{1}\"", CONTROL_CHARACTER, 1, 3),
            ("\"\\x\"", INVALID_ESCAPE, 1, 2),
            ("\"\\u12\"", INVALID_UNICODE_ESCAPE, 1, 3),
            ("\"\\u1234", INVALID_UNICODE_ESCAPE, 1, 3),
            ("\"\\u12x4\"", INVALID_UNICODE_ESCAPE, 1, 3),
            ("\"\\ud83d\\ude00", INVALID_UNICODE_ESCAPE, 1, 9),
            ("\"\\ud83d\\ude0x\"", INVALID_UNICODE_ESCAPE, 1, 9),
            ("{\"a\":1 \"b\"}", EXPECTING_COMMA, 1, 8),
            ("[\n  \"é😀\",\n  x]", EXPECTING_VALUE, 3, 3),
            ("[1]\r\n\t x", EXTRA_DATA, 2, 3),
            ("[1,\u{a0}2]", EXPECTING_VALUE, 1, 4),
        ];
        for &(input, message, line, column) in cases {
            let expected = ("PF001", message.to_owned(), line, column);
            assert_eq!(text_defect(input.as_bytes()), expected, "{input:?}");
        }
    }

    #[test]
    fn bom_is_rejected() {
        let (code, message, line, column) = text_defect(b"\xef\xbb\xbf{}");
        assert_eq!(
            (code, message.as_str(), line, column),
            ("PF001", "BOM not allowed", 1, 1)
        );
    }

    #[test]
    fn invalid_utf8_is_located() {
        let (code, _, line, column) = text_defect(b"{\"a\":\"\xff\"}");
        assert_eq!((code, line, column), ("PF003", 1, 7));
        // A UTF-8 encoded surrogate is not UTF-8 either; the column counts characters.
        let mut text = "[\n\"\u{e9}\u{1f600}".as_bytes().to_vec();
        text.extend_from_slice(b"\xed\xa0\x80\"]");
        let (code, _, line, column) = text_defect(&text);
        assert_eq!((code, line, column), ("PF003", 2, 4));
    }

    #[test]
    fn nesting_is_limited() {
        let deep_ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&deep_ok).is_ok());
        let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(text_defect(too_deep.as_bytes()).0, "PF008");
        let (code, message, line, column) = text_defect("[".repeat(100_000).as_bytes());
        assert_eq!(
            (code, message.as_str(), line, column),
            ("PF008", TOO_DEEP, 1, MAX_DEPTH + 1)
        );
        let objects = "{\"a\":".repeat(MAX_DEPTH + 1);
        assert_eq!(text_defect(objects.as_bytes()).0, "PF008");
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(escape_pointer_token("plain"), Cow::Borrowed("plain"));
        assert_eq!(escape_pointer_token("a/b~c"), "a~1b~0c");
        assert_eq!(escape_pointer_token("~1"), "~01");
    }
}
