//! Python objects ⇄ `serde_json::Value`, enforcing the JSON value model of
//! `docs/architecture.md` with the same codes and pointers as `_fallback/parse.py::check_value`.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::canonical::CanonicalizationError;
use crate::parse::{escape_pointer_token, LONE_SURROGATE, MAX_DEPTH, NOT_FINITE, TOO_DEEP};

/// A conversion failure; the pointer is collected in reverse while the error unwinds, so the
/// success path never builds one.
struct Unconvertible {
    code: &'static str,
    message: String,
    reversed_tokens: Vec<String>,
    /// Too-deep values are reported at the root (pointer ""), as the parser does.
    at_root: bool,
}

impl Unconvertible {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
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
    string
        .to_cow()
        .map(|text| text.into_owned())
        .map_err(|_| Unconvertible::new("PF004", LONE_SURROGATE))
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
            "PF005",
            "integer outside the 64-bit range",
        ));
    }
    if let Ok(float) = object.downcast::<PyFloat>() {
        return Number::from_f64(float.value())
            .map(Value::Number)
            .ok_or_else(|| Unconvertible::new("PF006", NOT_FINITE));
    }
    if let Ok(string) = object.downcast::<PyString>() {
        return text_of(string).map(Value::String);
    }
    let nested = depth + 1;
    if let Ok(dict) = object.downcast::<PyDict>() {
        check_depth(nested)?;
        let mut members = Map::with_capacity(dict.len());
        for (key, item) in dict.iter() {
            let Ok(key) = key.downcast::<PyString>() else {
                return Err(Unconvertible::new(
                    "PF007",
                    format!(
                        "object key {} is not a string",
                        key.repr().map(|r| r.to_string()).unwrap_or_default()
                    ),
                ));
            };
            let name = text_of(key).map_err(|e| e.inside(key_token(key)))?;
            let value = convert(&item, nested).map_err(|e| e.inside(name.clone()))?;
            members.insert(name, value);
        }
        return Ok(Value::Object(members));
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
        "PF009",
        format!("a {type_name} is not a JSON value"),
    ))
}

fn check_depth(depth: usize) -> Result<(), Unconvertible> {
    if depth > MAX_DEPTH {
        return Err(Unconvertible {
            at_root: true,
            ..Unconvertible::new("PF008", TOO_DEEP)
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
