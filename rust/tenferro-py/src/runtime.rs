//! `tf.Runtime`'s methods (the core runtime: AD state). Runtime-level AD methods written in
//! Python (`variable`, `grad`, ...) are attached by `tenferro._tensor_methods`.

use crate::apply::tensor_from_object;
use crate::args::parse_timeout;
use crate::classes::{register_runtime, PyCpuEngine, PyRuntime, PySession, PyTensor};
use crate::mode::current_state;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use tenferro_eager::{EagerTensor, Runtime, Value};

#[pymethods]
impl PyRuntime {
    #[new]
    fn new() -> Self {
        PyRuntime {
            inner: Runtime::new(),
        }
    }

    /// Process-unique id of this runtime.
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id()
    }

    /// An untracked tensor of this runtime holding a copy of `data`.
    fn constant(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let py = slf.py();
        let rt = register_runtime(slf)?;
        let t = tensor_from_object(py, data, true)?;
        let t = Value::Tensor(t);
        let node = current_state(py)?.get().core.captured_node(&t);
        Ok(EagerTensor::new(t, rt, node).into())
    }

    /// Lend `engine` to this runtime for a ``with`` block (see ``Session``).
    ///
    /// Parameters
    /// ----------
    /// engine : CpuEngine
    ///     The engine the block's ops run on.
    /// timeout : float, optional
    ///     Seconds ``__enter__`` waits while another thread holds the engine: ``None``, ``inf``
    ///     and values above 1e9 (about 32 years) wait forever, ``0`` tries once. The wait
    ///     releases the GIL and ends on Ctrl-C (``KeyboardInterrupt``).
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     ``timeout`` is NaN or negative (here, not at ``__enter__``).
    /// tenferro.errors.ReenteredError
    ///     On entry, if this thread already holds the engine.
    /// tenferro.errors.EngineBusyError
    ///     On entry, if another thread still holds the engine after ``timeout`` seconds.
    #[pyo3(signature = (engine, timeout=None))]
    fn session(
        slf: &Bound<'_, Self>,
        engine: Py<PyCpuEngine>,
        timeout: Option<f64>,
    ) -> PyResult<PySession> {
        register_runtime(slf)?;
        let timeout = parse_timeout("session", timeout)?;
        Ok(PySession::explicit(slf.clone().unbind(), engine, timeout))
    }

    fn __repr__(&self) -> String {
        format!("Runtime(id={})", self.inner.id())
    }
}

/// Register the class of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRuntime>()?;
    Ok(())
}
