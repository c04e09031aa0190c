//! Python objects ⇄ `serde_json::Value`, enforcing the JSON value model of
//! `docs/architecture.md` with the same codes and pointers as `_fallback/parse.py::check_value`,
//! and the canonical form (RFC 8785) of Python objects written without building a `Value`.

use crate::codes::{self, Code};
use std::sync::atomic::{AtomicUsize, Ordering};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::canonical::{
    self, cmp_utf16, write_finite, write_integer, write_string, BufferedSha256, ByteSink,
    CanonicalizationError, MAX_SAFE_INTEGER,
};
use crate::parse::{escape_pointer_token, LONE_SURROGATE, MAX_DEPTH, NOT_FINITE, TOO_DEEP};

/// The UTF-8 text of a Python str, borrowed from the str itself (CPython keeps it with the object),
/// or `None` for a str with lone surrogates, which has no UTF-8 form.
fn utf8_of<'a>(string: &'a Bound<'_, PyString>) -> Option<&'a str> {
    // SAFETY: `string` is a live str, borrowed for 'a.
    unsafe { utf8_at(string.as_ptr()) }
}

/// [`utf8_of`] for a str pointer.
///
/// # Safety
/// `string` must point to a live str that outlives 'a; the GIL must be held.
#[inline]
pub(super) unsafe fn utf8_at<'a>(string: *mut ffi::PyObject) -> Option<&'a str> {
    // SAFETY: as the caller guarantees.
    if let Some(text) = unsafe { compact_ascii(string) } {
        return Some(text);
    }
    // SAFETY: as the caller guarantees.
    unsafe { utf8_by_call(string) }
}

/// Whether a str has a UTF-8 form, as `utf8_at(string).is_some()`, without computing it where the
/// header answers: a one-byte str (ASCII or Latin-1) cannot hold a lone surrogate. Checking a
/// document (`pynode::plain`) asks this of every key and string.
///
/// # Safety
/// As [`utf8_at`].
#[inline]
pub(super) unsafe fn has_utf8(string: *mut ffi::PyObject) -> bool {
    if ASCII_DATA_OFFSET.load(Ordering::Relaxed) != 0 {
        // SAFETY: a live str, as the caller guarantees.
        let state = unsafe { state_of(string) };
        if (state >> KIND_SHIFT) & 0b111 == 1 {
            return true;
        }
    }
    // SAFETY: as the caller guarantees.
    unsafe { utf8_by_call(string) }.is_some()
}

/// [`utf8_at`] through CPython's `PyUnicode_AsUTF8AndSize`.
///
/// # Safety
/// As [`utf8_at`].
unsafe fn utf8_by_call<'a>(string: *mut ffi::PyObject) -> Option<&'a str> {
    let mut size: ffi::Py_ssize_t = 0;
    // SAFETY: a live str and the GIL, as the caller guarantees.
    let data = unsafe { ffi::PyUnicode_AsUTF8AndSize(string, &mut size) };
    if data.is_null() {
        // The UnicodeEncodeError is not ours to raise: the caller reports PF004 instead.
        // SAFETY: the GIL is held, as the caller guarantees.
        unsafe { ffi::PyErr_Clear() };
        return None;
    }
    let length = usize::try_from(size).ok()?;
    // SAFETY: CPython guarantees `length` bytes of valid UTF-8 at `data`, kept with the str.
    Some(unsafe {
        std::str::from_utf8_unchecked(std::slice::from_raw_parts(data.cast::<u8>(), length))
    })
}

/// Where a compact ASCII str keeps its characters, as an offset from the object, when
/// [`probe_str_layout`] verified that this interpreter lays strs out as read below; 0 otherwise.
static ASCII_DATA_OFFSET: AtomicUsize = AtomicUsize::new(0);

/// The `state` bits of CPython's `PyASCIIObject` (3.10 to 3.14, GIL builds): `interned:2, kind:3,
/// compact:1, ascii:1`, after the object header, `length` and `hash`.
const STATE_OFFSET: usize = 2 * std::mem::size_of::<usize>() + 2 * std::mem::size_of::<isize>();
const LENGTH_OFFSET: usize = 2 * std::mem::size_of::<usize>();
const KIND_SHIFT: u32 = 2;
const COMPACT_ASCII: u32 = 0b11 << 5;

/// The `state` bits of a str's header.
///
/// # Safety
/// `string` must point to a live str (every str object is at least a `PyASCIIObject`).
#[inline]
unsafe fn state_of(string: *mut ffi::PyObject) -> u32 {
    // SAFETY: as the caller guarantees.
    unsafe {
        string
            .cast::<u8>()
            .add(STATE_OFFSET)
            .cast::<u32>()
            .read_unaligned()
    }
}

/// The text of a compact ASCII str read from its header, without a call into CPython: a pure
/// ASCII str is its own UTF-8 form and has no lone surrogate. `None` for any other str (or when
/// the layout was not verified), which then takes `PyUnicode_AsUTF8AndSize`. Walking a document
/// (`pynode::plain`) and writing its canonical form read every str; under the stable ABI
/// that call was a tenth of the walk (benches/RESULTS.md, #29).
///
/// # Safety
/// As [`utf8_at`].
#[inline]
unsafe fn compact_ascii<'a>(string: *mut ffi::PyObject) -> Option<&'a str> {
    let offset = ASCII_DATA_OFFSET.load(Ordering::Relaxed);
    if offset == 0 {
        return None;
    }
    let base = string.cast::<u8>();
    // SAFETY: a live str, as the caller guarantees.
    let state = unsafe { state_of(string) };
    if state & COMPACT_ASCII != COMPACT_ASCII {
        return None;
    }
    // SAFETY: as above; a compact ASCII str keeps `length` bytes of ASCII right after its header.
    unsafe {
        let length = base.add(LENGTH_OFFSET).cast::<isize>().read_unaligned();
        let bytes = std::slice::from_raw_parts(base.add(offset), usize::try_from(length).ok()?);
        Some(std::str::from_utf8_unchecked(bytes))
    }
}

/// Verifies, once at import, that this interpreter's strs are laid out as [`compact_ascii`]
/// reads them: on sample strs of each kind, the header's kind and ASCII bits say what Python
/// says, and an ASCII str's characters are where `PyUnicode_AsUTF8AndSize` finds them. Any
/// disagreement (another interpreter, a future layout) leaves the fast read off: the answers are
/// the same either way, only slower.
pub(super) fn probe_str_layout(py: Python<'_>) {
    let version = py.version_info();
    let known =
        (version.major, version.minor) >= (3, 10) && (version.major, version.minor) <= (3, 14);
    let samples: [(&str, u32, bool); 5] = [
        ("a", 1, true),
        ("pairling_fast", 1, true),
        ("\u{e9}t\u{e9}", 1, false),
        ("\u{20ac}", 2, false),
        ("\u{1f600}", 4, false),
    ];
    let mut offset = None;
    let agrees = known
        && samples.iter().all(|&(text, kind, ascii)| {
            let string = PyString::new(py, text);
            let base = string.as_ptr().cast::<u8>();
            // SAFETY: a live str.
            let state = unsafe { state_of(string.as_ptr()) };
            if (state >> KIND_SHIFT) & 0b111 != kind
                || (state & COMPACT_ASCII == COMPACT_ASCII) != ascii
            {
                return false;
            }
            if !ascii {
                return true;
            }
            // SAFETY: a live str, the GIL held.
            let Some(utf8) = (unsafe { utf8_by_call(string.as_ptr()) }) else {
                return false;
            };
            let at = (utf8.as_ptr() as usize).wrapping_sub(base as usize);
            // SAFETY: as above.
            let length = unsafe { base.add(LENGTH_OFFSET).cast::<isize>().read_unaligned() };
            let same = *offset.get_or_insert(at) == at && (16..=128).contains(&at);
            same && usize::try_from(length).ok() == Some(text.len()) && utf8 == text
        });
    let offset = if agrees { offset.unwrap_or(0) } else { 0 };
    ASCII_DATA_OFFSET.store(offset, Ordering::Relaxed);
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    List,
    Tuple,
    Dict,
    Other,
}

/// The JSON kind of an object by its exact type: one pointer comparison per candidate, most
/// frequent first (subclasses are `Other`, left to the exact route).
#[inline]
pub(super) fn kind(object: *mut ffi::PyObject) -> Kind {
    // SAFETY: a live object; the type statics are CPython's own (stable ABI).
    unsafe {
        let ty = ffi::Py_TYPE(object);
        if ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
            Kind::Str
        } else if ty == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
            Kind::Dict
        } else if ty == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
            Kind::Int
        } else if ty == std::ptr::addr_of_mut!(ffi::PyList_Type) {
            Kind::List
        } else if ty == std::ptr::addr_of_mut!(ffi::PyBool_Type) {
            Kind::Bool
        } else if ty == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
            Kind::Float
        } else if object == ffi::Py_None() {
            Kind::Null
        } else if ty == std::ptr::addr_of_mut!(ffi::PyTuple_Type) {
            Kind::Tuple
        } else {
            Kind::Other
        }
    }
}

/// The 64-bit integer an exact `int` holds (signed, else unsigned); `None` beyond both.
pub(super) fn integer(object: *mut ffi::PyObject) -> Option<Number> {
    // SAFETY: an exact int and the GIL; an overflow's exception is cleared at once.
    unsafe {
        let signed = ffi::PyLong_AsLongLong(object);
        if signed != -1 || ffi::PyErr_Occurred().is_null() {
            return Some(signed.into());
        }
        ffi::PyErr_Clear();
        let unsigned = ffi::PyLong_AsUnsignedLongLong(object);
        if unsigned != u64::MAX || ffi::PyErr_Occurred().is_null() {
            return Some(unsigned.into());
        }
        ffi::PyErr_Clear();
        None
    }
}

pub(super) fn float(object: *mut ffi::PyObject) -> f64 {
    // SAFETY: an exact float.
    unsafe { ffi::PyFloat_AsDouble(object) }
}

/// A conversion failure; the pointer is collected in reverse while the error unwinds, so the
/// success path never builds one.
struct Unconvertible {
    code: Code,
    message: String,
    reversed_tokens: Vec<String>,
    /// Too-deep values are reported at the root (pointer ""), as the parser does.
    at_root: bool,
}

impl Unconvertible {
    fn new(code: Code, message: impl Into<String>) -> Self {
        Unconvertible {
            code,
            message: message.into(),
            reversed_tokens: Vec::new(),
            at_root: false,
        }
    }

    fn inside(mut self, token: impl Into<String>) -> Self {
        if !self.at_root {
            self.reversed_tokens.push(token.into());
        }
        self
    }

    fn into_error(self) -> CanonicalizationError {
        let mut pointer = String::new();
        for token in self.reversed_tokens.iter().rev() {
            pointer.push('/');
            pointer.push_str(&escape_pointer_token(token));
        }
        CanonicalizationError {
            code: self.code,
            message: self.message,
            pointer,
        }
    }
}

pub fn to_value(object: &Bound<'_, PyAny>) -> Result<Value, CanonicalizationError> {
    convert(object, 0).map_err(Unconvertible::into_error)
}

/// The text of a Python str; one with lone surrogates is PF004 (it has no UTF-8 form).
fn text_of(string: &Bound<'_, PyString>) -> Result<String, Unconvertible> {
    utf8_of(string)
        .map(str::to_owned)
        .ok_or_else(|| Unconvertible::new(codes::LONE_SURROGATE, LONE_SURROGATE))
}

/// A key for a pointer even when it cannot be UTF-8: each surrogate code point becomes one U+FFFD,
/// as in the fallback (`to_string_lossy` would give three, one per byte of its CESU-8 form). UTF-32
/// keeps code points apart: in UTF-16, a high and a low surrogate next to each other (two code
/// points of a Python str) would be read back as one pair.
fn key_token(key: &Bound<'_, PyString>) -> String {
    // `str.encode(key, …)`, not `key.encode(…)`: a str subclass cannot run code of its own here.
    let code_points: Vec<u32> = key
        .py()
        .get_type::<PyString>()
        .call_method1("encode", (key, "utf-32-le", "surrogatepass"))
        .ok()
        .and_then(|encoded| encoded.extract::<Vec<u8>>().ok())
        .map(|bytes| {
            bytes
                .chunks_exact(4)
                .map(|unit| u32::from_le_bytes([unit[0], unit[1], unit[2], unit[3]]))
                .collect()
        })
        .unwrap_or_default();
    code_points
        .into_iter()
        .map(|code_point| char::from_u32(code_point).unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

fn convert(object: &Bound<'_, PyAny>, depth: usize) -> Result<Value, Unconvertible> {
    // Exact built-in types by their type pointer, reading containers through borrowed references
    // (STYLE.md item 15); subclasses and defects take the checks below, which report them.
    let pointer = object.as_ptr();
    match kind(pointer) {
        Kind::Str => {
            // SAFETY: a live str, the GIL held.
            if let Some(text) = unsafe { utf8_at(pointer) } {
                return Ok(Value::String(text.to_owned()));
            }
        }
        Kind::Dict => return convert_dict(object, depth + 1),
        Kind::Int => {
            if let Some(number) = integer(pointer) {
                return Ok(Value::Number(number));
            }
        }
        Kind::List => {
            check_depth(depth + 1)?;
            // SAFETY: the type is exactly list.
            let list = unsafe { object.downcast_unchecked::<PyList>() };
            return convert_items(list.iter(), list.len(), depth + 1);
        }
        Kind::Tuple => {
            check_depth(depth + 1)?;
            // SAFETY: the type is exactly tuple.
            let tuple = unsafe { object.downcast_unchecked::<PyTuple>() };
            return convert_items(tuple.iter(), tuple.len(), depth + 1);
        }
        // SAFETY: CPython's singleton.
        Kind::Bool => return Ok(Value::Bool(pointer == unsafe { ffi::Py_True() })),
        Kind::Null => return Ok(Value::Null),
        Kind::Float => {
            if let Some(number) = Number::from_f64(float(pointer)) {
                return Ok(Value::Number(number));
            }
        }
        Kind::Other => {}
    }
    if object.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = object.downcast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if object.is_instance_of::<PyInt>() {
        if let Ok(small) = object.extract::<i64>() {
            return Ok(Value::Number(small.into()));
        }
        if let Ok(large) = object.extract::<u64>() {
            return Ok(Value::Number(large.into()));
        }
        return Err(Unconvertible::new(
            codes::INTEGER_OUT_OF_RANGE,
            "integer outside the 64-bit range",
        ));
    }
    if let Ok(float) = object.downcast::<PyFloat>() {
        return Number::from_f64(float.value())
            .map(Value::Number)
            .ok_or_else(|| Unconvertible::new(codes::NOT_FINITE, NOT_FINITE));
    }
    if let Ok(string) = object.downcast::<PyString>() {
        return text_of(string).map(Value::String);
    }
    let nested = depth + 1;
    if object.is_instance_of::<PyDict>() {
        return convert_dict(object, nested);
    }
    if let Ok(list) = object.downcast::<PyList>() {
        check_depth(nested)?;
        return convert_items(list.iter(), list.len(), nested);
    }
    if let Ok(tuple) = object.downcast::<PyTuple>() {
        check_depth(nested)?;
        return convert_items(tuple.iter(), tuple.len(), nested);
    }
    let type_name = object
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    Err(Unconvertible::new(
        codes::NOT_A_JSON_VALUE,
        format!("a {type_name} is not a JSON value"),
    ))
}

/// A dict (or subclass) entered at `depth`, its members read through borrowed references.
fn convert_dict(object: &Bound<'_, PyAny>, depth: usize) -> Result<Value, Unconvertible> {
    check_depth(depth)?;
    let py = object.py();
    let dict = object.as_ptr();
    // SAFETY: a live dict.
    let mut members =
        Map::with_capacity(usize::try_from(unsafe { ffi::PyDict_Size(dict) }).unwrap_or(0));
    let mut position: ffi::Py_ssize_t = 0;
    let mut key = std::ptr::null_mut();
    let mut item = std::ptr::null_mut();
    // SAFETY: a live dict; the references are borrowed from it, and nothing here runs Python
    // code that could change it (key_token and repr run only on the way out, with an error).
    while unsafe { ffi::PyDict_Next(dict, &mut position, &mut key, &mut item) } != 0 {
        // SAFETY: non-null borrowed references owned by the dict.
        let (key, item) = unsafe { (Borrowed::from_ptr(py, key), Borrowed::from_ptr(py, item)) };
        let name = member_name(&key)?;
        let value = convert(&item, depth).map_err(|e| e.inside(name.clone()))?;
        members.insert(name, value);
    }
    Ok(Value::Object(members))
}

/// A member's name: its key's text; a key that is not a str is PF007, one without UTF-8 PF004.
fn member_name(key: &Bound<'_, PyAny>) -> Result<String, Unconvertible> {
    if kind(key.as_ptr()) == Kind::Str {
        // SAFETY: a live str.
        if let Some(text) = unsafe { utf8_at(key.as_ptr()) } {
            return Ok(text.to_owned());
        }
    }
    let Ok(key) = key.downcast::<PyString>() else {
        return Err(Unconvertible::new(
            codes::KEY_NOT_A_STRING,
            format!(
                "object key {} is not a string",
                key.repr().map(|r| r.to_string()).unwrap_or_default()
            ),
        ));
    };
    text_of(key).map_err(|e| e.inside(key_token(key)))
}

fn check_depth(depth: usize) -> Result<(), Unconvertible> {
    if depth > MAX_DEPTH {
        return Err(Unconvertible {
            at_root: true,
            ..Unconvertible::new(codes::TOO_DEEP, TOO_DEEP)
        });
    }
    Ok(())
}

fn convert_items<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    depth: usize,
) -> Result<Value, Unconvertible> {
    let mut array = Vec::with_capacity(len);
    for (index, item) in items.enumerate() {
        array.push(convert(&item, depth).map_err(|e| e.inside(index.to_string()))?);
    }
    Ok(Value::Array(array))
}

/// The canonical bytes of a Python value.
pub fn canonicalize(object: &Bound<'_, PyAny>) -> Result<Vec<u8>, CanonicalizationError> {
    canonical_into(object, Vec::new)
}

/// Lowercase hex sha256 of the canonical bytes of a Python value.
pub fn digest_hex(object: &Bound<'_, PyAny>) -> Result<String, CanonicalizationError> {
    canonical_into(object, BufferedSha256::new).map(BufferedSha256::hex)
}

/// Writes the canonical form of `object` into a `fresh()` sink straight from the Python objects.
/// Anything unusual (a value-model defect, an integer beyond ±(2^53-1), too deep) stops that
/// writer, and the value is then converted and canonicalized the exact way, so errors keep their
/// ranking (value-model defects in document order first, then PF005 in canonical order) and
/// pointers without the fast path knowing those rules.
fn canonical_into<S: ByteSink>(
    object: &Bound<'_, PyAny>,
    fresh: impl Fn() -> S,
) -> Result<S, CanonicalizationError> {
    let mut writer = DirectWriter {
        sink: fresh(),
        numbers: ryu_js::Buffer::new(),
        members: Vec::new(),
    };
    if writer.value(object, 0).is_ok() {
        return Ok(writer.sink);
    }
    let value = to_value(object)?;
    let mut sink = fresh();
    canonical::write_canonical(&value, &mut sink)?;
    Ok(sink)
}

/// The direct writer met something only the exact route reports properly.
struct Detour;

struct DirectWriter<'a, S> {
    sink: S,
    numbers: ryu_js::Buffer,
    /// The members of the objects being written, innermost last: each object sorts its own run
    /// at the end, and one allocation serves the whole document instead of one per object.
    members: Vec<(&'a str, *mut ffi::PyObject)>,
}

impl<'a, S: ByteSink> DirectWriter<'a, S> {
    fn value(&mut self, object: &Bound<'_, PyAny>, depth: usize) -> Result<(), Detour> {
        // Exact built-in types by their type pointer (abi3 makes the subclass checks below
        // function calls); subclasses take the checks after.
        let pointer = object.as_ptr();
        match kind(pointer) {
            Kind::Str => {
                // SAFETY: a live str.
                let text = unsafe { utf8_at(pointer) }.ok_or(Detour)?;
                write_string(&mut self.sink, text);
                return Ok(());
            }
            Kind::Dict => {
                // SAFETY: the type is exactly dict.
                let dict = unsafe { object.downcast_unchecked::<PyDict>() };
                return self.object(dict, enter(depth)?);
            }
            Kind::Int => {
                let integer = integer(pointer).and_then(|n| n.as_i64()).ok_or(Detour)?;
                if integer.unsigned_abs() > MAX_SAFE_INTEGER {
                    return Err(Detour);
                }
                write_integer(&mut self.sink, integer);
                return Ok(());
            }
            Kind::List => {
                // SAFETY: the type is exactly list.
                let list = unsafe { object.downcast_unchecked::<PyList>() };
                return self.array(list.iter(), enter(depth)?);
            }
            Kind::Bool => {
                // SAFETY: CPython's singleton.
                let flag = pointer == unsafe { ffi::Py_True() };
                self.sink.put(if flag { b"true" } else { b"false" });
                return Ok(());
            }
            Kind::Float => {
                let float = float(pointer);
                if !float.is_finite() {
                    return Err(Detour);
                }
                write_finite(&mut self.sink, &mut self.numbers, float);
                return Ok(());
            }
            Kind::Null => {
                self.sink.put(b"null");
                return Ok(());
            }
            Kind::Tuple => {
                // SAFETY: the type is exactly tuple.
                let tuple = unsafe { object.downcast_unchecked::<PyTuple>() };
                return self.array(tuple.iter(), enter(depth)?);
            }
            Kind::Other => {}
        }
        if let Ok(string) = object.downcast::<PyString>() {
            write_string(&mut self.sink, utf8_of(string).ok_or(Detour)?);
        } else if let Ok(dict) = object.downcast::<PyDict>() {
            self.object(dict, enter(depth)?)?;
        } else if let Ok(flag) = object.downcast::<PyBool>() {
            self.sink
                .put(if flag.is_true() { b"true" } else { b"false" });
        } else if object.is_instance_of::<PyInt>() {
            let integer = object.extract::<i64>().map_err(|_| Detour)?;
            if integer.unsigned_abs() > MAX_SAFE_INTEGER {
                return Err(Detour);
            }
            write_integer(&mut self.sink, integer);
        } else if let Ok(float) = object.downcast::<PyFloat>() {
            let float = float.value();
            if !float.is_finite() {
                return Err(Detour);
            }
            write_finite(&mut self.sink, &mut self.numbers, float);
        } else if let Ok(list) = object.downcast::<PyList>() {
            self.array(list.iter(), enter(depth)?)?;
        } else if let Ok(tuple) = object.downcast::<PyTuple>() {
            self.array(tuple.iter(), enter(depth)?)?;
        } else if object.is_none() {
            self.sink.put(b"null");
        } else {
            return Err(Detour);
        }
        Ok(())
    }

    fn object(&mut self, dict: &Bound<'_, PyDict>, depth: usize) -> Result<(), Detour> {
        let py = dict.py();
        let start = self.members.len();
        let mut position: ffi::Py_ssize_t = 0;
        let mut key = std::ptr::null_mut();
        let mut item = std::ptr::null_mut();
        // Borrowed references, without pyo3's per-member refcounting: PyDict_Next's references stay
        // valid while the dict is unchanged, and nothing in this writer runs Python code (type
        // checks, and reads of str, int and float only) with the GIL held throughout; a failure,
        // which may allocate an exception, ends the whole walk at once (Detour).
        // SAFETY: `dict` is a live dict and the out-pointers are valid.
        while unsafe { ffi::PyDict_Next(dict.as_ptr(), &mut position, &mut key, &mut item) } != 0 {
            // SAFETY: PyDict_Next returned a non-null borrowed reference owned by `dict`.
            let key = unsafe { Borrowed::from_ptr(py, key) };
            let key = key.downcast::<PyString>().map_err(|_| Detour)?;
            // SAFETY: the key's text lives as long as the key, which `dict` holds, and `dict`
            // outlives this walk (the root is borrowed for all of it).
            let text = unsafe { utf8_at(key.as_ptr()) }.ok_or(Detour)?;
            self.members.push((text, item));
        }
        let end = self.members.len();
        self.members[start..].sort_unstable_by(|(left, _), (right, _)| cmp_utf16(left, right));
        self.sink.put(b"{");
        for index in start..end {
            if index > start {
                self.sink.put(b",");
            }
            let (key, item) = self.members[index];
            write_string(&mut self.sink, key);
            self.sink.put(b":");
            // SAFETY: a borrowed reference owned by `dict`, which is unchanged during the walk.
            let item = unsafe { Borrowed::from_ptr(py, item) };
            self.value(&item, depth)?;
        }
        self.members.truncate(start);
        self.sink.put(b"}");
        Ok(())
    }

    fn array<'py>(
        &mut self,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
        depth: usize,
    ) -> Result<(), Detour> {
        self.sink.put(b"[");
        for (index, item) in items.enumerate() {
            if index > 0 {
                self.sink.put(b",");
            }
            self.value(&item, depth)?;
        }
        self.sink.put(b"]");
        Ok(())
    }
}

/// The depth inside a container entered at `depth`; past [`MAX_DEPTH`] the exact route reports it.
fn enter(depth: usize) -> Result<usize, Detour> {
    if depth >= MAX_DEPTH {
        return Err(Detour);
    }
    Ok(depth + 1)
}

pub fn to_python(py: Python<'_>, value: &Value) -> PyResult<PyObject> {
    Ok(match value {
        Value::Null => py.None(),
        Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any().unbind(),
        Value::Number(number) => {
            if let Some(small) = number.as_i64() {
                small.into_pyobject(py)?.into_any().unbind()
            } else if let Some(large) = number.as_u64() {
                large.into_pyobject(py)?.into_any().unbind()
            } else {
                number
                    .as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
        }
        Value::String(text) => PyString::new(py, text).into_any().unbind(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Object(members) => {
            let dict = PyDict::new(py);
            for (key, item) in members {
                dict.set_item(key, to_python(py, item)?)?;
            }
            dict.into_any().unbind()
        }
    })
}
