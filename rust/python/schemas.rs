//! JSON Schema: compiled schemas (`CompiledSchema`, wrapped by `pairling_fast.Validator`) and the bundled ones.

use super::*;
use crate::tape::{Tape, TapeJson};
use pynode::{PyJson, PyNode};
use serde_json::Value;
use std::sync::OnceLock;

pub(super) enum Compiled {
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
pub(super) struct CompiledSchema {
    inner: Compiled,
    /// The schema and options `inner` was compiled from, to compile it again for Python objects.
    source: (Value, CompileOptions),
    /// The same schema for Python objects validated in place (`pynode.rs`), compiled on first use.
    in_place: OnceLock<Option<SchemaValidator<PyJson>>>,
    /// The same schema for JSON text validated on its tape (`crate::tape`), compiled on first use.
    on_tape: OnceLock<Option<SchemaValidator<TapeJson>>>,
}

impl CompiledSchema {
    fn new(inner: Compiled, schema: Value, options: CompileOptions) -> Self {
        CompiledSchema {
            inner,
            source: (schema, options),
            in_place: OnceLock::new(),
            on_tape: OnceLock::new(),
        }
    }

    fn accepts_one(&self, instance: &Bound<'_, PyAny>) -> bool {
        if let Some(validator) = self.in_place(instance) {
            return validator.is_valid(PyNode::root(instance));
        }
        to_value(instance).is_ok_and(|value| self.inner.is_valid(&value))
    }

    fn violations_of(
        &self,
        instance: &Bound<'_, PyAny>,
    ) -> Result<Vec<SchemaViolation>, CanonicalizationError> {
        if let Some(validator) = self.in_place(instance) {
            return Ok(validator.violations(PyNode::root(instance)));
        }
        to_value(instance).map(|value| self.inner.violations(&value))
    }

    /// Whether validating calls back into Python (the caller's `formats`): such a validator
    /// validates a batch on this thread, holding the GIL, instead of on the pool without it,
    /// where each call would wait for the GIL the reading thread holds.
    fn calls_python(&self) -> bool {
        !self.source.1.formats.0.is_empty()
    }

    /// The validator for `instance` read in place, when the JSON value model admits it as plain
    /// built-in types (`pynode::plain`); otherwise the caller converts it the exact way.
    fn in_place(&self, instance: &Bound<'_, PyAny>) -> Option<&SchemaValidator<PyJson>> {
        if !pynode::plain(instance) {
            return None;
        }
        self.for_representation(&self.in_place)
    }

    /// The schema compiled for the representation `F` once, kept in `slot`.
    fn for_representation<'s, F: jsonschema::json::Json>(
        &self,
        slot: &'s OnceLock<Option<SchemaValidator<F>>>,
    ) -> Option<&'s SchemaValidator<F>> {
        slot.get_or_init(|| {
            let (schema, options) = &self.source;
            SchemaValidator::compile_for(schema, options).ok()
        })
        .as_ref()
    }
}

/// (pointer, schema_pointer, keyword, message, best_match), the last (pointer, schema_pointer,
/// message) or `None` (`pairling_fast._backend.RawViolation`).
pub(super) type RawViolation = (
    String,
    String,
    String,
    String,
    Option<(String, String, String)>,
);

/// A document's outcome as `pairling_fast.validator` takes it (`_outcome_findings`): its
/// violations as raw tuples, or the exception its value or text raised.
fn outcome_object(
    py: Python<'_>,
    outcome: Result<Vec<SchemaViolation>, PyErr>,
) -> PyResult<PyObject> {
    Ok(match outcome {
        Ok(violations) => raw(violations).into_pyobject(py)?.into_any().unbind(),
        Err(error) => error.into_value(py).into_any(),
    })
}

pub(super) fn raw(violations: Vec<SchemaViolation>) -> Vec<RawViolation> {
    violations
        .into_iter()
        .map(|v| {
            let best_match = v
                .best_match
                .map(|best| (best.pointer, best.schema_pointer, best.message));
            (
                v.pointer,
                v.schema_pointer,
                v.keyword,
                v.message,
                best_match,
            )
        })
        .collect()
}

#[pymethods]
impl CompiledSchema {
    fn is_valid(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<bool> {
        guarded(py, "is_valid", || {
            if let Some(validator) = self.in_place(instance) {
                return Ok(validator.is_valid(PyNode::root(instance)));
            }
            let value = python_value(py, instance)?;
            Ok(self.inner.is_valid(&value))
        })
    }

    /// `is_valid`, with a value outside the JSON model answered `false` instead of raised: what
    /// `Validator.is_valid` answers, without a Python frame around it.
    fn accepts(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<bool> {
        guarded(py, "accepts", || Ok(self.accepts_one(instance)))
    }

    /// `Validator.validate` without a Python frame for a valid document (a pipeline's usual
    /// case): `None`, or the `ValidationError` `pairling_fast.validator._raise_for` raises from
    /// the violations, or from the value outside the JSON model, as the fallback's path does.
    fn validate(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<()> {
        guarded(py, "validate", || {
            if self.accepts_one(instance) {
                return Ok(());
            }
            let outcome = self
                .violations_of(instance)
                .map_err(|error| canonicalization_error(py, error));
            raise_for(py)?.call1((outcome_object(py, outcome)?,))?;
            Ok(())
        })
    }

    /// `accepts` of each instance, the GIL released and the cores used for a large batch.
    fn accepts_many(&self, py: Python<'_>, instances: &Bound<'_, PyList>) -> PyResult<Vec<bool>> {
        guarded(py, "accepts_many", || {
            if self.calls_python() {
                return Ok(instances
                    .iter()
                    .map(|item| self.accepts_one(&item))
                    .collect());
            }
            let inner = &*self.inner;
            batches::batch(
                py,
                instances,
                |instance| Ok(self.accepts_one(instance)),
                |instance| Ok(to_value(instance).ok()),
                |value| value.is_some_and(|value| inner.is_valid(&value)),
            )
        })
    }

    /// `errors` of each instance: its violations, or the `CanonicalizationError` it would raise;
    /// `None` for a valid one. Most are valid, and an empty list per document kept until the
    /// caller's own list replaces it doubled the objects the cyclic GC tracks: full collections
    /// over the caller's heap made `iter_errors_many` slower than its loop (benches/RESULTS.md).
    fn errors_many(
        &self,
        py: Python<'_>,
        instances: &Bound<'_, PyList>,
    ) -> PyResult<Vec<PyObject>> {
        guarded(py, "errors_many", || {
            let inner = &*self.inner;
            let outcomes = if self.calls_python() {
                instances
                    .iter()
                    .map(|item| self.violations_of(&item))
                    .collect()
            } else {
                batches::batch(
                    py,
                    instances,
                    |instance| Ok(self.violations_of(instance)),
                    |instance| Ok(to_value(instance)),
                    |value| value.map(|value| inner.violations(&value)),
                )?
            };
            outcomes
                .into_iter()
                .map(|outcome| match outcome {
                    Ok(violations) if violations.is_empty() => Ok(py.None()),
                    outcome => {
                        outcome_object(py, outcome.map_err(|e| canonicalization_error(py, e)))
                    }
                })
                .collect()
        })
    }

    fn errors(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<Vec<RawViolation>> {
        guarded(py, "errors", || {
            if let Some(validator) = self.in_place(instance) {
                return Ok(raw(validator.violations(PyNode::root(instance))));
            }
            let value = python_value(py, instance)?;
            Ok(raw(py.allow_threads(|| self.inner.violations(&value))))
        })
    }

    /// `Validator.evaluate`: `(valid, list, hierarchical, errors)`, the output formats of the
    /// crate's evaluation of `instance` (`validate::EvaluationOutput`).
    fn evaluate(
        &self,
        py: Python<'_>,
        instance: &Bound<'_, PyAny>,
    ) -> PyResult<(bool, PyObject, PyObject, PyObject)> {
        guarded(py, "evaluate", || {
            let value = python_value(py, instance)?;
            let output = py
                .allow_threads(|| self.inner.evaluate(&value))
                .map_err(|error| PyValueError::new_err(error.to_string()))?;
            Ok((
                output.valid,
                to_python(py, &output.list)?,
                to_python(py, &output.hierarchical)?,
                to_python(py, &output.errors)?,
            ))
        })
    }

    fn errors_json(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Vec<RawViolation>> {
        guarded(py, "errors_json", || {
            self.violations_json(py, data)?
                .map(raw)
                .map_err(|e| json_error(py, e))
        })
    }

    /// `Validator.is_valid_json`: whether `data`, parsed strictly, is a valid instance; text
    /// that is not strict JSON is not one (`False`), as a value outside the JSON model is not
    /// for `accepts`. No violation is built, and no `Report`.
    fn accepts_json(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<bool> {
        guarded(py, "accepts_json", || {
            let outcome = self.on_text(
                py,
                data,
                |validator, tape| validator.is_valid(tape.root()),
                |validator, value| validator.is_valid(value),
            )?;
            Ok(outcome.unwrap_or(false))
        })
    }

    /// `Validator.validate_json` without a Python frame: the `Report` of `data` parsed strictly
    /// and validated. A valid document's empty report is built here; findings are turned into
    /// one by `pairling_fast.validator._report_of`, as the fallback's path does.
    fn report_json(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        guarded(py, "report_json", || {
            let outcome = match self.violations_json(py, data)? {
                Ok(violations) if violations.is_empty() => return empty_report(py),
                outcome => outcome.map_err(|error| json_error(py, error)),
            };
            Ok(report_of(py)?
                .call1((outcome_object(py, outcome)?,))?
                .unbind())
        })
    }
}

/// From this size on, `validate_json` parses and validates without the GIL. Below it (a
/// pipeline's document, a few hundred bytes to a few KiB) releasing and taking the GIL back
/// costs more than the work it would let other threads overlap.
const RELEASE_GIL_FROM: usize = 32 << 10;

impl CompiledSchema {
    fn violations_json(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<Result<Vec<SchemaViolation>, JsonError>> {
        self.on_text(
            py,
            data,
            |validator, tape| validator.violations(tape.root()),
            |validator, value| validator.violations(value),
        )
    }

    /// `data` parsed strictly and read by `on_tape` where the schema has a tape form (the text
    /// read in place, `crate::tape`: no `Value` tree is built), else by `on_value`.
    fn on_text<T: Send>(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        on_tape: impl FnOnce(&SchemaValidator<TapeJson>, &Tape) -> T + Send,
        on_value: impl FnOnce(&SchemaValidator, &Value) -> T + Send,
    ) -> PyResult<Result<T, JsonError>> {
        let bytes = text_bytes(data)?;
        let inner = &*self.inner;
        let tape_validator = self.for_representation(&self.on_tape);
        let work = || match tape_validator {
            Some(validator) => Tape::parse(&bytes).map(|tape| on_tape(validator, &tape)),
            None => parse::parse_strict(&bytes).map(|value| on_value(inner, &value)),
        };
        Ok(if bytes.len() < RELEASE_GIL_FROM {
            work()
        } else {
            py.allow_threads(work)
        })
    }
}

static NEW_REPORT: GILOnceCell<(Py<PyAny>, Py<PyTuple>)> = GILOnceCell::new();
static REPORT_OF: GILOnceCell<Py<PyAny>> = GILOnceCell::new();

fn report_of(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    imported(py, &REPORT_OF, "pairling_fast.validator", "_report_of")
}

static RAISE_FOR: GILOnceCell<Py<PyAny>> = GILOnceCell::new();

fn raise_for(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    imported(py, &RAISE_FOR, "pairling_fast.validator", "_raise_for")
}

/// `Report(findings=[])` without running the dataclass's `__init__` in Python: a new instance
/// with its two fields set, `findings` an empty list and `stats` an empty dict, as `__init__`
/// sets them (`tests/test_pipeline.py` holds the two equal and checks that `Report` has no other
/// field). Half the cost of a valid document's `validate_json` was that `__init__`.
fn empty_report(py: Python<'_>) -> PyResult<PyObject> {
    // `object.__new__` and its argument tuple `(Report,)`, made once: no tuple per call.
    let (new, class) = NEW_REPORT.get_or_try_init(py, || {
        let class = py.import("pairling_fast.report")?.getattr("Report")?;
        let new = py.get_type::<PyAny>().getattr("__new__")?;
        Ok::<_, PyErr>((new.unbind(), PyTuple::new(py, [class])?.unbind()))
    })?;
    let report = new.bind(py).call1(class.bind(py))?;
    report.setattr(pyo3::intern!(py, "findings"), PyList::empty(py))?;
    report.setattr(pyo3::intern!(py, "stats"), PyDict::new(py))?;
    Ok(report.unbind())
}

// `Validator`'s keywords, one argument each as PyO3 reads them; they become one
// `CompileOptions` here.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (schema, validate_formats=None, resources=None, formats=None, ignore_unknown_formats=true, base_uri=None, pattern_options=None))]
pub(super) fn compile_schema(
    py: Python<'_>,
    schema: &Bound<'_, PyAny>,
    validate_formats: Option<bool>,
    resources: Option<&Bound<'_, PyDict>>,
    formats: Option<&Bound<'_, PyDict>>,
    ignore_unknown_formats: bool,
    base_uri: Option<String>,
    pattern_options: Option<PatternOptionsTuple>,
) -> PyResult<CompiledSchema> {
    guarded(py, "compile_schema", || {
        let schema = python_value(py, schema)?;
        let mut options = CompileOptions {
            validate_formats,
            resources: Vec::new(),
            reject_unknown_formats: !ignore_unknown_formats,
            base_uri,
            patterns: pattern_options.map(pattern_engine).transpose()?,
            ..Default::default()
        };
        if let Some(formats) = formats {
            for (name, check) in formats.iter() {
                options
                    .formats
                    .0
                    .push((name.extract::<String>()?, user_format(check.unbind())));
            }
        }
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
        Ok(CompiledSchema::new(
            Compiled::Owned(Arc::new(validator)),
            schema,
            options,
        ))
    })
}

/// `pairling_fast.validator`'s pattern options: (engine, backtrack_limit, size_limit,
/// dfa_size_limit), the engine `"fancy-regex"` or `"regex"`.
type PatternOptionsTuple = (String, Option<usize>, Option<usize>, Option<usize>);

fn pattern_engine(
    (engine, backtrack_limit, size_limit, dfa_size_limit): PatternOptionsTuple,
) -> PyResult<validate::PatternEngine> {
    match engine.as_str() {
        "fancy-regex" => Ok(validate::PatternEngine::Fancy {
            backtrack_limit,
            size_limit,
            dfa_size_limit,
        }),
        "regex" => Ok(validate::PatternEngine::Regex {
            size_limit,
            dfa_size_limit,
        }),
        other => Err(PyValueError::new_err(format!(
            "unknown pattern engine {other:?}"
        ))),
    }
}

/// A caller's format callable as the core calls it, taking the GIL for the call (a validator
/// without one never does). A callable that raises does not match; its exception goes to
/// `sys.unraisablehook`, as an exception no caller can receive does in Python.
fn user_format(check: Py<PyAny>) -> validate::FormatFn {
    Arc::new(move |text: &str| {
        Python::with_gil(|py| {
            let verdict = check
                .bind(py)
                .call1((text,))
                .and_then(|answer| answer.is_truthy());
            verdict.unwrap_or_else(|error| {
                error.write_unraisable(py, Some(check.bind(py)));
                false
            })
        })
    })
}

#[pyfunction]
pub(super) fn bundled_schema_ids() -> Vec<&'static str> {
    validate::bundled_ids()
}

#[pyfunction]
pub(super) fn bundled_validator(py: Python<'_>, schema_id: &str) -> PyResult<CompiledSchema> {
    guarded(py, "bundled_validator", || {
        let validator = py.allow_threads(|| validate::bundled_validator(schema_id));
        let schema = validate::bundled_schema(schema_id);
        validator
            .zip(schema)
            .map(|(v, schema)| {
                let options = CompileOptions {
                    validate_formats: Some(true),
                    resources: Vec::new(),
                    ..Default::default()
                };
                CompiledSchema::new(Compiled::Bundled(v), schema.clone(), options)
            })
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(schema_id.to_string()))
    })
}
