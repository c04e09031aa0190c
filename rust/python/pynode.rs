//! Python objects validated in place: jsonschema's `Json` representation over CPython objects,
//! so `Validator.is_valid(dict)` reads the dict the schema asks about instead of first copying the
//! whole document into a `serde_json::Value` (issue #29; jsonschema-rs's binding does the same,
//! its `jsonschema-value` crate with the `pyo3` feature, which needs a newer pyo3 than ours).
//!
//! The JSON value model still holds: [`plain`] walks the document once, allocating nothing, and
//! admits it only when every node is an exact built-in JSON type (`None`, `bool`, `int` within 64
//! bits, finite `float`, `str` with a UTF-8 form, `list`, `tuple`, `dict` with `str` keys) no
//! deeper than `MAX_DEPTH`. Anything else (a defect, or merely a subclass) takes the exact route
//! of `pyvalue::to_value`, which reports it as before. A node is a borrowed pointer into the
//! admitted document; nodes are read only while the GIL is held and no Python code runs (exact
//! `str` keys make dict lookups pure C), so the document cannot change under them.

use std::borrow::Cow;
use std::marker::PhantomData;

use jsonschema::json::{cmp, Array, Json, Node, NodeIdentity, Object};
use jsonschema::JsonType;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::{Number, Value};

use super::pyvalue::{float, has_utf8, integer, kind, to_value, utf8_at, Kind};
use crate::parse::MAX_DEPTH;

/// Python objects as jsonschema instances.
pub(crate) struct PyJson;

impl Json for PyJson {
    type Node<'a> = PyNode<'a>;
    type PreparedKey = Py<PyString>;
    type StringBuffer = ();

    fn prepare_key(key: &str) -> Py<PyString> {
        // Interned: a lookup then compares pointers, and the hash is already computed.
        Python::with_gil(|py| PyString::intern(py, key).unbind())
    }

    fn with_string_node<T>((): &mut (), string: &str, f: impl FnOnce(PyNode<'_>) -> T) -> T {
        // SAFETY: nodes are only read with the GIL held (module comment).
        let py = unsafe { Python::assume_gil_acquired() };
        let name = PyString::new(py, string);
        f(PyNode::at(name.as_ptr()))
    }
}

/// Whether `object` (at nesting `depth`) is inside the JSON value model as plain built-in types,
/// so it can be validated in place; see the module comment. Allocates nothing (a non-ASCII str's
/// UTF-8 form is computed once and kept by CPython with the str).
pub(super) fn plain(object: &Bound<'_, PyAny>) -> bool {
    plain_at(object.as_ptr(), 0)
}

// Leaves are checked inline and containers out of line: the common node is a leaf inside a dict,
// and checking leaves without a call saved about a fifth of a CAR event's walk (#29).
#[inline(always)]
fn plain_at(object: *mut ffi::PyObject, depth: usize) -> bool {
    match kind(object) {
        Kind::Null | Kind::Bool => true,
        // SAFETY: a live str, the GIL held.
        Kind::Str => unsafe { has_utf8(object) },
        Kind::Int => integer(object).is_some(),
        Kind::Float => float(object).is_finite(),
        Kind::List | Kind::Tuple if depth < MAX_DEPTH => plain_elements(object, depth),
        Kind::Dict if depth < MAX_DEPTH => plain_members(object, depth),
        _ => false,
    }
}

#[inline(never)]
fn plain_elements(object: *mut ffi::PyObject, depth: usize) -> bool {
    PyArr::of(object)
        .elements()
        .all(|item| plain_at(item.object, depth + 1))
}

#[inline(never)]
fn plain_members(object: *mut ffi::PyObject, depth: usize) -> bool {
    let mut position: ffi::Py_ssize_t = 0;
    let mut key = std::ptr::null_mut();
    let mut item = std::ptr::null_mut();
    // SAFETY: a live dict; borrowed references, nothing here runs Python code.
    while unsafe { ffi::PyDict_Next(object, &mut position, &mut key, &mut item) } != 0 {
        if kind(key) != Kind::Str
            // SAFETY: a live str.
            || !unsafe { has_utf8(key) }
            || !plain_at(item, depth + 1)
        {
            return false;
        }
    }
    true
}

/// One node of an admitted document, borrowed for the validation call.
#[derive(Clone, Copy)]
pub(crate) struct PyNode<'a> {
    object: *mut ffi::PyObject,
    document: PhantomData<&'a ()>,
}

impl<'a> PyNode<'a> {
    /// The root of a document [`plain`] admitted.
    pub(super) fn root(document: &'a Bound<'_, PyAny>) -> Self {
        PyNode::at(document.as_ptr())
    }

    fn at(object: *mut ffi::PyObject) -> Self {
        PyNode {
            object,
            document: PhantomData,
        }
    }

    fn text(&self) -> Option<&'a str> {
        // SAFETY: a str of the admitted document, alive for 'a; its UTF-8 form exists (`plain`).
        (kind(self.object) == Kind::Str)
            .then(|| unsafe { utf8_at(self.object) })
            .flatten()
    }
}

impl<'a> Node<'a, PyJson> for PyNode<'a> {
    type Object = PyObj<'a>;
    type Array = PyArr<'a>;
    type Number = Number;

    fn as_object(&self) -> Option<PyObj<'a>> {
        (kind(self.object) == Kind::Dict).then_some(PyObj {
            object: self.object,
            document: PhantomData,
        })
    }

    fn as_array(&self) -> Option<PyArr<'a>> {
        matches!(kind(self.object), Kind::List | Kind::Tuple).then(|| PyArr::of(self.object))
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        self.text().map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<Number> {
        match kind(self.object) {
            Kind::Int => integer(self.object),
            Kind::Float => Number::from_f64(float(self.object)),
            _ => None,
        }
    }

    fn as_boolean(&self) -> Option<bool> {
        // SAFETY: CPython's singletons.
        (kind(self.object) == Kind::Bool).then(|| self.object == unsafe { ffi::Py_True() })
    }

    fn is_null(&self) -> bool {
        kind(self.object) == Kind::Null
    }

    fn json_type(&self) -> JsonType {
        match kind(self.object) {
            Kind::Null | Kind::Other => JsonType::Null,
            Kind::Bool => JsonType::Boolean,
            Kind::Int | Kind::Float => JsonType::Number,
            Kind::Str => JsonType::String,
            Kind::List | Kind::Tuple => JsonType::Array,
            Kind::Dict => JsonType::Object,
        }
    }

    fn string_length(&self) -> Option<u64> {
        // Code points, as `chars().count()` counts them: an admitted str has no lone surrogate.
        (kind(self.object) == Kind::Str)
            // SAFETY: a live str.
            .then(|| unsafe { ffi::PyUnicode_GetLength(self.object) })
            .and_then(|length| u64::try_from(length).ok())
    }

    fn equals_value(&self, expected: &Value) -> bool {
        match expected {
            Value::Null => self.is_null(),
            Value::Bool(flag) => self.as_boolean() == Some(*flag),
            Value::String(text) => self.text() == Some(text.as_str()),
            _ => cmp::equal(&self.to_value(), expected),
        }
    }

    fn to_value(&self) -> Cow<'a, Value> {
        // SAFETY: the GIL is held while nodes are read (module comment).
        let py = unsafe { Python::assume_gil_acquired() };
        // SAFETY: a live object of the admitted document.
        let object = unsafe { Bound::from_borrowed_ptr(py, self.object) };
        // An admitted document always converts.
        Cow::Owned(to_value(&object).unwrap_or(Value::Null))
    }

    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::new(self.object as usize))
    }
}

/// A dict of an admitted document.
#[derive(Clone, Copy)]
pub(crate) struct PyObj<'a> {
    object: *mut ffi::PyObject,
    document: PhantomData<&'a ()>,
}

impl<'a> Object<'a, PyJson> for PyObj<'a> {
    type Node = PyNode<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        // SAFETY: a live dict.
        usize::try_from(unsafe { ffi::PyDict_Size(self.object) }).unwrap_or(0)
    }

    fn get(&self, key: &Py<PyString>) -> Option<PyNode<'a>> {
        // SAFETY: a live dict whose keys are exact strs, so the lookup runs no Python code; the
        // borrowed result is owned by the dict.
        let item = unsafe { ffi::PyDict_GetItem(self.object, key.as_ptr()) };
        (!item.is_null()).then(|| PyNode::at(item))
    }

    fn members(&self) -> Members<'a> {
        Members {
            dict: self.object,
            position: 0,
            document: PhantomData,
        }
    }
}

pub(crate) struct Members<'a> {
    dict: *mut ffi::PyObject,
    position: ffi::Py_ssize_t,
    document: PhantomData<&'a ()>,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, PyNode<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let mut key = std::ptr::null_mut();
        let mut item = std::ptr::null_mut();
        // SAFETY: a live dict, unchanged while the document is validated; borrowed references.
        if unsafe { ffi::PyDict_Next(self.dict, &mut self.position, &mut key, &mut item) } == 0 {
            return None;
        }
        // SAFETY: an admitted key: an exact str with a UTF-8 form, alive for 'a.
        let name = unsafe { utf8_at(key) }.unwrap_or_default();
        Some((name, PyNode::at(item)))
    }
}

/// A list or tuple of an admitted document.
#[derive(Clone, Copy)]
pub(crate) struct PyArr<'a> {
    object: *mut ffi::PyObject,
    is_list: bool,
    len: usize,
    document: PhantomData<&'a ()>,
}

impl PyArr<'_> {
    fn of(object: *mut ffi::PyObject) -> Self {
        let is_list = kind(object) == Kind::List;
        // SAFETY: a live list or tuple.
        let len = unsafe {
            if is_list {
                ffi::PyList_Size(object)
            } else {
                ffi::PyTuple_Size(object)
            }
        };
        PyArr {
            object,
            is_list,
            len: usize::try_from(len).unwrap_or(0),
            document: PhantomData,
        }
    }
}

impl<'a> Array<'a, PyJson> for PyArr<'a> {
    type Node = PyNode<'a>;
    type ElementsIter = Elements<'a>;

    fn len(&self) -> usize {
        self.len
    }

    fn elements(&self) -> Elements<'a> {
        Elements {
            array: *self,
            index: 0,
        }
    }
}

pub(crate) struct Elements<'a> {
    array: PyArr<'a>,
    index: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = PyNode<'a>;

    fn next(&mut self) -> Option<PyNode<'a>> {
        if self.index >= self.array.len {
            return None;
        }
        let index = ffi::Py_ssize_t::try_from(self.index).ok()?;
        self.index += 1;
        // SAFETY: an index within the live list or tuple; a borrowed reference it owns.
        let item = unsafe {
            if self.array.is_list {
                ffi::PyList_GetItem(self.array.object, index)
            } else {
                ffi::PyTuple_GetItem(self.array.object, index)
            }
        };
        (!item.is_null()).then(|| PyNode::at(item))
    }
}
