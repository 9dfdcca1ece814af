//! The process-wide defaults behind the implicit layer: `tf.default_runtime()`,
//! `tf.default_engine()`, `tf.default_context()`, and `tf.reset_default_engine()`.

use crate::classes::{
    register_runtime, runtime_object, PyCpuEngine, PyExecutionContext, PyRuntime,
};
use crate::engine::default_construction;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tenferro_runtime::Engine;

/// The default runtime's Python object, held for the process (always the same object).
static DEFAULT_RUNTIME: PyOnceLock<Py<PyRuntime>> = PyOnceLock::new();
/// The first default engine; [`reset_default_engine`] installs later ones in [`REPLACEMENT`].
static DEFAULT_ENGINE: PyOnceLock<Py<PyCpuEngine>> = PyOnceLock::new();
/// Set once [`reset_default_engine`] ran: the default engine is then [`REPLACEMENT`]'s.
static REPLACED: AtomicBool = AtomicBool::new(false);
static REPLACEMENT: Mutex<Option<Py<PyCpuEngine>>> = Mutex::new(None);
static DEFAULT_CONTEXT: PyOnceLock<Py<PyExecutionContext>> = PyOnceLock::new();
/// Set once `tf.reset_default_engine()` ran: the default context is then
/// [`CONTEXT_REPLACEMENT`]'s (built on first use after each reset).
static CONTEXT_REPLACED: AtomicBool = AtomicBool::new(false);
static CONTEXT_REPLACEMENT: Mutex<Option<Py<PyExecutionContext>>> = Mutex::new(None);

/// The process-wide default runtime.
#[pyfunction]
pub fn default_runtime(py: Python<'_>) -> PyResult<Py<PyRuntime>> {
    DEFAULT_RUNTIME
        .get_or_try_init(py, || runtime_object(py, tenferro_eager::default_runtime()))
        .map(|r| r.clone_ref(py))
}

/// The core runtime of an optional ``runtime=`` argument (default: the default runtime),
/// registering its Python object.
pub(crate) fn runtime_arg(
    py: Python<'_>,
    runtime: Option<&Bound<'_, PyRuntime>>,
) -> PyResult<Arc<tenferro_eager::Runtime>> {
    match runtime {
        Some(r) => register_runtime(r),
        None => register_runtime(default_runtime(py)?.bind(py)),
    }
}

/// The default engine as the core sees it: the implicit-op path reads it once per op, so the
/// common case (no reset yet, engine built) is two loads and one `Arc` clone.
#[inline]
pub(crate) fn default_engine_core(py: Python<'_>) -> PyResult<Arc<dyn Engine>> {
    if !REPLACED.load(Ordering::Acquire) {
        if let Some(e) = DEFAULT_ENGINE.get(py) {
            return Ok(e.get().engine());
        }
    }
    Ok(default_engine(py)?.get().engine())
}

/// The process-wide default CPU engine (built on first use; replaced by
/// ``tf.reset_default_engine()``).
#[pyfunction]
pub fn default_engine(py: Python<'_>) -> PyResult<Py<PyCpuEngine>> {
    if REPLACED.load(Ordering::Acquire) {
        if let Some(e) = REPLACEMENT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            return Ok(e.clone_ref(py));
        }
    }
    DEFAULT_ENGINE
        .get_or_try_init(py, || Py::new(py, default_construction(py)?))
        .map(|r| r.clone_ref(py))
}

/// Replace the default engine with a new one, without restarting Python: the way out after a
/// panic broke it (``EngineBrokenError`` on every implicit op).
///
/// The new engine is a default construction (``tf.CpuEngine()``: the process's fixed worker
/// count). From then on ``tf.default_engine()`` returns it, implicit ops on tensors of
/// ``tf.default_runtime()`` run on it (existing tensors and their gradients stay valid: the
/// runtime is kept), and ``tf.default_context()`` is a new context over it and the same runtime.
/// The old engine is not repaired: sessions holding it keep it; its buffer pool is emptied.
///
/// Returns
/// -------
/// CpuEngine
///     The new default engine.
///
/// Raises
/// ------
/// tenferro.errors.CpuThreadError
///     As ``tf.CpuEngine()`` (a pool that cannot be built falls back to a serial engine).
///
/// Examples
/// --------
/// >>> import tenferro as tf
/// >>> e = tf.reset_default_engine()
/// >>> e is tf.default_engine()
/// True
#[pyfunction]
pub fn reset_default_engine(py: Python<'_>) -> PyResult<Py<PyCpuEngine>> {
    let old = if REPLACED.load(Ordering::Acquire) {
        let slot = REPLACEMENT.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref().map(|e| e.clone_ref(py))
    } else {
        DEFAULT_ENGINE.get(py).map(|e| e.clone_ref(py))
    };
    let new = Py::new(py, default_construction(py)?)?;
    let prev = {
        let mut slot = REPLACEMENT.lock().unwrap_or_else(|e| e.into_inner());
        let prev = slot.replace(new.clone_ref(py));
        REPLACED.store(true, Ordering::Release);
        prev
    };
    drop(prev);
    if let Some(old) = old {
        old.get().cpu.buffer_pool().reset();
    }
    retire_default_context(py);
    Ok(new)
}

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
    if CONTEXT_REPLACED.load(Ordering::Acquire) {
        if let Some(c) = CONTEXT_REPLACEMENT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            return Ok(c.clone_ref(py));
        }
        // Built outside the lock: `default_engine` may release the GIL.
        let ctx = Py::new(
            py,
            PyExecutionContext::build(default_engine(py)?, default_runtime(py)?),
        )?;
        let mut slot = CONTEXT_REPLACEMENT
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        return Ok(slot.get_or_insert(ctx).clone_ref(py));
    }
    DEFAULT_CONTEXT
        .get_or_try_init(py, || {
            Py::new(
                py,
                PyExecutionContext::build(default_engine(py)?, default_runtime(py)?),
            )
        })
        .map(|c| c.clone_ref(py))
}

/// Retire the current default context (its runtime stops routing implicit ops to its engine)
/// so that the next `default_context()` builds one over the new default engine.
fn retire_default_context(py: Python<'_>) {
    let current = if CONTEXT_REPLACED.load(Ordering::Acquire) {
        CONTEXT_REPLACEMENT
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    } else {
        DEFAULT_CONTEXT.get(py).map(|c| c.clone_ref(py))
    };
    CONTEXT_REPLACED.store(true, Ordering::Release);
    if let Some(c) = current {
        c.get().core.retire();
    }
}

/// Register the functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(default_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(default_engine, m)?)?;
    m.add_function(wrap_pyfunction!(reset_default_engine, m)?)?;
    m.add_function(wrap_pyfunction!(default_context, m)?)?;
    Ok(())
}
