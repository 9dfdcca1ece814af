//! `_ModeState` and the `ContextVar` that holds it: grad-mode flags and the stack of active
//! sessions of each Python context, read once per op (`PyContextVar_Get`, no Python call) and
//! handed to the eager core.

use crate::classes::{ModeState, PySession};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyModule, PyTuple};
use tenferro_eager::ModeState as CoreMode;

static STATE_VAR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

#[pymethods]
impl ModeState {
    /// Whether ops on tracked tensors are recorded (``tf.no_grad()`` turns it off).
    #[getter]
    fn grad_enabled(&self) -> bool {
        self.core.grad_enabled
    }

    /// Whether a functional transform is capturing the trace (every op is recorded).
    #[getter]
    fn capture_trace(&self) -> bool {
        self.core.capture_trace
    }

    /// Whether a ``tf.jit`` trace is being recorded in this context.
    #[getter]
    fn tracing(&self) -> bool {
        self.core.trace.is_some()
    }

    /// Active sessions, innermost last.
    #[getter]
    fn sessions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.sessions.iter().map(|s| s.clone_ref(py)))
    }
}

/// Create the ``ContextVar`` (module init: no import on the op path).
pub(crate) fn init(py: Python<'_>) -> PyResult<()> {
    STATE_VAR.get_or_try_init(py, || {
        let init = Py::new(
            py,
            ModeState {
                core: CoreMode::default(),
                sessions: Vec::new(),
            },
        )?;
        let cv = crate::imports::get(py)?.context_var.bind(py);
        let kwargs = PyDict::new(py);
        kwargs.set_item("default", init)?;
        Ok::<_, PyErr>(cv.call(("tenferro_state",), Some(&kwargs))?.unbind())
    })?;
    Ok(())
}

fn state_var(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    STATE_VAR
        .get(py)
        .ok_or_else(|| PyRuntimeError::new_err("tenferro: the mode state is not initialised"))
}

/// The ``ContextVar`` holding the mode state.
#[pyfunction]
pub fn _state_var(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(state_var(py)?.clone_ref(py))
}

/// The mode state of the calling context.
pub(crate) fn current_state(py: Python<'_>) -> PyResult<Bound<'_, ModeState>> {
    let var = state_var(py)?;
    let mut out: *mut pyo3::ffi::PyObject = std::ptr::null_mut();
    // SAFETY: `var` is a live ContextVar; on success `out` is a new reference (the var has a
    // default, so it is never NULL then).
    let rc = unsafe { pyo3::ffi::PyContextVar_Get(var.as_ptr(), std::ptr::null_mut(), &mut out) };
    if rc != 0 || out.is_null() {
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `out` is an owned reference.
    let value = unsafe { Bound::from_owned_ptr(py, out) };
    Ok(value.cast_into::<ModeState>()?)
}

/// Set `state` in the calling context; returns the ``ContextVar`` token that resets it.
pub(crate) fn set_state(py: Python<'_>, state: ModeState) -> PyResult<Py<PyAny>> {
    Ok(state_var(py)?
        .bind(py)
        .call_method1("set", (Py::new(py, state)?,))?
        .unbind())
}

/// Reset the mode state to what it was before the `set` that returned `token`.
pub(crate) fn reset_state(py: Python<'_>, token: Py<PyAny>) -> PyResult<()> {
    state_var(py)?.bind(py).call_method1("reset", (token,))?;
    Ok(())
}

/// The state with `session` pushed on the stack.
pub(crate) fn with_session(
    py: Python<'_>,
    st: &ModeState,
    session: &Bound<'_, PySession>,
) -> ModeState {
    let mut core = st.core.clone();
    core.sessions.push(session.get().core.clone());
    let mut sessions: Vec<Py<PySession>> = st.sessions.iter().map(|s| s.clone_ref(py)).collect();
    sessions.push(session.clone().unbind());
    ModeState { core, sessions }
}

/// Set grad-mode flags in the calling context (`None` keeps a flag); returns the ContextVar
/// token to reset.
#[pyfunction]
#[pyo3(signature = (grad_enabled=None, capture_trace=None))]
pub fn _set_modes(
    py: Python<'_>,
    grad_enabled: Option<bool>,
    capture_trace: Option<bool>,
) -> PyResult<Py<PyAny>> {
    let state = current_state(py)?;
    let st = state.get();
    let mut core = st.core.clone();
    core.grad_enabled = grad_enabled.unwrap_or(core.grad_enabled);
    core.capture_trace = capture_trace.unwrap_or(core.capture_trace);
    let sessions = st.sessions.iter().map(|s| s.clone_ref(py)).collect();
    set_state(py, ModeState { core, sessions })
}

/// Register the class and functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    init(m.py())?;
    m.add_class::<ModeState>()?;
    m.add_function(wrap_pyfunction!(_state_var, m)?)?;
    m.add_function(wrap_pyfunction!(_set_modes, m)?)?;
    Ok(())
}
