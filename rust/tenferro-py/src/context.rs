//! `tf.ExecutionContext`'s methods: one engine and one eager runtime (engines.md, "Execution
//! context"); `tf.default_context()` is in `defaults.rs`.

use crate::args::parse_timeout;
use crate::classes::{register_runtime, PyCpuEngine, PyExecutionContext, PyRuntime, PySession};
use pyo3::prelude::*;
use pyo3::types::PyModule;
use tenferro_eager::Runtime;

#[pymethods]
impl PyExecutionContext {
    #[new]
    fn new(py: Python<'_>, engine: Py<PyCpuEngine>) -> PyResult<Self> {
        let runtime = Bound::new(
            py,
            PyRuntime {
                inner: Runtime::new(),
            },
        )?;
        register_runtime(&runtime)?;
        Ok(PyExecutionContext::build(engine, runtime.unbind()))
    }

    /// The engine this context owns.
    #[getter]
    fn engine(&self, py: Python<'_>) -> Py<PyCpuEngine> {
        self.engine.clone_ref(py)
    }

    /// The context's eager runtime (the same object on every call).
    fn eager_runtime(&self, py: Python<'_>) -> Py<PyRuntime> {
        self.runtime.clone_ref(py)
    }

    /// Lend the engine to the eager runtime for a ``with`` block.
    ///
    /// Parameters
    /// ----------
    /// timeout : float, optional
    ///     Seconds to wait while another thread holds the engine: ``None``, ``inf`` and values
    ///     above 1e9 (about 32 years) wait forever, ``0`` tries once. Ctrl-C ends the wait.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     ``timeout`` is NaN or negative.
    /// tenferro.errors.ReenteredError
    ///     On entry, if this thread (or another asyncio task on it) already holds the engine.
    /// tenferro.errors.EngineBusyError
    ///     On entry, if another thread still holds the engine after ``timeout`` seconds.
    #[pyo3(signature = (timeout=None))]
    fn session(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<PySession> {
        let timeout = parse_timeout("session", timeout)?;
        Ok(PySession::explicit(
            self.runtime.clone_ref(py),
            self.engine.clone_ref(py),
            timeout,
        ))
    }

    /// Statistics of the engine's buffer pool (``tf.BufferPoolStats``).
    fn buffer_pool_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.engine.get().buffer_pool_stats(py)
    }

    /// Free every buffer the engine's pool retains; prepared plans stay usable.
    fn reset_buffer_pool(&self) {
        self.core.engine().buffer_pool().reset();
    }

    fn __repr__(&self) -> String {
        format!(
            "ExecutionContext(engine={}, runtime={})",
            self.core.engine().describe(),
            self.core.runtime().id()
        )
    }
}

/// Register the class of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyExecutionContext>()?;
    Ok(())
}
