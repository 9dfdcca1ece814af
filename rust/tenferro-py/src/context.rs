//! `tf.ExecutionContext`'s methods: one engine and one eager runtime (engines.md, "Execution
//! context"); `tf.default_context()` is in `defaults.rs`.

use crate::apply::operands;
use crate::args::parse_timeout;
use crate::classes::{
    register_runtime, PyCpuEngine, PyExecutionContext, PyRuntime, PySession, PyTensor,
};
use crate::graph::{run_graph_operands, PyGraph};
use crate::host::PyHost;
use crate::imports;
use crate::mode::current_state;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use std::sync::Arc;
use tenferro_eager::{Runtime, Session};
use tenferro_runtime::PREPARED_GRAPH_TAG;
use tenferro_tensor::Error;

/// Gives an engine lent by [`PyExecutionContext::_run_graph`] back, also on error.
struct Lent(Option<Session>);

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(s) = &self.0 {
            s.exit();
        }
    }
}

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

    /// Restart the peaks of the engine's ``buffer_pool_stats()`` from the buffers live now
    /// (as ``engine.reset_peak_memory_stats()``).
    fn reset_peak_memory_stats(&self) {
        self.core.engine().buffer_pool().reset_peak_live();
    }

    /// Run the graph ``graph`` (a ``_Graph``) on ``inputs`` (tensors of this context's runtime,
    /// or array-likes) on this context's engine; ``tf.ExecutionContext.run_graph`` wraps it.
    /// A session of this context held by the calling context is used; otherwise the engine is
    /// lent for the run (waiting behind another thread's session, GIL released). One tensor of
    /// this context's runtime per output.
    ///
    /// Raises ``ReenteredError`` when this thread holds the engine otherwise (a session of
    /// another runtime on it), ``ContextMismatchError`` for a tensor of another runtime, and
    /// the errors of the program.
    fn _run_graph(
        &self,
        py: Python<'_>,
        graph: &Bound<'_, PyGraph>,
        inputs: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PyTensor>> {
        let refs: Vec<&Bound<'_, PyAny>> = inputs.iter().collect();
        let ops = operands(py, &refs)?;
        let state = current_state(py)?;
        let mode = &state.get().core;
        let host = PyHost::new(py);
        let (rt, engine) = (self.core.runtime(), self.core.engine());
        let same_engine = |e: &Arc<dyn tenferro_runtime::Engine>| {
            std::ptr::addr_eq(Arc::as_ptr(e), Arc::as_ptr(engine))
        };
        let held = mode.sessions.iter().rev().find(|s| {
            s.is_active()
                && s.target()
                    .is_some_and(|(r, e)| Arc::ptr_eq(r, rt) && same_engine(e))
        });
        let mut lent = Lent(None);
        let session: &Session = match held {
            Some(s) => s,
            None => {
                let s = Session::explicit(rt.clone(), engine.clone(), None);
                host.finish(s.enter(&host).map_err(|e| match e {
                    Error::Reentered { .. } => Error::reentered(
                        "ExecutionContext.run_graph",
                        "this thread already holds the context's engine outside a session of \
                         this context (a session of another runtime on the same engine); run \
                         the graph inside that session, or `with ctx.session()`",
                    ),
                    e => e,
                }))?;
                &*lent.0.insert(s)
            }
        };
        let exec = host.finish(session.prepare("run_graph", &ops, mode, &host))?;
        let outs = run_graph_operands(py, graph.get(), &exec, &ops, mode, &host)?;
        drop(exec);
        drop(lent);
        Ok(outs.into_iter().map(Into::into).collect())
    }

    /// Statistics of the prepared graph plans in the engine's plan cache (``tf.CacheStats``).
    fn _prepared_graph_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self
            .core
            .engine()
            .plan_cache()
            .stats_for(PREPARED_GRAPH_TAG);
        imports::cache_stats(py, &s)
    }

    /// Drop the prepared graph plans of the engine's plan cache (other plans stay).
    fn _clear_prepared_graphs(&self) {
        self.core
            .engine()
            .plan_cache()
            .clear_tag(PREPARED_GRAPH_TAG);
    }

    /// Statistics of the buffer pool graphs run with (``tf.BufferPoolStats``): the engine's
    /// one buffer pool, as ``buffer_pool_stats()``.
    fn graph_buffer_pool_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.engine.get().buffer_pool_stats(py)
    }

    /// Free every buffer the engine's pool retains (the pool graphs run with); prepared plans
    /// stay valid (their constants are owned by the plans, not by the pool).
    fn reset_graph_buffer_pool(&self) {
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
