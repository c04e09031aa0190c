//! The PyO3 glue, compiled only with the `python` feature: converting arguments and results,
//! raising `pairling_fast.errors` exceptions, releasing the GIL for long work (and noticing
//! Ctrl-C while it runs), catching panics at the boundary, and the `_core` module's table. The
//! checks themselves are the plain Rust modules `lib.rs` lists; `pyvalue.rs` converts Python
//! objects to and from the JSON value model.

mod batches;
mod findings;
mod journal_checks;
mod journal_stream;
mod json_values;
mod map_checks;
mod map_diff;
mod prefix_hash;
mod pynode;
mod pyvalue;
mod schemas;
mod wire_checks;

// One set of imports for the glue: each per-concern file takes them, and the helpers below
// (errors, `guarded`, `interruptible`, argument conversion), through `use super::*`; the module
// table at the end takes the functions and classes back the same way.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::canonical::{self, CanonicalizationError};
use crate::graph;
use crate::journal;
use crate::parse::{self, JsonError};
use crate::progress::CountingReader;
use crate::report::Finding;
use crate::validate::{self, CompileError, CompileOptions, SchemaValidator, SchemaViolation};
use pyvalue::{to_python, to_value};

use findings::{raw_findings, RawFinding};
use journal_checks::*;
use journal_stream::*;
use json_values::*;
use map_checks::*;
use map_diff::*;
use schemas::*;
use wire_checks::*;

static ERRORS_MODULE: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

/// The Python exception classes live in `pairling_fast.errors`, shared with the fallback.
fn error_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let module = ERRORS_MODULE.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("pairling_fast.errors")?.unbind())
    })?;
    module.bind(py).getattr(name)
}

fn raise<'py>(py: Python<'py>, class: &str, args: impl pyo3::call::PyCallArgs<'py>) -> PyErr {
    match error_class(py, class).and_then(|cls| cls.call1(args)) {
        Ok(instance) => PyErr::from_value(instance),
        Err(error) => error,
    }
}

fn canonicalization_error(py: Python<'_>, error: CanonicalizationError) -> PyErr {
    let none: Option<usize> = None;
    raise(
        py,
        "CanonicalizationError",
        (error.code.id, error.message, error.pointer, none, none),
    )
}

fn json_error(py: Python<'_>, error: JsonError) -> PyErr {
    raise(
        py,
        "CanonicalizationError",
        (
            error.code.id,
            error.message,
            error.pointer,
            error.line,
            error.column,
        ),
    )
}

fn compile_error(py: Python<'_>, error: CompileError) -> PyErr {
    raise(
        py,
        "SchemaCompileError",
        (error.code.id, error.message, error.schema_pointer),
    )
}

/// Runs `work`, turning a Rust panic into `pairling_fast.InternalError` instead of letting it
/// cross the FFI boundary as PyO3's `PanicException` (a BaseException users cannot catch sanely).
fn guarded<T>(py: Python<'_>, context: &str, work: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(raise(
                py,
                "InternalError",
                (format!("{context}: {detail}"),),
            ))
        }
    }
}

static STOP_REQUESTED: GILOnceCell<Py<PyAny>> = GILOnceCell::new();

/// Whether long work must stop: Ctrl-C (seen only on the main thread), or the run this thread
/// works for was interrupted (`pairling_fast._interrupt`: Python delivers signals to the main
/// thread only, so `check_paths`'s workers learn of Ctrl-C there). An exception raised on this
/// thread while asking (the KeyboardInterrupt `_interrupt.stop` sends) also means stop. Called
/// between batches by the loops that release the GIL (STYLE.md item 5).
fn stop_requested(py: Python<'_>) -> bool {
    if py.check_signals().is_err() {
        return true;
    }
    imported(
        py,
        &STOP_REQUESTED,
        "pairling_fast._interrupt",
        "stop_requested",
    )
    .and_then(|ask| ask.call0()?.is_truthy())
    .unwrap_or(true)
}

/// `module.name`, imported once into `cell`.
fn imported<'py>(
    py: Python<'py>,
    cell: &'static GILOnceCell<Py<PyAny>>,
    module: &str,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    cell.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import(module)?.getattr(name)?.unbind())
    })
    .map(|attribute| attribute.bind(py).clone())
}

/// From this input size on, `interruptible` works on a helper thread (below it, a thread's
/// start costs more than the wait it would let Ctrl-C cut short).
const INTERRUPTIBLE_BYTES: usize = 1 << 20;
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Runs `work` without the GIL. For an input of `size` bytes or more it runs on a helper
/// thread while this one asks `stop_requested` every 50 ms, so Ctrl-C ends the wait at once
/// with `KeyboardInterrupt`: the helper holds no Python object and is left to finish on its
/// own, its result dropped. A panic in it is resumed here, inside `guarded`.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    size: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    use std::sync::mpsc::{channel, RecvTimeoutError};
    if size < INTERRUPTIBLE_BYTES {
        return Ok(py.allow_threads(work));
    }
    let (sender, mut receiver) = channel();
    std::thread::Builder::new()
        .name("pairling-fast-work".into())
        .spawn(move || {
            // The receiver is gone after an interrupt: nobody wants the result then.
            let _ = sender.send(catch_unwind(AssertUnwindSafe(work)));
        })
        .map_err(|error| PyValueError::new_err(format!("cannot start a thread: {error}")))?;
    loop {
        let (returned, outcome) = py.allow_threads(move || {
            let outcome = receiver.recv_timeout(STOP_POLL);
            (receiver, outcome)
        });
        receiver = returned;
        match outcome {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(payload)) => std::panic::resume_unwind(payload),
            Err(RecvTimeoutError::Timeout) if stop_requested(py) => {
                return Err(PyKeyboardInterrupt::new_err("interrupted"))
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(raise(py, "InternalError", ("the worker thread vanished",)))
            }
        }
    }
}

/// JSON text from Python: `bytes` are taken as they are, `str` as its UTF-8 encoding.
fn text_bytes<'a>(data: &'a Bound<'_, PyAny>) -> PyResult<std::borrow::Cow<'a, [u8]>> {
    if let Ok(bytes) = data.downcast::<PyBytes>() {
        return Ok(std::borrow::Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(text) = data.downcast::<PyString>() {
        if let Ok(utf8) = text.to_cow() {
            return Ok(std::borrow::Cow::Owned(utf8.into_owned().into_bytes()));
        }
        // Lone surrogates: encode them as-is so the parser reports the bytes as not UTF-8
        // (PF003), exactly as the fallback does with `str.encode("utf-8", "surrogatepass")`.
        let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
        return Ok(std::borrow::Cow::Owned(
            encoded.downcast::<PyBytes>()?.as_bytes().to_vec(),
        ));
    }
    Err(PyTypeError::new_err(format!(
        "expected JSON text as bytes or str, got {}",
        data.get_type().name()?
    )))
}

/// JSON text from Python for work on another thread: a `bytes` object is held, not copied (it
/// is immutable, so the worker may read it without the GIL); `str` is encoded as `text_bytes`
/// encodes it. A large map used to be copied here, one more time its size in memory.
fn shared_text(data: &Bound<'_, PyAny>) -> PyResult<PyBackedBytes> {
    if let Ok(bytes) = data.downcast::<PyBytes>() {
        return Ok(PyBackedBytes::from(bytes.clone()));
    }
    Ok(PyBackedBytes::from(PyBytes::new(
        data.py(),
        &text_bytes(data)?,
    )))
}

fn parse_text(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    let bytes = text_bytes(data)?;
    py.allow_threads(|| parse::parse_strict(&bytes))
        .map_err(|e| json_error(py, e))
}

fn python_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    to_value(value).map_err(|e| canonicalization_error(py, e))
}

/// The checker a `JournalStream` or `JournalChecker` holds until `finish` takes it;
/// `ValueError(closed)` once it has.
fn open_checker<'a, T>(inner: &'a mut Option<T>, closed: &str) -> PyResult<&'a mut T> {
    inner
        .as_mut()
        .ok_or_else(|| PyValueError::new_err(closed.to_string()))
}

/// `finish` of a `JournalStream` or `JournalChecker`: takes the checker out of `inner` (so
/// the object is closed whatever happens next) and returns its report's findings and stats.
fn finish_checker<T: Send>(
    py: Python<'_>,
    context: &str,
    inner: &mut Option<T>,
    closed: &str,
    finish: impl FnOnce(T) -> journal::JournalReport + Send,
) -> PyResult<(Vec<RawFinding>, PyObject)> {
    guarded(py, context, || {
        open_checker(inner, closed)?;
        let checker = inner.take().expect("checked above");
        let report = py.allow_threads(|| finish(checker));
        Ok((raw_findings(report.findings), to_python(py, &report.stats)?))
    })
}

/// Panics inside `guarded`, so a test can prove a panic reaches Python as `InternalError`.
/// Compiled into every build on purpose: the guarantee is checked on the shipped artifact.
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    guarded(py, "_panic_for_tests", || {
        panic!("deliberate panic to test the FFI boundary")
    })
}

/// A data table of the package (`codes.toml`, `journal_defaults.toml`, `car_payloads.toml`) as
/// build.rs parsed it, in JSON; `None` for a name the core does not carry. The Rust constants
/// come from the same parse, so Python and the core cannot read different tables.
#[pyfunction]
fn table_json(name: &str) -> Option<&'static str> {
    Some(match name {
        "codes.toml" => include_str!(concat!(env!("OUT_DIR"), "/codes.toml.json")),
        "journal_defaults.toml" => {
            include_str!(concat!(env!("OUT_DIR"), "/journal_defaults.toml.json"))
        }
        "car_payloads.toml" => include_str!(concat!(env!("OUT_DIR"), "/car_payloads.toml.json")),
        _ => return None,
    })
}

#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let info = PyDict::new(py);
    info.set_item("crate_version", env!("CARGO_PKG_VERSION"))?;
    let dependencies = PyDict::new(py);
    for pair in env!("PAIRLING_FAST_DEPENDENCIES")
        .split(',')
        .filter(|p| !p.is_empty())
    {
        if let Some((name, version)) = pair.split_once('=') {
            dependencies.set_item(name, version)?;
        }
    }
    info.set_item("dependencies", dependencies)?;
    info.set_item("debug", cfg!(debug_assertions))?;
    info.set_item(
        "profile_guided",
        env!("PAIRLING_FAST_PROFILE_GUIDED") == "true",
    )?;
    info.set_item("parallelism", rayon::current_num_threads())?;
    Ok(info)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    pyvalue::probe_str_layout(m.py());
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(parse_json, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalize_json, m)?)?;
    m.add_function(wrap_pyfunction!(digest_hex, m)?)?;
    m.add_function(wrap_pyfunction!(digest_hex_many, m)?)?;
    m.add_function(wrap_pyfunction!(indent_json, m)?)?;
    m.add_function(wrap_pyfunction!(compile_schema, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_schema_ids, m)?)?;
    m.add_function(wrap_pyfunction!(bundled_validator, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(table_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_journal, m)?)?;
    m.add_function(wrap_pyfunction!(check_journal_resumable, m)?)?;
    m.add_function(wrap_pyfunction!(journal_event_kinds, m)?)?;
    m.add_function(wrap_pyfunction!(journal_chain_digest, m)?)?;
    m.add_function(wrap_pyfunction!(check_journal_chunk, m)?)?;
    m.add_class::<RawFinding>()?;
    m.add_class::<JournalChecker>()?;
    m.add_class::<JournalStream>()?;
    m.add_function(wrap_pyfunction!(check_rpc_result, m)?)?;
    m.add_function(wrap_pyfunction!(check_transcript_file, m)?)?;
    m.add_function(wrap_pyfunction!(check_wire_schema, m)?)?;
    m.add_function(wrap_pyfunction!(check_rpc_params, m)?)?;
    m.add_function(wrap_pyfunction!(wire_bundles, m)?)?;
    m.add_function(wrap_pyfunction!(wire_schema_digest, m)?)?;
    m.add_class::<TranscriptChecker>()?;
    m.add_function(wrap_pyfunction!(check_map, m)?)?;
    m.add_function(wrap_pyfunction!(check_map_json, m)?)?;
    m.add_function(wrap_pyfunction!(diff_maps, m)?)?;
    m.add_function(wrap_pyfunction!(map_diff_set_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(seal_map, m)?)?;
    m.add_function(wrap_pyfunction!(seal_map_json, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_class::<CompiledSchema>()?;
    m.add_class::<prefix_hash::Blake3>()?;
    Ok(())
}
