//! The one place where core errors become Python exceptions. The classes are declared in
//! `python/tenferro/errors.py`; each core variant maps to exactly one of them (or a builtin).
//!
//! The single route is [`to_pyerr`] (and [`PyResultExt::py`] over it): the binding never raises a
//! `tenferro.errors` class by name, it builds a typed [`tenferro_tensor::Error`] and converts it
//! here. A function rather than `impl From<Error> for PyErr`: both types are foreign to this
//! crate (orphan rule), and a newtype would only forward to the same match while hiding where
//! the conversion happens. The class objects are looked up once, at module init ([`init`]); no
//! import runs on the error path.

use pyo3::exceptions::{
    PyIndexError, PyKeyboardInterrupt, PyMemoryError, PyOverflowError, PyRuntimeError,
    PyValueError, PyZeroDivisionError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use tenferro_tensor::Error;

/// The `tenferro.errors` classes the core's variants map to, indexing [`CLASSES`].
#[derive(Clone, Copy)]
enum Class {
    Tenferro,
    Shape,
    Axis,
    DType,
    ContextMismatch,
    NonScalarGrad,
    Inactive,
    NoGradient,
    UnsupportedAdRule,
    Unsupported,
    Reentered,
    EngineBusy,
    EngineBroken,
    CpuThread,
    AlreadyInitialized,
    LinAlg,
    Internal,
    Concretization,
    Trace,
    TracerLeak,
    Einsum,
}

/// Python names of [`Class`], in its order.
const NAMES: [&str; 21] = [
    "TenferroError",
    "ShapeError",
    "AxisError",
    "DTypeError",
    "ContextMismatchError",
    "NonScalarGradError",
    "InactiveError",
    "NoGradientError",
    "UnsupportedAdRuleError",
    "UnsupportedError",
    "ReenteredError",
    "EngineBusyError",
    "EngineBrokenError",
    "CpuThreadError",
    "AlreadyInitializedError",
    "LinAlgError",
    "InternalError",
    "ConcretizationError",
    "TraceError",
    "TracerLeakError",
    "EinsumError",
];

static CLASSES: PyOnceLock<Vec<Py<PyAny>>> = PyOnceLock::new();

/// Module init: look up every class of `tenferro.errors` once (`errors.py` does not import
/// `_tenferro`, so this runs while `tenferro/__init__.py` imports the extension).
pub(crate) fn init(py: Python<'_>) -> PyResult<()> {
    let m = PyModule::import(py, "tenferro.errors")?;
    let classes = NAMES
        .iter()
        .map(|n| Ok(m.getattr(*n)?.unbind()))
        .collect::<PyResult<Vec<_>>>()?;
    let _ = CLASSES.set(py, classes);
    Ok(())
}

fn raise<'py>(py: Python<'py>, class: Class, args: impl pyo3::call::PyCallArgs<'py>) -> PyErr {
    let Some(classes) = CLASSES.get(py) else {
        return PyRuntimeError::new_err("tenferro._tenferro: tenferro.errors was not loaded");
    };
    match classes[class as usize].bind(py).call1(args) {
        Ok(inst) => PyErr::from_value(inst),
        Err(e) => e,
    }
}

thread_local! {
    /// The Python exception a callback raised while the core ran it (see [`from_callback`]).
    static PENDING: std::cell::RefCell<Option<PyErr>> = const { std::cell::RefCell::new(None) };
}

/// The start of the message of a core error that carries a Python callback's exception.
const CALLBACK_RAISED: &str = "a Python callback raised: ";

/// A core error carrying the exception `e` that Python code raised inside a callback the core
/// ran (a function supplying derivative programs): the exception is kept on this thread and
/// [`to_pyerr`] re-raises it, class and traceback intact, at the binding boundary.
pub(crate) fn from_callback(op: &str, e: PyErr) -> Error {
    let msg = e.to_string();
    PENDING.with(|p| *p.borrow_mut() = Some(e));
    Error::internal(op, format!("{CALLBACK_RAISED}{msg}"))
}

/// Convert a core error into the Python exception of `python-api.md` (a callback's own
/// exception for an error that carries one).
pub(crate) fn to_pyerr(py: Python<'_>, e: Error) -> PyErr {
    if let Error::Internal { message, .. } = &e {
        if message.starts_with(CALLBACK_RAISED) {
            if let Some(p) = PENDING.with(|p| p.borrow_mut().take()) {
                return p;
            }
        }
    }
    let msg = e.to_string();
    let class = match e {
        Error::Shape { .. } => Class::Shape,
        Error::Einsum { .. } => Class::Einsum,
        Error::Axis { .. } => Class::Axis,
        Error::DType { .. } => Class::DType,
        Error::ContextMismatch { .. } => Class::ContextMismatch,
        Error::Reentered { .. } => Class::Reentered,
        Error::EngineBusy { .. } => Class::EngineBusy,
        Error::EngineBroken { .. } => {
            return raise(
                py,
                Class::EngineBroken,
                (format!(
                    "{msg} (tf.reset_default_engine() replaces a broken default engine)"
                ),),
            )
        }
        Error::AlreadyInitialized { .. } => Class::AlreadyInitialized,
        Error::Unsupported { .. } => Class::Unsupported,
        Error::UnsupportedAdRule { .. } => Class::UnsupportedAdRule,
        Error::LinAlg { .. } => Class::LinAlg,
        Error::Internal { .. } => Class::Internal,
        Error::Concretization { .. } => Class::Concretization,
        Error::Trace { .. } => Class::Trace,
        Error::TracerLeak { .. } => Class::TracerLeak,
        Error::NonScalarOutput { .. } => Class::NonScalarGrad,
        Error::NoGradient { .. } => Class::NoGradient,
        Error::InactiveWrt { .. } => Class::Inactive,
        Error::SessionInactive { .. } => Class::Tenferro,
        Error::CpuThread { reason, .. } => {
            return raise(py, Class::CpuThread, (msg, reason.name()));
        }
        Error::Value { .. } => return PyValueError::new_err(msg),
        Error::Index { .. } => return PyIndexError::new_err(msg),
        Error::ZeroDivision { .. } => return PyZeroDivisionError::new_err(msg),
        Error::Overflow { .. } => return PyOverflowError::new_err(msg),
        Error::Alloc { .. } => return PyMemoryError::new_err(msg),
        Error::Interrupted { .. } => return PyKeyboardInterrupt::new_err(msg),
    };
    raise(py, class, (msg,))
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
