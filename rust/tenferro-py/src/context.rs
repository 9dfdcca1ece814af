//! `tf.ExecutionContext`: one engine and one eager runtime, and `tf.default_context()`, the
//! process-wide CPU context behind the implicit layer (engines.md, "Execution context").

use crate::session::{default_engine, default_runtime, PyCpuEngine, PyRuntime, PySession};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use std::sync::Arc;
use tenferro_cpu::CpuEngine;
use tenferro_runtime::Engine;

/// What a runtime's weak back-reference reaches while its context lives.
pub(crate) struct ContextInner {
    pub(crate) engine: Arc<CpuEngine>,
}

/// `tf.ExecutionContext(engine)`: owns one engine and one eager runtime.
///
/// Implicit ops on tensors of ``ctx.eager_runtime()`` (operators, NumPy-named functions outside
/// any session) run on this context's engine while the context lives, borrowing it per op like a
/// one-op session. An active session still takes precedence.
///
/// Parameters
/// ----------
/// engine : CpuEngine
///     The engine this context lends.
///
/// Examples
/// --------
/// >>> import tenferro as tf
/// >>> ctx = tf.ExecutionContext(tf.CpuEngine(threads=1))
/// >>> rt = ctx.eager_runtime()
/// >>> rt is ctx.eager_runtime()
/// True
/// >>> with ctx.session() as s:
/// ...     float(s.reduce_sum(s.constant([1.0, 2.0])))
/// 3.0
#[pyclass(module = "tenferro", name = "ExecutionContext", frozen, weakref)]
pub struct PyExecutionContext {
    engine: Py<PyCpuEngine>,
    runtime: Py<PyRuntime>,
    /// Strong half of the runtime's back-reference; dropped with the context.
    _inner: Arc<ContextInner>,
}

impl PyExecutionContext {
    fn build(
        py: Python<'_>,
        engine: Py<PyCpuEngine>,
        runtime: Py<PyRuntime>,
    ) -> PyExecutionContext {
        let inner = Arc::new(ContextInner {
            engine: engine.get().engine.clone(),
        });
        // A runtime belongs to at most one context: the first one keeps it.
        let _ = runtime.bind(py).get().owner.set(Arc::downgrade(&inner));
        PyExecutionContext {
            engine,
            runtime,
            _inner: inner,
        }
    }
}

#[pymethods]
impl PyExecutionContext {
    #[new]
    fn new(py: Python<'_>, engine: Py<PyCpuEngine>) -> PyResult<Self> {
        let runtime = Py::new(py, PyRuntime::fresh())?;
        Ok(PyExecutionContext::build(py, engine, runtime))
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
    ///     Seconds to wait while another thread holds the engine (``None``: wait forever).
    ///
    /// Raises
    /// ------
    /// tenferro.errors.ReenteredError
    ///     On entry, if this thread (or another asyncio task on it) already holds the engine.
    /// tenferro.errors.EngineBusyError
    ///     On entry, if another thread still holds the engine after ``timeout`` seconds.
    #[pyo3(signature = (timeout=None))]
    fn session(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<PySession> {
        PySession::explicit(
            self.runtime.clone_ref(py),
            self.engine.clone_ref(py),
            timeout,
        )
    }

    /// Statistics of the engine's buffer pool (``tf.BufferPoolStats``).
    fn buffer_pool_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.engine.get().buffer_pool_stats(py)
    }

    /// Free every buffer the engine's pool retains; prepared plans stay usable.
    fn reset_buffer_pool(&self) {
        self.engine.get().engine.buffer_pool().reset();
    }

    fn __repr__(&self) -> String {
        format!(
            "ExecutionContext(engine={}, runtime={})",
            self.engine.get().engine.describe(),
            self.runtime.get().inner.id()
        )
    }
}

static DEFAULT_CONTEXT: PyOnceLock<Py<PyExecutionContext>> = PyOnceLock::new();

/// The process-wide CPU context behind the implicit layer: ``tf.default_engine()`` and
/// ``tf.default_runtime()``.
///
/// Returns
/// -------
/// ExecutionContext
///     The same object on every call.
#[pyfunction]
pub fn default_context(py: Python<'_>) -> PyResult<Py<PyExecutionContext>> {
    DEFAULT_CONTEXT
        .get_or_try_init(py, || {
            let ctx = PyExecutionContext::build(py, default_engine(py)?, default_runtime(py)?);
            Py::new(py, ctx)
        })
        .map(|c| c.clone_ref(py))
}

/// Register the classes and functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyExecutionContext>()?;
    m.add_function(wrap_pyfunction!(default_context, m)?)?;
    Ok(())
}
