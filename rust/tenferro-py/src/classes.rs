//! The Python classes' Rust layouts, each a handle on an eager-core object, and their plain
//! constructors. Their `#[pymethods]` live in the file named after the class (`tensor.rs`,
//! `runtime.rs`, `engine.rs`, `session.rs`, `mode.rs`, `context.rs`); this module is below all of
//! them, so the binding's modules import each other without a cycle.

use pyo3::prelude::*;
use pyo3::types::PyWeakrefReference;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tenferro_cpu::CpuEngine;
use tenferro_eager::{Context, EagerTensor, ModeState as CoreMode, Runtime, Session};
use tenferro_runtime::Engine;
use tenferro_tensor::Tensor;

/// A dense, immutable tensor (see ``tenferro`` docs).
// Layout: an eager-core tensor (value, runtime, node).
#[pyclass(module = "tenferro", name = "Tensor", frozen, weakref)]
pub struct PyTensor {
    pub(crate) inner: EagerTensor,
}

impl std::ops::Deref for PyTensor {
    type Target = EagerTensor;

    #[inline]
    fn deref(&self) -> &EagerTensor {
        &self.inner
    }
}

impl From<EagerTensor> for PyTensor {
    #[inline]
    fn from(inner: EagerTensor) -> PyTensor {
        PyTensor { inner }
    }
}

impl PyTensor {
    /// An untracked tensor of `runtime`.
    pub(crate) fn new(value: Tensor, runtime: Arc<Runtime>) -> PyTensor {
        EagerTensor::of_data(value, runtime, None).into()
    }
}

/// `tf.Runtime()`: AD state — a process-unique id and the tracked leaves with their gradient
/// slots. Tensors belong to one runtime; mixing runtimes in one op is a
/// ``ContextMismatchError``.
#[pyclass(module = "tenferro", name = "Runtime", frozen, weakref)]
pub struct PyRuntime {
    pub(crate) inner: Arc<Runtime>,
}

/// Python objects of live core runtimes, by runtime id, held weakly. A `Runtime` object is
/// registered when it is made by the binding or first handed to it (`rt.variable`,
/// `runtime=rt`, ...), so `x.runtime is rt` holds for as long as the user holds `rt`; a runtime
/// whose object died gets a new object when asked again.
static RUNTIME_OBJECTS: Mutex<Option<HashMap<u64, Py<PyWeakrefReference>>>> = Mutex::new(None);

/// Remember `obj` as the Python object of its core runtime unless a live one is registered;
/// returns the core runtime.
pub(crate) fn register_runtime(obj: &Bound<'_, PyRuntime>) -> PyResult<Arc<Runtime>> {
    let py = obj.py();
    let rt = obj.get().inner.clone();
    let mut map = RUNTIME_OBJECTS.lock().unwrap_or_else(|e| e.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    let live = map
        .get(&rt.id())
        .is_some_and(|w| w.bind(py).upgrade().is_some());
    if !live {
        map.retain(|_, w| w.bind(py).upgrade().is_some());
        map.insert(rt.id(), PyWeakrefReference::new(obj)?.unbind());
    }
    Ok(rt)
}

/// The Python object of `rt`: the registered live one, else a new registered one.
pub(crate) fn runtime_object(py: Python<'_>, rt: &Arc<Runtime>) -> PyResult<Py<PyRuntime>> {
    {
        let map = RUNTIME_OBJECTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(w) = map.as_ref().and_then(|m| m.get(&rt.id())) {
            if let Some(obj) = w.bind(py).upgrade_as::<PyRuntime>()? {
                return Ok(obj.unbind());
            }
        }
    }
    let obj = Bound::new(py, PyRuntime { inner: rt.clone() })?;
    register_runtime(&obj)?;
    Ok(obj.unbind())
}

/// `tf.CpuEngine(threads=None, pin=None)`: a CPU engine (engines.md, thread policy).
///
/// Parameters
/// ----------
/// threads : int, optional
///     Number of workers. ``None``: the process default (``tf.set_default_cpu_threads``, else
///     ``RAYON_NUM_THREADS``, else ``RAYON_RS_NUM_CPUS``, else the available parallelism under
///     the main thread's affinity mask and cgroup quota), fixed by the first such construction.
///     ``1`` gives a serial engine that runs on the caller's thread.
/// pin : sequence of int, optional
///     Pin worker ``i`` to CPU ``pin[i]`` (Linux), verified by reading each worker's mask back.
///     ``threads``, when also given, must equal ``len(pin)``.
///
/// Raises
/// ------
/// tenferro.errors.CpuThreadError
///     ``reason`` ``ZERO_THREADS`` (``threads`` < 1), ``EMPTY_CPU_LIST``, ``DUPLICATE_CPU``,
///     ``CPU_NOT_ALLOWED`` (not in ``tf.allowed_cpus()``), ``UNSUPPORTED_PLATFORM`` (``pin``
///     off Linux), ``AFFINITY`` (a worker failed its pin handshake), ``POOL`` (an explicit pool
///     could not be built; a default construction falls back to a serial engine instead).
/// ValueError
///     ``threads`` differs from ``len(pin)``.
// Layout: the only place the binding holds the CPU engine type, for construction and
// CPU-specific configuration; everything else takes `PyCpuEngine::engine()`, a `dyn Engine`.
#[pyclass(module = "tenferro", name = "CpuEngine", frozen, weakref)]
pub struct PyCpuEngine {
    pub(crate) cpu: Arc<CpuEngine>,
}

impl PyCpuEngine {
    /// The engine as the core sees it.
    #[inline]
    pub(crate) fn engine(&self) -> Arc<dyn Engine> {
        self.cpu.clone()
    }
}

/// A runtime paired with a borrowed engine for a ``with`` block (``rt.session(engine)``), or
/// the implicit session behind ``tf.prim`` (innermost active session, else the tensors'
/// runtime and the default engine, borrowed per op).
#[pyclass(module = "tenferro", name = "Session", frozen)]
pub struct PySession {
    pub(crate) core: Arc<Session>,
    /// The Python objects of an explicit session's runtime and engine (its getters).
    pub(crate) target: Option<(Py<PyRuntime>, Py<PyCpuEngine>)>,
    /// The `ContextVar` token of `__enter__` and the state it set; `__exit__` resets the token
    /// while that state is still the current one.
    pub(crate) token: Mutex<Option<(Py<PyAny>, Py<PyAny>)>>,
}

impl PySession {
    /// A session lending `engine` to `runtime` (`rt.session`, `ctx.session`).
    pub(crate) fn explicit(
        runtime: Py<PyRuntime>,
        engine: Py<PyCpuEngine>,
        timeout: Option<std::time::Duration>,
    ) -> PySession {
        let core = Session::explicit(runtime.get().inner.clone(), engine.get().engine(), timeout);
        PySession {
            core: Arc::new(core),
            target: Some((runtime, engine)),
            token: Mutex::new(None),
        }
    }

    /// The implicit session (`tf.prim`, operators).
    pub(crate) fn implicit() -> PySession {
        PySession {
            core: Arc::new(Session::implicit()),
            target: None,
            token: Mutex::new(None),
        }
    }
}

/// The context-local mode state (`_ModeState`): the core's flags and session stack, plus the
/// stack's Python objects. Immutable; a new state is set in the `ContextVar` on each change.
#[pyclass(module = "tenferro", name = "_ModeState", frozen)]
pub struct ModeState {
    pub(crate) core: CoreMode,
    pub(crate) sessions: Vec<Py<PySession>>,
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
    pub(crate) engine: Py<PyCpuEngine>,
    pub(crate) runtime: Py<PyRuntime>,
    pub(crate) core: Arc<Context>,
}

impl PyExecutionContext {
    /// Pair `engine` with `runtime` (a runtime keeps its first context).
    pub(crate) fn build(engine: Py<PyCpuEngine>, runtime: Py<PyRuntime>) -> PyExecutionContext {
        let core = Context::new(runtime.get().inner.clone(), engine.get().engine());
        PyExecutionContext {
            engine,
            runtime,
            core,
        }
    }
}
