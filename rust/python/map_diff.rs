//! Capability-map diff: each map parsed once, checked, and the two trees diffed in the core
//! (`graph::diff`), the changes located by line in the texts; only the changes cross into Python.

use super::*;
use crate::graph::diff::{Change, DifferingBinding, MapDiff};
use crate::locate::pointer_lines;

/// One map as given: JSON text, or a Python value converted (or the reason it could not be).
enum Side {
    Text(PyBackedBytes),
    Value(Result<serde_json::Value, CanonicalizationError>),
}

impl Side {
    fn of(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        if data.is_instance_of::<PyBytes>() || data.is_instance_of::<pyo3::types::PyByteArray>() {
            return Ok(Side::Text(shared_text(data)?));
        }
        Ok(Side::Value(to_value(data)))
    }

    fn len(&self) -> usize {
        match self {
            Side::Text(bytes) => bytes.len(),
            Side::Value(_) => 0,
        }
    }

    fn text(&self) -> Option<&[u8]> {
        match self {
            Side::Text(bytes) => Some(bytes),
            Side::Value(_) => None,
        }
    }

    /// Its check, and its tree when it has one (a converted value is moved out, not copied).
    fn checked(
        &mut self,
        manifest: Option<&serde_json::Value>,
    ) -> (graph::MapCheck, Option<serde_json::Value>) {
        let parsed = match self {
            Side::Text(bytes) => parse::parse_strict(bytes).map_err(Finding::from),
            Side::Value(value) => {
                std::mem::replace(value, Ok(serde_json::Value::Null)).map_err(Finding::from)
            }
        };
        match parsed {
            Ok(document) => (graph::check_map(&document, manifest), Some(document)),
            Err(finding) => (graph::MapCheck::unreadable(finding), None),
        }
    }
}

/// The lines of `pointers` in `text` (none without a text).
fn lines_of<'p>(
    text: Option<&[u8]>,
    pointers: impl Iterator<Item = &'p str>,
) -> std::collections::HashMap<String, u64> {
    text.map(|text| pointer_lines(text, pointers))
        .unwrap_or_default()
}

struct Compared {
    checks: [graph::MapCheck; 2],
    diff: Option<MapDiff>,
    lines: [std::collections::HashMap<String, u64>; 2],
}

fn compare(mut sides: [Side; 2], manifest: Option<&serde_json::Value>) -> Compared {
    let [old_side, new_side] = &mut sides;
    let ((old_check, old), (new_check, new)) =
        rayon::join(|| old_side.checked(manifest), || new_side.checked(manifest));
    let diff = match (&old, &new) {
        (Some(old), Some(new)) => graph::diff::diff_maps(old, new),
        _ => None,
    };
    let changes = diff.as_ref().map_or(&[][..], |d| &d.changes[..]);
    let lines = rayon::join(
        || {
            lines_of(
                sides[0].text(),
                changes.iter().filter_map(|c| c.old_pointer.as_deref()),
            )
        },
        || {
            lines_of(
                sides[1].text(),
                changes.iter().filter_map(|c| c.new_pointer.as_deref()),
            )
        },
    );
    // The trees are dropped on the pool: freeing two large maps is work the caller need not wait for.
    rayon::spawn(move || drop((old, new)));
    Compared {
        checks: [old_check, new_check],
        diff,
        lines: [lines.0, lines.1],
    }
}

/// A value on one side: `[value]`, or `[]` when absent there.
fn present(py: Python<'_>, value: Option<&serde_json::Value>) -> PyResult<PyObject> {
    let items = value.map(|v| to_python(py, v)).transpose()?;
    Ok(PyList::new(py, items)?.into_any().unbind())
}

type RawChange = (
    &'static str,
    String,
    &'static str,
    String,
    Option<String>,
    Option<String>,
    PyObject,
    PyObject,
    Option<u64>,
    Option<u64>,
);
type RawBinding = (String, usize, usize, PyObject, PyObject);
type RawMapDiff = (
    RawMapCheck,
    RawMapCheck,
    Option<(Vec<RawChange>, Vec<RawBinding>)>,
);

fn raw_change(
    py: Python<'_>,
    change: Change,
    lines: &[std::collections::HashMap<String, u64>; 2],
) -> PyResult<RawChange> {
    let line = |side: usize, pointer: &Option<String>| {
        pointer.as_ref().and_then(|p| lines[side].get(p).copied())
    };
    let (old_line, new_line) = (line(0, &change.old_pointer), line(1, &change.new_pointer));
    Ok((
        change.collection,
        change.id,
        change.action.as_str(),
        change.member,
        change.old_pointer,
        change.new_pointer,
        present(py, change.old.as_ref())?,
        present(py, change.new.as_ref())?,
        old_line,
        new_line,
    ))
}

fn raw_binding(py: Python<'_>, binding: DifferingBinding) -> PyResult<RawBinding> {
    Ok((
        binding.key,
        binding.old_index,
        binding.new_index,
        present(py, binding.old_digest.as_ref())?,
        present(py, binding.new_digest.as_ref())?,
    ))
}

/// Both maps checked (as `check_map` / `check_map_json` check them) and, when both are JSON
/// objects, diffed: the changes in the order found, each with its lines in OLD and NEW where the
/// side was text, and the bindings that differ with their digests.
#[pyfunction]
#[pyo3(signature = (old, new, manifest=None))]
pub(super) fn diff_maps(
    py: Python<'_>,
    old: &Bound<'_, PyAny>,
    new: &Bound<'_, PyAny>,
    manifest: Option<&Bound<'_, PyAny>>,
) -> PyResult<RawMapDiff> {
    guarded(py, "diff_maps", || {
        let manifest = manifest_value(py, manifest)?;
        let sides = [Side::of(old)?, Side::of(new)?];
        let size = sides[0].len() + sides[1].len();
        let compared = interruptible(py, size, move || compare(sides, manifest.as_ref()))?;
        let Compared {
            checks: [old_check, new_check],
            diff,
            lines,
        } = compared;
        let diff = diff
            .map(|diff| -> PyResult<_> {
                let changes = diff
                    .changes
                    .into_iter()
                    .map(|change| raw_change(py, change, &lines))
                    .collect::<PyResult<Vec<_>>>()?;
                let bindings = diff
                    .bindings
                    .into_iter()
                    .map(|binding| raw_binding(py, binding))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok((changes, bindings))
            })
            .transpose()?;
        Ok((
            raw_map_check(py, old_check)?,
            raw_map_check(py, new_check)?,
            diff,
        ))
    })
}

/// `SET_ARRAYS` of `graph::diff` as (collection, member, shape), for the test that holds the
/// Python table equal to it.
#[pyfunction]
pub(super) fn map_diff_set_arrays() -> Vec<(&'static str, &'static str, &'static str)> {
    crate::graph::diff::SET_ARRAYS
        .iter()
        .map(|(collection, member, shape)| {
            let shape = match shape {
                crate::graph::diff::SetShape::Set => "set",
                crate::graph::diff::SetShape::Kind => "kind",
            };
            (*collection, *member, shape)
        })
        .collect()
}
