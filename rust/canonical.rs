//! RFC 8785 JSON Canonicalization Scheme (JCS) and the sha256 digests computed over it.
//!
//! Members are sorted by the UTF-16 code units of their keys, strings are escaped minimally, and
//! numbers are written as ECMAScript's `Number.prototype.toString` would (via `ryu-js`). An integer
//! beyond ±(2^53-1) has no exact I-JSON form, so it is an error (PF005) rather than silently
//! rounded. Errors name the first offending value in canonical (sorted) order.

use crate::codes::{self, Code};
use std::cmp::Ordering;
use std::fmt;

use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

use crate::parse::{next_special, UnwindingPointer, MAX_DEPTH, TOO_DEEP};

pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// A value without an RFC 8785 canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalizationError {
    pub code: Code,
    pub message: String,
    /// RFC 6901 pointer of the offending value (`""` for PF008).
    pub pointer: String,
}

impl fmt::Display for CanonicalizationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if !self.pointer.is_empty() {
            write!(f, " at {:?}", self.pointer)?;
        }
        Ok(())
    }
}

impl std::error::Error for CanonicalizationError {}

/// Where canonical bytes go. Unlike `io::Write` it cannot fail, so canonicalization has exactly
/// one kind of error; a hasher is a sink, which lets digests stream without a buffer.
pub trait ByteSink {
    fn put(&mut self, bytes: &[u8]);

    /// `"`, `body`, `"`: a string that needs no escape (most of them), in one write where the sink
    /// can check its room once instead of three times.
    #[inline]
    fn put_quoted(&mut self, body: &[u8]) {
        self.put(b"\"");
        self.put(body);
        self.put(b"\"");
    }
}

impl ByteSink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }

    #[inline]
    fn put_quoted(&mut self, body: &[u8]) {
        self.reserve(body.len() + 2);
        self.push(b'"');
        self.extend_from_slice(body);
        self.push(b'"');
    }
}

impl ByteSink for Sha256 {
    fn put(&mut self, bytes: &[u8]) {
        self.update(bytes);
    }
}

/// A sha256 fed through a buffer: canonical output comes in many tiny pieces (`,` `:` `"`), and
/// one `Sha256::update` per piece costs more than copying the pieces into a buffer first.
pub struct BufferedSha256 {
    hasher: Sha256,
    /// Never longer than `HASH_BUFFER`. A `Vec` rather than an array: a zeroed 4 KiB array was
    /// written in full for every digest, most of whose documents are a few hundred bytes.
    buffer: Vec<u8>,
}

const HASH_BUFFER: usize = 4 << 10;

impl BufferedSha256 {
    pub fn new() -> Self {
        Self {
            hasher: Sha256::new(),
            buffer: Vec::with_capacity(HASH_BUFFER),
        }
    }

    /// Lowercase hex of the sha256 of everything put.
    pub fn hex(mut self) -> String {
        self.hasher.update(&self.buffer);
        lower_hex(&self.hasher.finalize())
    }
}

impl Default for BufferedSha256 {
    fn default() -> Self {
        Self::new()
    }
}

impl ByteSink for BufferedSha256 {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        if self.buffer.len() + bytes.len() <= HASH_BUFFER {
            self.buffer.extend_from_slice(bytes);
            return;
        }
        self.hasher.update(&self.buffer);
        self.buffer.clear();
        if bytes.len() > HASH_BUFFER {
            self.hasher.update(bytes);
        } else {
            self.buffer.extend_from_slice(bytes);
        }
    }

    #[inline]
    fn put_quoted(&mut self, body: &[u8]) {
        if self.buffer.len() + body.len() + 2 <= HASH_BUFFER {
            self.buffer.push(b'"');
            self.buffer.extend_from_slice(body);
            self.buffer.push(b'"');
            return;
        }
        self.put(b"\"");
        self.put(body);
        self.put(b"\"");
    }
}

/// Writes the canonical form of `value` into `sink`. On error the sink holds a partial prefix.
pub fn write_canonical<S: ByteSink + ?Sized>(
    value: &Value,
    sink: &mut S,
) -> Result<(), CanonicalizationError> {
    let mut writer = Writer {
        sink,
        numbers: ryu_js::Buffer::new(),
    };
    writer
        .value(value, 0)
        .map_err(|failure| failure.into_error())
}

/// The canonical UTF-8 bytes of `value`.
pub fn canonicalize(value: &Value) -> Result<Vec<u8>, CanonicalizationError> {
    let mut canonical = Vec::new();
    write_canonical(value, &mut canonical)?;
    Ok(canonical)
}

/// Lowercase hex sha256 of the canonical bytes of `value`.
pub fn digest_hex(value: &Value) -> Result<String, CanonicalizationError> {
    let mut hasher = BufferedSha256::new();
    write_canonical(value, &mut hasher)?;
    Ok(hasher.hex())
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Lowercase hex of `bytes`, without a formatter call per byte (digests are on the hot path).
/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    lower_hex(&Sha256::digest(bytes))
}

pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    let mut text = vec![0; bytes.len() * 2];
    write_lower_hex(bytes, &mut text);
    String::from_utf8(text).expect("hex digits are ASCII")
}

/// Writes the lowercase hex of `bytes` into `out` (twice as long): a digest's text on the stack.
pub(crate) fn write_lower_hex(bytes: &[u8], out: &mut [u8]) {
    for (pair, &byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 0xf)];
    }
}

/// Orders strings by their UTF-16 code units, as RFC 8785 requires. UTF-8 byte order agrees
/// except where a character above U+FFFF (lead byte F0..F4; a surrogate pair in UTF-16) meets one
/// in U+E000..=U+FFFF (lead byte EE or EF), so only the first differing byte decides, and only
/// that one pair of lead bytes is reversed. (A differing continuation byte means equal lead bytes.)
pub fn cmp_utf16(left: &str, right: &str) -> Ordering {
    let (left, right) = (left.as_bytes(), right.as_bytes());
    match left.iter().zip(right).position(|(l, r)| l != r) {
        None => left.len().cmp(&right.len()),
        Some(index) => {
            let (l, r) = (left[index], right[index]);
            if l >= 0xEE && r >= 0xEE && (l >= 0xF0) != (r >= 0xF0) {
                r.cmp(&l)
            } else {
                l.cmp(&r)
            }
        }
    }
}

struct Failure {
    code: Code,
    message: &'static str,
    /// `None` for PF008, which is always reported at the root.
    pointer: Option<UnwindingPointer>,
}

type Written = Result<(), Box<Failure>>;

impl Failure {
    fn within_index(mut self: Box<Self>, index: usize) -> Box<Self> {
        if let Some(pointer) = &mut self.pointer {
            pointer.push_index(index);
        }
        self
    }

    fn within_key(mut self: Box<Self>, key: &str) -> Box<Self> {
        if let Some(pointer) = &mut self.pointer {
            pointer.push_key(key);
        }
        self
    }

    fn into_error(self) -> CanonicalizationError {
        let pointer = self
            .pointer
            .as_ref()
            .map(UnwindingPointer::render)
            .unwrap_or_default();
        CanonicalizationError {
            code: self.code,
            message: self.message.to_owned(),
            pointer,
        }
    }
}

struct Writer<'s, S: ?Sized> {
    sink: &'s mut S,
    numbers: ryu_js::Buffer,
}

impl<S: ByteSink + ?Sized> Writer<'_, S> {
    fn value(&mut self, value: &Value, depth: usize) -> Written {
        match value {
            Value::Null => self.sink.put(b"null"),
            Value::Bool(true) => self.sink.put(b"true"),
            Value::Bool(false) => self.sink.put(b"false"),
            Value::Number(number) => self.number(number)?,
            Value::String(string) => write_string(self.sink, string),
            Value::Array(items) => {
                let depth = enter(depth)?;
                self.sink.put(b"[");
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        self.sink.put(b",");
                    }
                    self.value(item, depth).map_err(|f| f.within_index(index))?;
                }
                self.sink.put(b"]");
            }
            Value::Object(members) => {
                let depth = enter(depth)?;
                let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
                sorted.sort_unstable_by(|(left, _), (right, _)| cmp_utf16(left, right));
                self.sink.put(b"{");
                for (index, (key, item)) in sorted.into_iter().enumerate() {
                    if index > 0 {
                        self.sink.put(b",");
                    }
                    write_string(self.sink, key);
                    self.sink.put(b":");
                    self.value(item, depth).map_err(|f| f.within_key(key))?;
                }
                self.sink.put(b"}");
            }
        }
        Ok(())
    }

    fn number(&mut self, number: &Number) -> Written {
        let safe = |magnitude: u64| magnitude <= MAX_SAFE_INTEGER;
        match (number.as_u64(), number.as_i64()) {
            (Some(unsigned), _) if safe(unsigned) => write_integer(self.sink, unsigned as i64),
            (None, Some(signed)) if safe(signed.unsigned_abs()) => write_integer(self.sink, signed),
            // serde_json numbers that are neither u64 nor i64 are finite f64.
            (None, None) => {
                write_finite(self.sink, &mut self.numbers, number.as_f64().unwrap_or(0.0));
            }
            _ => {
                return Err(Box::new(Failure {
                    code: codes::INTEGER_OUT_OF_RANGE,
                    message: "integer beyond ±(2^53-1) has no exact canonical form",
                    pointer: Some(UnwindingPointer::default()),
                }))
            }
        }
        Ok(())
    }
}

/// Writes an integer within ±(2^53-1): its plain decimal digits, as ECMAScript prints it (every
/// such integer is an exact f64 below 1e21), without the float formatter's work.
pub(crate) fn write_integer<S: ByteSink + ?Sized>(sink: &mut S, integer: i64) {
    let mut text = [0u8; 20];
    let start = decimal(integer.unsigned_abs(), &mut text);
    if integer < 0 {
        sink.put(b"-");
    }
    sink.put(&text[start..]);
}

/// `value`'s decimal digits, written at the end of `text` (a u64 has at most 20): they are
/// `text[start..]` for the `start` returned. By hand, as a formatter call cost more than the
/// digits where this is used (JCS integers, the journal's action keys).
pub(crate) fn decimal(mut value: u64, text: &mut [u8; 20]) -> usize {
    let mut start = text.len();
    loop {
        start -= 1;
        text[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return start;
        }
    }
}

/// Writes a finite number as ECMAScript's `Number.prototype.toString` does.
pub(crate) fn write_finite<S: ByteSink + ?Sized>(
    sink: &mut S,
    numbers: &mut ryu_js::Buffer,
    float: f64,
) {
    // ECMAScript prints -0 as "0"; adding +0.0 turns -0.0 into +0.0 and changes nothing else.
    sink.put(numbers.format_finite(float + 0.0).as_bytes());
}

/// JCS string escaping: `"` and `\\` and the C0 controls only (short forms where JSON has them,
/// else lowercase `\\u00xx`); everything else, U+007F and U+2028 included, is literal.
#[inline]
pub(crate) fn write_string<S: ByteSink + ?Sized>(sink: &mut S, string: &str) {
    let bytes = string.as_bytes();
    // Most strings need no escape at all: `next_special` finds the next one eight bytes a time.
    let Some(first) = next_special(bytes) else {
        sink.put_quoted(bytes);
        return;
    };
    sink.put(b"\"");
    let mut chunk_start = 0;
    let mut found = Some(first);
    while let Some(offset) = found {
        let index = chunk_start + offset;
        let byte = bytes[index];
        let unicode_escape;
        let escaped: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            _ => {
                unicode_escape = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xf)],
                ];
                &unicode_escape
            }
        };
        sink.put(&bytes[chunk_start..index]);
        sink.put(escaped);
        chunk_start = index + 1;
        found = next_special(&bytes[chunk_start..]);
    }
    sink.put(&bytes[chunk_start..]);
    sink.put(b"\"");
}

/// The depth inside a container entered at `depth`, or PF008 past [`MAX_DEPTH`].
fn enter(depth: usize) -> Result<usize, Box<Failure>> {
    if depth >= MAX_DEPTH {
        return Err(Box::new(Failure {
            code: codes::TOO_DEEP,
            message: TOO_DEEP,
            pointer: None,
        }));
    }
    Ok(depth + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canonical(value: &Value) -> String {
        String::from_utf8(canonicalize(value).unwrap()).unwrap()
    }

    fn failure(value: &Value) -> (&'static str, String) {
        let error = canonicalize(value).unwrap_err();
        (error.code.id, error.pointer)
    }

    #[test]
    fn rfc8785_example() {
        let text = r#"{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],
            "string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}"#;
        // Not serde_json::from_str: without its float_roundtrip feature it misrounds 333333333.33333329.
        let value = crate::parse::parse_strict(text.as_bytes()).unwrap();
        assert_eq!(
            canonical(&value),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn numbers_follow_ecmascript() {
        let cases = [
            (json!(5e-324), "5e-324"),
            (json!(1e21), "1e+21"),
            (json!(1e20), "100000000000000000000"),
            (json!(1e-7), "1e-7"),
            (json!(1e-6), "0.000001"),
            (json!(-0.0), "0"),
            (json!(0.0), "0"),
            (json!(0.1), "0.1"),
            (json!(-1.5e300), "-1.5e+300"),
            (json!(56.0), "56"),
            (json!(123456789012345680000.0), "123456789012345680000"),
            (json!(9007199254740991_u64), "9007199254740991"),
            (json!(-9007199254740991_i64), "-9007199254740991"),
            (json!(9007199254740992.0), "9007199254740992"),
        ];
        for (value, expected) in cases {
            assert_eq!(canonical(&value), expected, "{value}");
        }
    }

    #[test]
    fn integers_beyond_53_bits_are_rejected_with_pointer() {
        assert_eq!(
            failure(&json!({"big": 9007199254740992_u64})),
            ("PF005", "/big".into())
        );
        assert_eq!(
            failure(&json!([0, -9007199254740992_i64])),
            ("PF005", "/1".into())
        );
        assert_eq!(
            failure(&json!({"a/b": {"~": u64::MAX}})),
            ("PF005", "/a~1b/~0".into())
        );
    }

    #[test]
    fn first_error_in_canonical_order_wins() {
        assert_eq!(
            failure(&json!({"b": u64::MAX, "a": [u64::MAX]})),
            ("PF005", "/a/0".into())
        );
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        let value = json!({"\u{1f600}": 1, "\u{e000}": 2, "b": 3, "a": 4, "": 5, "ab": 6});
        assert_eq!(
            canonical(&value),
            "{\"\":5,\"a\":4,\"ab\":6,\"b\":3,\"\u{1f600}\":1,\"\u{e000}\":2}"
        );
        assert_eq!(cmp_utf16("\u{1f600}", "\u{e000}"), Ordering::Less);
        assert_eq!(cmp_utf16("\u{e9}", "\u{e8}"), Ordering::Greater);
        assert_eq!(cmp_utf16("\u{1f600}", "\u{1f601}"), Ordering::Less);
        assert_eq!(cmp_utf16("a", "a"), Ordering::Equal);
    }

    #[test]
    fn strings_escape_only_what_jcs_requires() {
        let value = json!("\"\\\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}\u{2028}/é");
        assert_eq!(
            canonical(&value),
            "\"\\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\u{7f}\u{2028}/é\""
        );
    }

    #[test]
    fn depth_is_limited_even_for_values_built_in_rust() {
        let mut deep = json!(1);
        for _ in 0..MAX_DEPTH {
            deep = json!([deep]);
        }
        assert!(canonicalize(&deep).is_ok());
        assert_eq!(failure(&json!({"a": deep})), ("PF008", String::new()));
    }

    #[test]
    fn integers_print_their_plain_digits() {
        let max = MAX_SAFE_INTEGER as i64;
        for integer in [0, 7, -7, 10, -10, 1_234_567_890, max, -max] {
            let mut text = Vec::new();
            write_integer(&mut text, integer);
            assert_eq!(text, integer.to_string().into_bytes());
        }
    }

    #[test]
    fn buffered_digest_is_the_digest_of_the_bytes_across_buffer_boundaries() {
        let value = json!({
            "long": "x".repeat(3 * HASH_BUFFER + 17),
            "many": (0..3000).collect::<Vec<u32>>(),
            "fits": "y".repeat(HASH_BUFFER - 1),
        });
        let expected: String = Sha256::digest(canonicalize(&value).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(digest_hex(&value).unwrap(), expected);
    }

    #[test]
    fn quoted_strings_at_every_buffer_fill_match_the_plain_bytes() {
        // `put_quoted` checks the buffer's room once; strings ending just before, at and after the
        // buffer's end, escaped or not, must hash as the bytes the Vec sink writes.
        for fill in HASH_BUFFER - 6..=HASH_BUFFER + 1 {
            for text in ["", "a", "ab", "abc", "a\"b", "é\n", "\u{10000}"] {
                let mut plain = vec![b'x'; fill];
                let mut hasher = BufferedSha256::new();
                hasher.put(&plain);
                write_string(&mut plain, text);
                write_string(&mut hasher, text);
                assert_eq!(hasher.hex(), sha256_hex(&plain), "fill {fill}, {text:?}");
                let text_json = serde_json::to_string(text).unwrap();
                assert_eq!(&plain[fill..], text_json.as_bytes(), "{text:?}");
            }
        }
    }

    #[test]
    fn digest_streams_the_canonical_bytes() {
        let value = json!({"b": [1, 2.5], "a": "x"});
        let expected: String = Sha256::digest(canonicalize(&value).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(digest_hex(&value).unwrap(), expected);
        assert_eq!(
            digest_hex(&json!({})).unwrap(),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
    }
}
