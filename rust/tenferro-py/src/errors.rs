//! The one place where core errors become Python exceptions. The classes are declared in
//! `python/tenferro/errors.py`; each core variant maps to exactly one of them (or a builtin).

use pyo3::exceptions::{
    PyIndexError, PyKeyboardInterrupt, PyMemoryError, PyOverflowError, PyValueError,
    PyZeroDivisionError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use tenferro_tensor::Error;

static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

/// The `tenferro.errors` module.
pub(crate) fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("tenferro.errors")?.unbind())
        })
        .map(|m| m.bind(py))
}

fn raise(py: Python<'_>, class: &str, args: impl for<'a> IntoPyObject<'a>) -> PyErr {
    match errors_module(py).and_then(|m| m.getattr(class)) {
        Ok(cls) => match cls.call1((args,)) {
            Ok(inst) => PyErr::from_value(inst),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// Convert a core error into the Python exception of `python-api.md`.
pub(crate) fn to_pyerr(py: Python<'_>, e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Shape { .. } => raise(py, "ShapeError", msg),
        Error::Axis { .. } => raise(py, "AxisError", msg),
        Error::DType { .. } => raise(py, "DTypeError", msg),
        Error::ContextMismatch { .. } => raise(py, "ContextMismatchError", msg),
        Error::Reentered { .. } => raise(py, "ReenteredError", msg),
        Error::EngineBusy { .. } => raise(py, "EngineBusyError", msg),
        Error::EngineBroken { .. } => raise(
            py,
            "EngineBrokenError",
            format!("{msg} (tf.reset_default_engine() replaces a broken default engine)"),
        ),
        Error::AlreadyInitialized { .. } => raise(py, "AlreadyInitializedError", msg),
        Error::Unsupported { .. } => raise(py, "UnsupportedError", msg),
        Error::UnsupportedAdRule { .. } => raise(py, "UnsupportedAdRuleError", msg),
        Error::LinAlg { .. } => raise(py, "LinAlgError", msg),
        Error::Internal { .. } => raise(py, "InternalError", msg),
        Error::Ad { class, .. } => raise(py, class, msg),
        Error::CpuThread { reason, .. } => {
            match errors_module(py).and_then(|m| m.getattr("CpuThreadError")) {
                Ok(cls) => match cls.call1((msg, reason.name())) {
                    Ok(inst) => PyErr::from_value(inst),
                    Err(err) => err,
                },
                Err(err) => err,
            }
        }
        Error::Value { .. } => PyValueError::new_err(msg),
        Error::Index { .. } => PyIndexError::new_err(msg),
        Error::ZeroDivision { .. } => PyZeroDivisionError::new_err(msg),
        Error::Overflow { .. } => PyOverflowError::new_err(msg),
        Error::Alloc { .. } => PyMemoryError::new_err(msg),
        Error::Interrupted { .. } => PyKeyboardInterrupt::new_err(msg),
    }
}

/// `Result<T, Error>` → `PyResult<T>`.
pub(crate) trait PyResultExt<T> {
    fn py(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> PyResultExt<T> for Result<T, Error> {
    #[inline]
    fn py(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_pyerr(py, e))
    }
}

/// Raise a `tenferro.errors` class by name with a message.
pub(crate) fn error(py: Python<'_>, class: &str, msg: String) -> PyErr {
    raise(py, class, msg)
}
