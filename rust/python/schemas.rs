//! JSON Schema: compiled schemas (`CompiledSchema`, wrapped by `pairling_fast.Validator`) and the bundled ones.

use super::*;

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
}

pub(super) type RawViolation = (String, String, String, String);

pub(super) fn raw(violations: Vec<SchemaViolation>) -> Vec<RawViolation> {
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

    fn errors(&self, py: Python<'_>, instance: &Bound<'_, PyAny>) -> PyResult<Vec<RawViolation>> {
        guarded(py, "errors", || {
            let value = python_value(py, instance)?;
            Ok(raw(py.allow_threads(|| self.inner.violations(&value))))
        })
    }

    fn errors_json(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Vec<RawViolation>> {
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
pub(super) fn compile_schema(
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
pub(super) fn bundled_schema_ids() -> Vec<&'static str> {
    validate::bundled_ids()
}

#[pyfunction]
pub(super) fn bundled_validator(py: Python<'_>, schema_id: &str) -> PyResult<CompiledSchema> {
    guarded(py, "bundled_validator", || {
        let validator = py.allow_threads(|| validate::bundled_validator(schema_id));
        validator
            .map(|v| CompiledSchema {
                inner: Compiled::Bundled(v),
            })
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(schema_id.to_string()))
    })
}
