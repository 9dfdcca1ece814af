//! `tf.ExecutionContext`: one engine and one eager runtime, and `tf.default_context()`, the
//! process-wide CPU context behind the implicit layer (engines.md, "Execution context").

use crate::session::{default_engine, default_runtime, PyCpuEngine, PyRuntime, PySession};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tenferro_cpu::CpuEngine;
use tenferro_runtime::Engine;

/// What a runtime's weak back-reference reaches while its context lives.
pub(crate) struct ContextInner {
    pub(crate) engine: Arc<CpuEngine>,
    /// Set by `tf.reset_default_engine()` on the default context it replaces: the runtime then
    /// runs implicit ops on the new default engine instead.
    pub(crate) retired: AtomicBool,
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
            retired: AtomicBool::new(false),
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
/// Set once `tf.reset_default_engine()` ran: the default context is then [`REPLACEMENT`]'s
/// (built on first use after each reset).
static REPLACED: AtomicBool = AtomicBool::new(false);
static REPLACEMENT: Mutex<Option<Py<PyExecutionContext>>> = Mutex::new(None);

/// The process-wide CPU context behind the implicit layer: ``tf.default_engine()`` and
/// ``tf.default_runtime()``.
///
/// Returns
/// -------
/// ExecutionContext
///     The same object on every call (a new one after ``tf.reset_default_engine()``, over the
///     new engine and the same runtime).
#[pyfunction]
pub fn default_context(py: Python<'_>) -> PyResult<Py<PyExecutionContext>> {
    if REPLACED.load(Ordering::Acquire) {
        if let Some(c) = REPLACEMENT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            return Ok(c.clone_ref(py));
        }
        // Built outside the lock: `default_engine` may release the GIL.
        let ctx = Py::new(
            py,
            PyExecutionContext::build(py, default_engine(py)?, default_runtime(py)?),
        )?;
        let mut slot = REPLACEMENT.lock().unwrap_or_else(|e| e.into_inner());
        return Ok(slot.get_or_insert(ctx).clone_ref(py));
    }
    DEFAULT_CONTEXT
        .get_or_try_init(py, || {
            let ctx = PyExecutionContext::build(py, default_engine(py)?, default_runtime(py)?);
            Py::new(py, ctx)
        })
        .map(|c| c.clone_ref(py))
}

/// Retire the current default context (its runtime stops routing implicit ops to its engine)
/// so that the next `default_context()` builds one over the new default engine.
pub(crate) fn retire_default_context(py: Python<'_>) {
    let current = if REPLACED.load(Ordering::Acquire) {
        REPLACEMENT.lock().unwrap_or_else(|e| e.into_inner()).take()
    } else {
        DEFAULT_CONTEXT.get(py).map(|c| c.clone_ref(py))
    };
    REPLACED.store(true, Ordering::Release);
    if let Some(c) = current {
        c.get()._inner.retired.store(true, Ordering::Relaxed);
    }
}

/// Register the classes and functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyExecutionContext>()?;
    m.add_function(wrap_pyfunction!(default_context, m)?)?;
    Ok(())
}
