//! pairling_fast core: strict JSON parsing, RFC 8785 digests, JSON Schema validation and the
//! document checks built on them. Every module is plain Rust (`cargo test` needs no Python); the
//! PyO3 glue below and in `pyvalue.rs` is compiled only with the `python` feature.

pub mod canonical;
pub mod car_event;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzzing;
pub mod graph;
pub mod journal;
pub mod parse;
pub mod progress;
pub mod report;
pub mod validate;
pub mod wire;

#[cfg(feature = "python")]
mod pyvalue;

/// mimalloc instead of the system allocator (the extension builds with it, pyproject.toml): a
/// journal check makes several small allocations per line on every thread, and glibc's malloc
/// spent 44 % of the CPU there and serialised the threads on its arena locks (issue #19). Only
/// Rust's allocations go through it; Python keeps its own.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "python")]
mod python {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    use pyo3::exceptions::{PyKeyboardInterrupt, PyTypeError, PyValueError};
    use pyo3::prelude::*;
    use pyo3::sync::GILOnceCell;
    use pyo3::types::{PyBytes, PyDict, PyString};

    use crate::canonical::{self, CanonicalizationError};
    use crate::graph;
    use crate::journal;
    use crate::parse::{self, JsonError};
    use crate::progress::CountingReader;
    use crate::pyvalue::{self, to_python, to_value};
    use crate::report::Finding;
    use crate::validate::{self, CompileError, CompileOptions, SchemaValidator, SchemaViolation};

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
            (error.code, error.message, error.pointer, none, none),
        )
    }

    fn json_error(py: Python<'_>, error: JsonError) -> PyErr {
        raise(
            py,
            "CanonicalizationError",
            (
                error.code,
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
            (error.code, error.message, error.schema_pointer),
        )
    }

    /// Runs `work`, turning a Rust panic into `pairling_fast.InternalError` instead of letting it
    /// cross the FFI boundary as PyO3's `PanicException` (a BaseException users cannot catch sanely).
    fn guarded<T>(
        py: Python<'_>,
        context: &str,
        work: impl FnOnce() -> PyResult<T>,
    ) -> PyResult<T> {
        match catch_unwind(AssertUnwindSafe(work)) {
            Ok(result) => result,
            Err(payload) => {
                let detail = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
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
        STOP_REQUESTED
            .get_or_try_init(py, || {
                Ok::<_, PyErr>(
                    py.import("pairling_fast._interrupt")?
                        .getattr("stop_requested")?
                        .unbind(),
                )
            })
            .and_then(|ask| ask.bind(py).call0()?.is_truthy())
            .unwrap_or(true)
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

    fn parse_text(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
        let bytes = text_bytes(data)?;
        py.allow_threads(|| parse::parse_strict(&bytes))
            .map_err(|e| json_error(py, e))
    }

    fn python_value(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
        to_value(value).map_err(|e| canonicalization_error(py, e))
    }

    #[pyfunction]
    fn parse_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        guarded(py, "parse_json", || {
            let value = parse_text(py, data)?;
            to_python(py, &value)
        })
    }

    #[pyfunction]
    fn canonicalize<'py>(
        py: Python<'py>,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        guarded(py, "canonicalize", || {
            let bytes = pyvalue::canonicalize(value).map_err(|e| canonicalization_error(py, e))?;
            Ok(PyBytes::new(py, &bytes))
        })
    }

    #[pyfunction]
    fn canonicalize_json<'py>(
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        guarded(py, "canonicalize_json", || {
            let value = parse_text(py, data)?;
            let bytes = py
                .allow_threads(|| canonical::canonicalize(&value))
                .map_err(|e| canonicalization_error(py, e))?;
            Ok(PyBytes::new(py, &bytes))
        })
    }

    #[pyfunction]
    fn digest_hex(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<String> {
        guarded(py, "digest_hex", || {
            pyvalue::digest_hex(value).map_err(|e| canonicalization_error(py, e))
        })
    }

    enum Compiled {
        Bundled(&'static SchemaValidator),
        Owned(Arc<SchemaValidator>),
    }

    impl std::ops::Deref for Compiled {
        type Target = SchemaValidator;
        fn deref(&self) -> &SchemaValidator {
            match self {
                Compiled::Bundled(validator) => validator,
                Compiled::Owned(validator) => validator,
            }
        }
    }

    /// A schema compiled once by the core; `pairling_fast.Validator` wraps it.
    #[pyclass(frozen, module = "pairling_fast._core")]
    struct CompiledSchema {
        inner: Compiled,
    }

    type RawViolation = (String, String, String, String);

    /// A finding as the tuple `pairling_fast.report.Finding.from_raw` takes:
    /// (code, severity, message, line, pointer, schema_pointer).
    type RawFinding = (
        &'static str,
        &'static str,
        String,
        Option<u64>,
        Option<String>,
        Option<String>,
    );

    fn raw_findings(findings: Vec<crate::report::Finding>) -> Vec<RawFinding> {
        findings
            .into_iter()
            .map(|f| {
                (
                    f.code,
                    f.severity.as_str(),
                    f.message,
                    f.line,
                    f.pointer,
                    f.schema_pointer,
                )
            })
            .collect()
    }

    fn raw(violations: Vec<SchemaViolation>) -> Vec<RawViolation> {
        violations
            .into_iter()
            .map(|v| (v.pointer, v.schema_pointer, v.keyword, v.message))
            .collect()
    }

    #[pymethods]
    impl CompiledSchema {
        fn is_valid(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<bool> {
            guarded(py, "is_valid", || {
                let value = python_value(py, instance)?;
                Ok(self.inner.is_valid(&value))
            })
        }

        fn errors(
            &self,
            py: Python<'_>,
            instance: &Bound<'_, PyAny>,
        ) -> PyResult<Vec<RawViolation>> {
            guarded(py, "errors", || {
                let value = python_value(py, instance)?;
                Ok(raw(py.allow_threads(|| self.inner.violations(&value))))
            })
        }

        fn errors_json(
            &self,
            py: Python<'_>,
            data: &Bound<'_, PyAny>,
        ) -> PyResult<Vec<RawViolation>> {
            guarded(py, "errors_json", || {
                let bytes = text_bytes(data)?;
                let inner = &*self.inner;
                let outcome =
                    py.allow_threads(|| parse::parse_strict(&bytes).map(|v| inner.violations(&v)));
                outcome.map(raw).map_err(|e| json_error(py, e))
            })
        }
    }

    #[pyfunction]
    #[pyo3(signature = (schema, validate_formats=None, resources=None))]
    fn compile_schema(
        py: Python<'_>,
        schema: &Bound<'_, PyAny>,
        validate_formats: Option<bool>,
        resources: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<CompiledSchema> {
        guarded(py, "compile_schema", || {
            let schema = python_value(py, schema)?;
            let mut options = CompileOptions {
                validate_formats,
                resources: Vec::new(),
            };
            if let Some(resources) = resources {
                for (uri, document) in resources.iter() {
                    options
                        .resources
                        .push((uri.extract::<String>()?, python_value(py, &document)?));
                }
            }
            let validator = py
                .allow_threads(|| SchemaValidator::compile(&schema, &options))
                .map_err(|e| compile_error(py, e))?;
            Ok(CompiledSchema {
                inner: Compiled::Owned(Arc::new(validator)),
            })
        })
    }

    #[pyfunction]
    fn bundled_schema_ids() -> Vec<&'static str> {
        validate::bundled_ids()
    }

    #[pyfunction]
    fn bundled_validator(py: Python<'_>, schema_id: &str) -> PyResult<CompiledSchema> {
        guarded(py, "bundled_validator", || {
            let validator = py.allow_threads(|| validate::bundled_validator(schema_id));
            validator
                .map(|v| CompiledSchema {
                    inner: Compiled::Bundled(v),
                })
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(schema_id.to_string()))
        })
    }

    type WireOutcome = (Vec<RawFinding>, PyObject);

    fn wire_outcome(
        py: Python<'_>,
        (findings, stats): (Vec<crate::report::Finding>, serde_json::Value),
    ) -> PyResult<WireOutcome> {
        Ok((raw_findings(findings), to_python(py, &stats)?))
    }

    /// The bundle a run chose (`None`: not chosen); an unknown version is a ValueError.
    fn chosen_bundle(
        car_version: Option<&str>,
    ) -> PyResult<Option<&'static crate::validate::WireBundle>> {
        car_version
            .map(|version| {
                validate::wire_bundle_named(version).ok_or_else(|| {
                    let known: Vec<&str> = validate::wire_bundles()
                        .iter()
                        .map(|bundle| bundle.version)
                        .collect();
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "no bundled wire schema for CAR version {version:?} (bundled: {})",
                        known.join(", ")
                    ))
                })
            })
            .transpose()
    }

    fn bundle_or_default(
        car_version: Option<&str>,
    ) -> PyResult<&'static crate::validate::WireBundle> {
        Ok(chosen_bundle(car_version)?.unwrap_or_else(validate::default_wire_bundle))
    }

    /// Every bundled wire schema, oldest first: `(car_version, file, sha256)`.
    #[pyfunction]
    fn wire_bundles() -> Vec<(&'static str, &'static str, String)> {
        validate::wire_bundles()
            .iter()
            .map(|bundle| (bundle.version, bundle.file, bundle.digest.clone()))
            .collect()
    }

    /// A Python value as JSON; `what` names the argument in the error, as the fallback does.
    fn argument_value(
        py: Python<'_>,
        what: &str,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<serde_json::Value> {
        to_value(value).map_err(|mut error| {
            error.message = format!("{what}: {}", error.message);
            canonicalization_error(py, error)
        })
    }

    #[pyfunction]
    #[pyo3(signature = (method, result, catalog=None, wire_schema_digest=None, car_version=None))]
    fn check_rpc_result(
        py: Python<'_>,
        method: &str,
        result: &Bound<'_, PyAny>,
        catalog: Option<&Bound<'_, PyAny>>,
        wire_schema_digest: Option<&str>,
        car_version: Option<&str>,
    ) -> PyResult<WireOutcome> {
        guarded(py, "check_rpc_result", || {
            let bundle = bundle_or_default(car_version)?;
            let result = argument_value(py, "result", result)?;
            let catalog = catalog
                .map(|catalog| argument_value(py, "catalog", catalog))
                .transpose()?;
            let outcome = py.allow_threads(|| {
                crate::wire::check_rpc_result(
                    bundle,
                    method,
                    &result,
                    catalog.as_ref(),
                    wire_schema_digest,
                )
            });
            wire_outcome(py, outcome)
        })
    }

    #[pyfunction]
    #[pyo3(signature = (method, params, car_version=None))]
    fn check_rpc_params(
        py: Python<'_>,
        method: &str,
        params: &Bound<'_, PyAny>,
        car_version: Option<&str>,
    ) -> PyResult<WireOutcome> {
        guarded(py, "check_rpc_params", || {
            let bundle = bundle_or_default(car_version)?;
            let params = argument_value(py, "params", params)?;
            let outcome =
                py.allow_threads(|| crate::wire::check_rpc_params(bundle, method, &params, false));
            wire_outcome(py, outcome)
        })
    }

    #[pyfunction]
    #[pyo3(signature = (path, wire_schema_digest=None, car_version=None))]
    fn check_transcript_file(
        py: Python<'_>,
        path: std::path::PathBuf,
        wire_schema_digest: Option<String>,
        car_version: Option<&str>,
    ) -> PyResult<WireOutcome> {
        // Slice by slice without the GIL, checking for Ctrl-C between slices.
        const LINES_PER_SLICE: usize = 1 << 14;
        guarded(py, "check_transcript_file", || {
            let bundle = chosen_bundle(car_version)?;
            let mut reader = crate::wire::open_transcript(&path)?;
            let mut checker = crate::wire::TranscriptChecker::new(bundle, wire_schema_digest);
            while !py.allow_threads(|| checker.feed_from(&mut reader, LINES_PER_SLICE))? {
                if stop_requested(py) {
                    return Err(PyKeyboardInterrupt::new_err("transcript check interrupted"));
                }
            }
            wire_outcome(py, checker.finish())
        })
    }

    /// A JSON-RPC transcript fed in batches of lines (from a file object or an iterable).
    #[pyclass(module = "pairling_fast._core")]
    struct TranscriptChecker {
        inner: Option<crate::wire::TranscriptChecker>,
    }

    impl TranscriptChecker {
        fn running(&mut self) -> PyResult<&mut crate::wire::TranscriptChecker> {
            self.inner.as_mut().ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err("the transcript checker is finished")
            })
        }
    }

    #[pymethods]
    impl TranscriptChecker {
        #[new]
        #[pyo3(signature = (wire_schema_digest=None, car_version=None))]
        fn new(wire_schema_digest: Option<String>, car_version: Option<&str>) -> PyResult<Self> {
            let bundle = chosen_bundle(car_version)?;
            Ok(TranscriptChecker {
                inner: Some(crate::wire::TranscriptChecker::new(
                    bundle,
                    wire_schema_digest,
                )),
            })
        }

        fn feed_lines(&mut self, py: Python<'_>, lines: Vec<Bound<'_, PyBytes>>) -> PyResult<()> {
            guarded(py, "TranscriptChecker.feed_lines", || {
                let checker = self.running()?;
                let lines: Vec<&[u8]> = lines.iter().map(|line| line.as_bytes()).collect();
                py.allow_threads(|| lines.iter().for_each(|line| checker.feed_line(line)));
                Ok(())
            })
        }

        fn finish(&mut self, py: Python<'_>) -> PyResult<WireOutcome> {
            guarded(py, "TranscriptChecker.finish", || {
                self.running()?;
                let checker = self.inner.take().expect("checked just above");
                wire_outcome(py, checker.finish())
            })
        }
    }

    #[pyfunction]
    fn check_wire_schema(py: Python<'_>, path: std::path::PathBuf) -> PyResult<WireOutcome> {
        guarded(py, "check_wire_schema", || {
            let outcome = py.allow_threads(|| crate::wire::check_wire_schema(&path))?;
            wire_outcome(py, outcome)
        })
    }

    #[pyfunction]
    fn wire_schema_digest(py: Python<'_>, path: std::path::PathBuf) -> PyResult<String> {
        guarded(py, "wire_schema_digest", || {
            Ok(py.allow_threads(|| crate::wire::wire_schema_digest(&path))?)
        })
    }

    /// A Python binary file object as a `Read`: each read briefly re-acquires the GIL. Ctrl-C
    /// inside `read` ends the input and raises `interrupted`; any other exception is kept and
    /// re-raised as it is.
    struct PyReader {
        file: Py<PyAny>,
        error: Option<PyErr>,
        interrupted: Arc<AtomicBool>,
    }

    impl std::io::Read for PyReader {
        fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
            Python::with_gil(|py| {
                let outcome = self
                    .file
                    .bind(py)
                    .call_method1("read", (buffer.len(),))
                    .and_then(|chunk| {
                        let chunk = chunk.downcast_into::<PyBytes>().map_err(|_| {
                            PyTypeError::new_err(
                                "a journal file object must be opened in binary mode",
                            )
                        })?;
                        let bytes = chunk.as_bytes();
                        let length = bytes.len().min(buffer.len());
                        buffer[..length].copy_from_slice(&bytes[..length]);
                        Ok(length)
                    });
                match outcome {
                    Err(error) if error.is_instance_of::<PyKeyboardInterrupt>(py) => {
                        self.interrupted.store(true, Ordering::SeqCst);
                        Ok(0)
                    }
                    Err(error) => {
                        let message = error.to_string();
                        self.error = Some(error);
                        Err(std::io::Error::other(message))
                    }
                    Ok(length) => Ok(length),
                }
            })
        }
    }

    fn journal_options(
        chain: &str,
        lifecycle: bool,
        max_findings: Option<usize>,
        profile: &str,
        max_line_length: usize,
    ) -> PyResult<journal::Options> {
        Ok(journal::Options {
            chain: journal::ChainMode::parse(chain).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "chain must be one of auto, require, off, not {chain:?}"
                ))
            })?,
            lifecycle,
            max_findings,
            profile: journal::Profile::parse(profile).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "profile must be one of strict, car-compatible, not {profile:?}"
                ))
            })?,
            max_line_length,
        })
    }

    #[pyfunction]
    #[pyo3(
        signature = (source, chain="auto", lifecycle=true, max_findings=Some(1000), profile="strict", max_line_length=journal::DEFAULT_MAX_LINE_LENGTH, progress=None),
        text_signature = "(source, chain='auto', lifecycle=True, max_findings=1000, profile='strict', max_line_length=67108864, progress=None)"
    )]
    #[allow(clippy::too_many_arguments)] // the Python signature: keyword arguments with defaults
    fn check_journal(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        chain: &str,
        lifecycle: bool,
        max_findings: Option<usize>,
        profile: &str,
        max_line_length: usize,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(Vec<RawFinding>, PyObject)> {
        guarded(py, "check_journal", || {
            let options =
                journal_options(chain, lifecycle, max_findings, profile, max_line_length)?;
            // Ctrl-C is noticed between batches (or inside a Python `read`); the KeyboardInterrupt
            // is consumed and the partial report is marked `interrupted` (the facade raises
            // JournalInterrupted with it). The batch being read when it came is not checked.
            // `progress(bytes_read)` is called at the same points, from the bytes counted at the
            // reader; an exception it raises stops the check and is re-raised.
            let flag = Arc::new(AtomicBool::new(false));
            let stop_flag = Arc::clone(&flag);
            let bytes_read = Arc::new(AtomicU64::new(0));
            let mut progress_error: Option<PyErr> = None;
            let mut between_batches = |bytes: &AtomicU64| {
                stop_flag.load(Ordering::SeqCst)
                    || Python::with_gil(|py| {
                        if let Some(callback) = &progress {
                            if let Err(error) = callback.call1(py, (bytes.load(Ordering::Relaxed),))
                            {
                                progress_error = Some(error);
                                return true;
                            }
                        }
                        stop_requested(py)
                    })
            };
            let report = if let Ok(path) = source.downcast::<PyString>() {
                let path = path.to_cow()?.into_owned();
                py.allow_threads(|| {
                    let file = CountingReader::new(std::fs::File::open(&path)?);
                    let counter = file.counter();
                    let reader = std::io::BufReader::with_capacity(1 << 20, file);
                    let report =
                        journal::check_journal(reader, &options, || between_batches(&counter));
                    bytes_read.store(counter.load(Ordering::Relaxed), Ordering::Relaxed);
                    report
                })?
            } else {
                let mut reader = PyReader {
                    file: source.clone().unbind(),
                    error: None,
                    interrupted: flag,
                };
                let outcome = py.allow_threads(|| {
                    let counted = CountingReader::new(&mut reader);
                    let counter = counted.counter();
                    let buffered = std::io::BufReader::with_capacity(1 << 20, counted);
                    let outcome =
                        journal::check_journal(buffered, &options, || between_batches(&counter));
                    bytes_read.store(counter.load(Ordering::Relaxed), Ordering::Relaxed);
                    outcome
                });
                match (outcome, reader.error.take()) {
                    (Ok(report), _) => report,
                    (Err(_), Some(error)) => return Err(error),
                    (Err(error), None) => return Err(error.into()),
                }
            };
            if let Some(error) = progress_error {
                return Err(error);
            }
            if let Some(callback) = &progress {
                callback.call1(py, (bytes_read.load(Ordering::Relaxed),))?;
            }
            Ok((raw_findings(report.findings), to_python(py, &report.stats)?))
        })
    }

    /// The per-line stage over the lines beginning in bytes `[start, end)` of the journal at
    /// `path`, encoded for `JournalChecker.feed` (docs/cluster.md).
    #[pyfunction]
    #[pyo3(
        signature = (path, start, end, chain="auto", profile="strict", max_line_length=journal::DEFAULT_MAX_LINE_LENGTH),
        text_signature = "(path, start, end, chain='auto', profile='strict', max_line_length=67108864)"
    )]
    fn check_journal_chunk<'py>(
        py: Python<'py>,
        path: &str,
        start: u64,
        end: u64,
        chain: &str,
        profile: &str,
        max_line_length: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        guarded(py, "check_journal_chunk", || {
            let options = journal_options(chain, false, None, profile, max_line_length)?;
            let encoded = py.allow_threads(|| {
                let file = std::fs::File::open(path)?;
                journal::chunks::check_chunk(file, start..end, &options)
            })?;
            Ok(PyBytes::new(py, &encoded))
        })
    }

    /// The ordered stage of `check_journal` fed chunk by chunk, in file order.
    #[pyclass(module = "pairling_fast._core")]
    struct JournalChecker {
        inner: Option<journal::chunks::ChunkedChecker>,
    }

    impl JournalChecker {
        fn checker(&mut self) -> PyResult<&mut journal::chunks::ChunkedChecker> {
            self.inner
                .as_mut()
                .ok_or_else(|| PyValueError::new_err("this JournalChecker has finished"))
        }
    }

    #[pymethods]
    impl JournalChecker {
        #[new]
        #[pyo3(
            signature = (chain="auto", lifecycle=true, max_findings=Some(1000), profile="strict", max_line_length=journal::DEFAULT_MAX_LINE_LENGTH),
            text_signature = "(chain='auto', lifecycle=True, max_findings=1000, profile='strict', max_line_length=67108864)"
        )]
        fn new(
            chain: &str,
            lifecycle: bool,
            max_findings: Option<usize>,
            profile: &str,
            max_line_length: usize,
        ) -> PyResult<Self> {
            let options =
                journal_options(chain, lifecycle, max_findings, profile, max_line_length)?;
            Ok(JournalChecker {
                inner: Some(journal::chunks::ChunkedChecker::new(&options)),
            })
        }

        fn feed(&mut self, py: Python<'_>, chunk: &[u8]) -> PyResult<()> {
            guarded(py, "JournalChecker.feed", || {
                let checker = self.checker()?;
                py.allow_threads(|| checker.feed(chunk))
                    .map_err(|error| PyValueError::new_err(error.to_string()))
            })
        }

        #[pyo3(signature = (interrupted=false))]
        fn finish(
            &mut self,
            py: Python<'_>,
            interrupted: bool,
        ) -> PyResult<(Vec<RawFinding>, PyObject)> {
            guarded(py, "JournalChecker.finish", || {
                self.checker()?;
                let checker = self.inner.take().expect("checked above");
                let report = py.allow_threads(|| checker.finish(interrupted));
                Ok((raw_findings(report.findings), to_python(py, &report.stats)?))
            })
        }
    }

    type RawMapCheck = (Vec<RawFinding>, PyObject);

    fn raw_map_check(py: Python<'_>, check: graph::MapCheck) -> PyResult<RawMapCheck> {
        let stats = to_python(py, &check.stats.to_value())?;
        Ok((raw_findings(check.findings), stats))
    }

    /// Pairling's reviewed operation manifest, when one is given (a value outside the JSON model
    /// raises, like any other argument).
    fn manifest_value(
        py: Python<'_>,
        manifest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<serde_json::Value>> {
        manifest.map(|value| python_value(py, value)).transpose()
    }

    /// A parsed map; a Python value outside the JSON model is the one finding, not an exception.
    #[pyfunction]
    #[pyo3(signature = (document, manifest=None))]
    fn check_map(
        py: Python<'_>,
        document: &Bound<'_, PyAny>,
        manifest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RawMapCheck> {
        guarded(py, "check_map", || {
            let manifest = manifest_value(py, manifest)?;
            let check = match to_value(document) {
                Ok(value) => py.allow_threads(|| graph::check_map(&value, manifest.as_ref())),
                Err(error) => graph::MapCheck::unreadable(Finding::from(error)),
            };
            raw_map_check(py, check)
        })
    }

    #[pyfunction]
    fn journal_event_kinds() -> Vec<String> {
        journal::event_kinds()
    }

    /// CAR's chain digest of one journal line (`car_event::line_digest`); `ValueError` with CAR's
    /// reason when CAR cannot compute it.
    #[pyfunction]
    fn journal_chain_digest(py: Python<'_>, line: &[u8]) -> PyResult<String> {
        py.allow_threads(|| crate::car_event::line_digest(line))
            .map_err(PyValueError::new_err)
    }

    #[pyfunction]
    #[pyo3(signature = (data, manifest=None))]
    fn check_map_json(
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        manifest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RawMapCheck> {
        guarded(py, "check_map_json", || {
            let manifest = manifest_value(py, manifest)?;
            let bytes = text_bytes(data)?.into_owned();
            let check = interruptible(py, bytes.len(), move || {
                graph::check_map_json(&bytes, manifest.as_ref())
            })?;
            raw_map_check(py, check)
        })
    }

    #[pyfunction]
    fn seal_map(py: Python<'_>, document: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        guarded(py, "seal_map", || {
            let mut value = python_value(py, document)?;
            py.allow_threads(|| graph::seal_map(&mut value))
                .map_err(|e| canonicalization_error(py, e))?;
            to_python(py, &value)
        })
    }

    /// Parse once, seal, convert once: a map given as text never crosses into Python unsealed.
    #[pyfunction]
    fn seal_map_json(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        guarded(py, "seal_map_json", || {
            let mut value = parse_text(py, data)?;
            py.allow_threads(|| graph::seal_map(&mut value))
                .map_err(|e| canonicalization_error(py, e))?;
            to_python(py, &value)
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
        info.set_item("parallelism", rayon::current_num_threads())?;
        Ok(info)
    }

    #[pymodule]
    fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_function(wrap_pyfunction!(parse_json, m)?)?;
        m.add_function(wrap_pyfunction!(canonicalize, m)?)?;
        m.add_function(wrap_pyfunction!(canonicalize_json, m)?)?;
        m.add_function(wrap_pyfunction!(digest_hex, m)?)?;
        m.add_function(wrap_pyfunction!(compile_schema, m)?)?;
        m.add_function(wrap_pyfunction!(bundled_schema_ids, m)?)?;
        m.add_function(wrap_pyfunction!(bundled_validator, m)?)?;
        m.add_function(wrap_pyfunction!(build_info, m)?)?;
        m.add_function(wrap_pyfunction!(check_journal, m)?)?;
        m.add_function(wrap_pyfunction!(journal_event_kinds, m)?)?;
        m.add_function(wrap_pyfunction!(journal_chain_digest, m)?)?;
        m.add_function(wrap_pyfunction!(check_journal_chunk, m)?)?;
        m.add_class::<JournalChecker>()?;
        m.add_function(wrap_pyfunction!(check_rpc_result, m)?)?;
        m.add_function(wrap_pyfunction!(check_transcript_file, m)?)?;
        m.add_function(wrap_pyfunction!(check_wire_schema, m)?)?;
        m.add_function(wrap_pyfunction!(check_rpc_params, m)?)?;
        m.add_function(wrap_pyfunction!(wire_bundles, m)?)?;
        m.add_function(wrap_pyfunction!(wire_schema_digest, m)?)?;
        m.add_class::<TranscriptChecker>()?;
        m.add_function(wrap_pyfunction!(check_map, m)?)?;
        m.add_function(wrap_pyfunction!(check_map_json, m)?)?;
        m.add_function(wrap_pyfunction!(seal_map, m)?)?;
        m.add_function(wrap_pyfunction!(seal_map_json, m)?)?;
        m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
        m.add_class::<CompiledSchema>()?;
        Ok(())
    }
}
