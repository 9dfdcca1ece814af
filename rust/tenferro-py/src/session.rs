//! Runtimes, engines, sessions, the context-local mode state, and `dispatch`, the one path by
//! which every Python call reaches `tenferro_runtime::apply`.

use crate::context::ContextInner;
use crate::convert::{dtype_from_py, repr, scalar_tensor, view_of_ndarray, weak_scalar};
use crate::errors::{to_pyerr, PyResultExt};
use crate::tensor::PyTensor;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyModule, PyTuple};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;
use tenferro_ad::{record, record_multi, Var};
use tenferro_cpu::CpuEngine;
use tenferro_ops::{
    BinaryOp, CompareDir, DotGeneralConfig, GatherConfig, LinalgOp, Op, PadConfig, ReduceOp,
    ScatterConfig, SliceConfig, UnaryOp,
};
use tenferro_runtime::{apply, apply_multi, Borrow, Engine, Runtime};
use tenferro_tensor::dtype::scalar_default_dtype;
use tenferro_tensor::shape::normalize_axes;
use tenferro_tensor::{promote, promote_weak, Scalar, Tensor};

/// Elements above which a kernel runs with the GIL released (measured: below this, releasing
/// and re-acquiring the GIL costs more than the kernel).
const DETACH_MIN_ELEMENTS: usize = 1 << 14;

/// Work units (elements, or multiply-adds of a contraction; [`op_work`]) from which an op runs
/// on a helper thread while the calling thread serves Python's signal handlers, so that Ctrl-C
/// stops it (engines.md, "Interrupting an op"). About 1.5 ms of an `add` on one core: the helper
/// (a thread start and one wake-up of the waiting thread, which `threads::LINGER` measured at
/// 60–120 µs on the 2-core VM when the CPU has to be woken) costs a few percent there at most;
/// smaller ops finish within milliseconds, before Ctrl-C could matter.
const INTERRUPTIBLE_MIN_WORK: usize = 1 << 22;

/// How often a thread waiting for an op (or for an engine held by another thread) serves
/// Python's signal handlers.
const SIGNAL_POLL: Duration = Duration::from_millis(10);

/// Timeouts above this many seconds (about 32 years) wait forever: `Instant + Duration` must not
/// overflow, and no caller can tell the difference.
const MAX_TIMEOUT_S: f64 = 1e9;

/// Validate a ``timeout`` argument (seconds): ``None``, ``+inf`` and values above
/// [`MAX_TIMEOUT_S`] wait forever, other values ``≥ 0`` wait that long (``0``: try once).
///
/// # Errors
/// ``ValueError`` for NaN and negative values (``-inf`` included), naming `op` and the value.
pub(crate) fn parse_timeout(op: &str, timeout: Option<f64>) -> PyResult<Option<Duration>> {
    match timeout {
        None => Ok(None),
        Some(t) if t.is_nan() || t < 0.0 => Err(PyValueError::new_err(format!(
            "{op}: timeout must be a number of seconds >= 0 (or None to wait forever), got {t}"
        ))),
        Some(t) if t > MAX_TIMEOUT_S => Ok(None),
        Some(t) => Ok(Some(Duration::from_secs_f64(t))),
    }
}

/// Elements touched by an op, or its multiply-adds (contractions) or ~flops (decompositions).
pub(crate) fn op_work(op: &Op, vals: &[&Tensor]) -> usize {
    let largest = vals.iter().map(|t| t.numel()).max().unwrap_or(0);
    let prod = |t: &Tensor, dims: &[usize]| -> usize {
        dims.iter()
            .map(|&d| t.shape().get(d).copied().unwrap_or(1))
            .product::<usize>()
            .max(1)
    };
    match (op, vals) {
        (Op::DotGeneral(c) | Op::DotGeneralWithConj { config: c, .. }, [l, r]) => {
            let shared = prod(r, &c.rhs_contracting_dims) * prod(r, &c.rhs_batch_dims);
            l.numel().saturating_mul(r.numel() / shared).max(largest)
        }
        (Op::Matmul, [l, r]) => l
            .numel()
            .saturating_mul(r.numel() / prod(r, &[0]))
            .max(largest),
        (Op::Linalg(_), [a, ..]) => {
            let n = a.shape().iter().take(2).copied().max().unwrap_or(1);
            largest.saturating_mul(n)
        }
        _ => largest,
    }
}

/// Run `f` (an op on an engine) with the GIL released. From [`INTERRUPTIBLE_MIN_WORK`] on, `f`
/// runs on a helper thread under a cancellation flag while this thread waits and, every
/// [`SIGNAL_POLL`], takes the GIL back to run Python's signal handlers
/// (``PyErr_CheckSignals``, which acts on the main thread only). When a handler raises
/// (``KeyboardInterrupt`` from Ctrl-C), the flag is set, the kernel stops at its next check
/// (`tenferro_cpu::cancel`), its partial result is dropped, and the handler's exception is
/// returned; the engine stays usable. The helper inherits this thread's CPU mask.
///
/// # Errors
/// `f`'s error, or the exception a signal handler raised.
pub(crate) fn run_detached<T: Send>(
    py: Python<'_>,
    work: usize,
    f: impl FnOnce() -> tenferro_tensor::Result<T> + Send,
) -> PyResult<T> {
    if work < INTERRUPTIBLE_MIN_WORK {
        return py.detach(f).py(py);
    }
    enum Outcome<T> {
        Done(tenferro_tensor::Result<T>),
        Signal(PyErr),
        Panicked(Box<dyn std::any::Any + Send>),
    }
    let flag = Arc::new(AtomicBool::new(false));
    let job = Mutex::new(Some(f));
    let outcome = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let (flag_ref, job_ref) = (&flag, &job);
            let spawned = std::thread::Builder::new()
                .name("tenferro-op".into())
                .spawn_scoped(s, move || {
                    let f = job_ref.lock().unwrap_or_else(|e| e.into_inner()).take();
                    if let Some(f) = f {
                        let _ = tx.send(tenferro_cpu::with_cancel_flag("op", flag_ref, f));
                    }
                });
            let handle = match spawned {
                Ok(h) => h,
                // No thread to spare: run here, without Ctrl-C.
                Err(_) => {
                    let f = job.lock().unwrap_or_else(|e| e.into_inner()).take();
                    return match f {
                        Some(f) => Outcome::Done(f()),
                        None => Outcome::Signal(PyValueError::new_err("op lost")),
                    };
                }
            };
            loop {
                match rx.recv_timeout(SIGNAL_POLL) {
                    Ok(r) => return Outcome::Done(r),
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        return match handle.join() {
                            Err(payload) => Outcome::Panicked(payload),
                            Ok(()) => Outcome::Signal(PyValueError::new_err("op lost")),
                        };
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        if let Err(e) = Python::attach(|py| py.check_signals()) {
                            flag.store(true, Ordering::Relaxed);
                            // The kernel stops at its next check; its result is dropped.
                            let _ = rx.recv();
                            return Outcome::Signal(e);
                        }
                    }
                }
            }
        })
    });
    match outcome {
        Outcome::Done(r) => r.py(py),
        Outcome::Signal(e) => Err(e),
        Outcome::Panicked(p) => std::panic::resume_unwind(p),
    }
}

/// Borrow `engine` for this thread, waiting with the GIL released up to `timeout` (``None``:
/// forever) and serving signal handlers every [`SIGNAL_POLL`], so Ctrl-C ends the wait.
///
/// # Errors
/// ``ReenteredError`` (`reentry_is_error`), ``EngineBusyError`` after `timeout`, or the
/// exception a signal handler raised.
pub(crate) fn acquire_waiting(
    py: Python<'_>,
    engine: &Arc<CpuEngine>,
    op: &str,
    timeout: Option<Duration>,
    reentry_is_error: bool,
) -> PyResult<Borrow> {
    // A deadline past what `Instant` can hold is no deadline (wait forever), never a panic.
    let deadline = timeout.and_then(|t| std::time::Instant::now().checked_add(t));
    loop {
        let slice = match deadline {
            None => 5 * SIGNAL_POLL,
            Some(d) => d
                .saturating_duration_since(std::time::Instant::now())
                .min(5 * SIGNAL_POLL),
        };
        let r = py.detach(|| engine.lending().acquire(op, Some(slice), reentry_is_error));
        match r {
            Err(tenferro_tensor::Error::EngineBusy { .. })
                if deadline.is_none_or(|d| std::time::Instant::now() < d) =>
            {
                py.check_signals()?;
            }
            Err(tenferro_tensor::Error::EngineBusy { .. }) => {
                let secs = timeout.unwrap_or_default().as_secs_f64();
                return Err(to_pyerr(
                    py,
                    tenferro_tensor::Error::engine_busy(
                        op,
                        format!("the engine is held by another thread; gave up after {secs:.3} s"),
                    ),
                ));
            }
            r => return r.py(py),
        }
    }
}

/// `tf.Runtime`: owns AD state (gradient slots, rule sets, caches — with the autodiff issue).
#[pyclass(module = "tenferro", name = "Runtime", frozen, weakref)]
pub struct PyRuntime {
    pub(crate) inner: Runtime,
    /// The execution context that owns this runtime (set once; weak, so a dead context no longer
    /// decides which engine runs the runtime's implicit ops).
    pub(crate) owner: OnceLock<Weak<ContextInner>>,
    /// Tracked leaves of this runtime, held weakly (dead leaves leave no entry behind).
    pub(crate) leaves: Mutex<Vec<std::sync::Weak<tenferro_ad::Node>>>,
}

impl PyRuntime {
    pub(crate) fn fresh() -> PyRuntime {
        PyRuntime {
            inner: Runtime::new(),
            owner: OnceLock::new(),
            leaves: Mutex::new(Vec::new()),
        }
    }

    /// Remember a tracked leaf (weakly; dead entries are pruned on each registration).
    pub(crate) fn register_leaf(&self, leaf: &Arc<tenferro_ad::Node>) {
        let mut v = self.leaves.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|w| w.strong_count() > 0);
        v.push(Arc::downgrade(leaf));
    }

    /// Registry entries (live or not yet pruned).
    pub(crate) fn registry_len(&self) -> usize {
        let mut v = self.leaves.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|w| w.strong_count() > 0);
        v.len()
    }

    /// Visit every live leaf.
    pub(crate) fn for_each_leaf(&self, mut f: impl FnMut(&tenferro_ad::Node)) {
        let v = self.leaves.lock().unwrap_or_else(|e| e.into_inner());
        for n in v.iter().filter_map(|w| w.upgrade()) {
            f(&n);
        }
    }

    /// The engine of the live context owning this runtime (none once `reset_default_engine`
    /// retired that context).
    #[inline]
    pub(crate) fn owner_engine(&self) -> Option<Arc<CpuEngine>> {
        self.owner
            .get()
            .and_then(Weak::upgrade)
            .filter(|c| !c.retired.load(Ordering::Relaxed))
            .map(|c| c.engine.clone())
    }
}

#[pymethods]
impl PyRuntime {
    #[new]
    fn new() -> Self {
        PyRuntime::fresh()
    }

    /// Process-unique id of this runtime.
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id()
    }

    /// An untracked tensor of this runtime holding a copy of `data`.
    fn constant(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let py = slf.py();
        let t = tensor_from_object(py, data, true)?;
        let node = captured_node(py, &t)?;
        Ok(PyTensor::with_node(t, slf.clone().unbind(), node))
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
        PySession::explicit(slf.clone().unbind(), engine, timeout)
    }

    fn __repr__(&self) -> String {
        format!("Runtime(id={})", self.inner.id())
    }
}

impl PySession {
    /// A session lending `engine` to `runtime` (``rt.session`` / ``ctx.session``).
    pub(crate) fn explicit(
        runtime: Py<PyRuntime>,
        engine: Py<PyCpuEngine>,
        timeout: Option<f64>,
    ) -> PyResult<PySession> {
        let timeout = parse_timeout("session", timeout)?;
        Ok(PySession {
            target: Some((runtime, engine)),
            timeout,
            active: AtomicBool::new(false),
            token: Mutex::new(None),
        })
    }
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
#[pyclass(module = "tenferro", name = "CpuEngine", frozen, weakref)]
pub struct PyCpuEngine {
    pub(crate) engine: Arc<CpuEngine>,
}

#[pymethods]
impl PyCpuEngine {
    #[new]
    #[pyo3(signature = (threads=None, pin=None))]
    pub(crate) fn new(
        py: Python<'_>,
        threads: Option<i64>,
        pin: Option<Vec<i64>>,
    ) -> PyResult<Self> {
        let threads = threads
            .map(|n| tenferro_cpu::threads::check_thread_count("CpuEngine", n))
            .transpose()
            .py(py)?;
        let engine = match pin {
            None => {
                let engine = py.detach(|| CpuEngine::new(threads)).py(py)?;
                // A default construction may have clamped RAYON_NUM_THREADS (once a process).
                if let Some(msg) = tenferro_cpu::threads::take_thread_count_warning() {
                    let msg = std::ffi::CString::new(msg).unwrap_or_default();
                    let category = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
                    PyErr::warn(py, &category, &msg, 1)?;
                }
                engine
            }
            Some(pin) => {
                if let Some(n) = threads {
                    if n != pin.len() {
                        return Err(PyValueError::new_err(format!(
                            "CpuEngine: threads={n} differs from len(pin)={} (pin sets one worker per CPU)",
                            pin.len()
                        )));
                    }
                }
                // A negative CPU is never allowed; the message quotes the list as given.
                let cpus = pin
                    .iter()
                    .map(|&c| {
                        usize::try_from(c).map_err(|_| {
                            tenferro_tensor::Error::cpu_thread(
                                "CpuEngine",
                                tenferro_tensor::CpuThreadReason::CpuNotAllowed,
                                format!(
                                    "pin={pin:?}: CPU {c} is not in tf.allowed_cpus() = {:?}",
                                    allowed_cpus()
                                ),
                            )
                        })
                    })
                    .collect::<tenferro_tensor::Result<Vec<usize>>>()
                    .py(py)?;
                py.detach(|| CpuEngine::pinned(&cpus)).py(py)?
            }
        };
        Ok(PyCpuEngine {
            engine: Arc::new(engine),
        })
    }

    /// Number of worker threads (1: serial engine running on the caller's thread).
    #[getter]
    fn num_threads(&self) -> usize {
        self.engine.num_threads()
    }

    /// The CPUs each worker may run on, as the worker read its own mask back when it started
    /// (sorted lists, one per worker; ``[]`` for a serial engine or off Linux).
    #[getter]
    fn worker_cpus(&self) -> Vec<Vec<usize>> {
        self.engine
            .worker_info()
            .iter()
            .map(|w| w.cpus.clone())
            .collect()
    }

    /// OS thread ids of the workers (for ``os.sched_getaffinity(tid)``; ``[]`` when serial).
    #[getter]
    fn worker_tids(&self) -> Vec<i64> {
        self.engine.worker_info().iter().map(|w| w.tid).collect()
    }

    /// Statistics of the engine's buffer pool (``tf.BufferPoolStats``).
    pub(crate) fn buffer_pool_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.engine.buffer_pool().stats();
        crate::imports::get(py).buffer_pool_stats.bind(py).call1((
            s.buffers,
            s.retained_bytes,
            s.capacity_bytes,
            s.hits,
            s.misses,
        ))
    }

    /// Free every buffer retained by the pool.
    fn reset_buffer_pool(&self) {
        self.engine.buffer_pool().reset();
    }

    /// Statistics of the engine's prepared-plan cache (``tf.CacheStats``).
    fn cache_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.engine.plan_cache().stats();
        crate::imports::get(py).cache_stats.bind(py).call1((
            s.entries,
            s.retained_bytes,
            s.hits,
            s.misses,
            s.evictions,
            s.clears,
        ))
    }

    /// Drop every cached plan (statistics keep counting; ``clears`` increments).
    fn clear_caches(&self) {
        self.engine.plan_cache().clear();
    }

    /// Number of contraction operands copied because their axes could not be read in place.
    #[getter]
    fn operand_copies(&self) -> u64 {
        self.engine.operand_copies()
    }

    /// Test hook (``tf._testing``): the next kernel on this engine panics.
    fn _inject_panic_on_next_op(&self) {
        self.engine.inject_panic_on_next_op();
    }

    /// Bound the bytes the pool retains (freeing any excess now).
    fn set_buffer_pool_limit(&self, nbytes: usize) {
        self.engine.buffer_pool().set_limit(nbytes);
    }

    fn __repr__(&self) -> String {
        self.engine.describe()
    }
}

/// Sorted CPUs the main thread may run on (its mask when ``tenferro`` was imported).
///
/// Returns
/// -------
/// list of int
///     CPU numbers usable in ``tf.CpuEngine(pin=...)``.
#[pyfunction]
pub fn allowed_cpus() -> Vec<usize> {
    tenferro_cpu::allowed_cpus().to_vec()
}

/// Fix the worker count of every later default ``tf.CpuEngine()`` (and ``tf.default_engine()``).
///
/// Parameters
/// ----------
/// n : int
///     Worker count, 1 to 1024 (1: serial engines).
///
/// Raises
/// ------
/// tenferro.errors.AlreadyInitializedError
///     A default engine was already built, which fixed the count for the process.
/// tenferro.errors.CpuThreadError
///     ``n`` < 1 (``reason`` ``ZERO_THREADS``) or ``n`` > 1024 (``reason`` ``POOL``: the limit
///     of ``tf.CpuEngine(threads=n)`` too).
#[pyfunction]
pub fn set_default_cpu_threads(py: Python<'_>, n: i64) -> PyResult<()> {
    let n = tenferro_cpu::threads::check_thread_count("set_default_cpu_threads", n).py(py)?;
    tenferro_cpu::set_default_cpu_threads(n).py(py)
}

/// Test and benchmark hook: how long workers poll after a parallel op (µs; 0 parks at once).
#[pyfunction]
pub fn _set_linger_us(us: u64) {
    tenferro_cpu::threads::set_linger(std::time::Duration::from_micros(us));
}

/// Test hook: the next pool build fails.
#[pyfunction]
pub fn _fail_next_pool_build() {
    tenferro_cpu::threads::fail_next_pool_build();
}

/// Test hook: the next pinned pool's worker 0 reports a wrong mask.
#[pyfunction]
pub fn _fail_next_affinity_handshake() {
    tenferro_cpu::threads::fail_next_affinity_handshake();
}

static DEFAULT_RUNTIME: PyOnceLock<Py<PyRuntime>> = PyOnceLock::new();
/// The first default engine; [`reset_default_engine`] installs later ones in [`REPLACEMENT`].
static DEFAULT_ENGINE: PyOnceLock<Py<PyCpuEngine>> = PyOnceLock::new();
/// Set once [`reset_default_engine`] ran: the default engine is then [`REPLACEMENT`]'s.
static REPLACED: AtomicBool = AtomicBool::new(false);
static REPLACEMENT: Mutex<Option<Py<PyCpuEngine>>> = Mutex::new(None);
static STATE_VAR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The process-wide default runtime.
#[pyfunction]
pub fn default_runtime(py: Python<'_>) -> PyResult<Py<PyRuntime>> {
    DEFAULT_RUNTIME
        .get_or_try_init(py, || Py::new(py, PyRuntime::fresh()))
        .map(|r| r.clone_ref(py))
}

/// The default engine's core, for the binding's own use: the implicit-op path reads it once per
/// op, so the common case (no reset yet, engine built) is two loads and one `Arc` clone.
#[inline]
pub(crate) fn default_cpu_engine(py: Python<'_>) -> PyResult<Arc<CpuEngine>> {
    if !REPLACED.load(Ordering::Acquire) {
        if let Some(e) = DEFAULT_ENGINE.get(py) {
            return Ok(e.get().engine.clone());
        }
    }
    Ok(default_engine(py)?.get().engine.clone())
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
        .get_or_try_init(py, || Py::new(py, PyCpuEngine::new(py, None, None)?))
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
    let new = Py::new(py, PyCpuEngine::new(py, None, None)?)?;
    let prev = {
        let mut slot = REPLACEMENT.lock().unwrap_or_else(|e| e.into_inner());
        let prev = slot.replace(new.clone_ref(py));
        REPLACED.store(true, Ordering::Release);
        prev
    };
    drop(prev);
    if let Some(old) = old {
        old.get().engine.buffer_pool().reset();
    }
    crate::context::retire_default_context(py);
    Ok(new)
}

/// The context-local mode state: grad mode flags and the stack of active sessions. Immutable;
/// a new state is set in the ``ContextVar`` on each change.
#[pyclass(module = "tenferro", name = "_ModeState", frozen)]
pub struct ModeState {
    #[pyo3(get)]
    pub(crate) grad_enabled: bool,
    #[pyo3(get)]
    pub(crate) capture_trace: bool,
    pub(crate) sessions: Vec<Py<PySession>>,
}

#[pymethods]
impl ModeState {
    /// Active sessions, innermost last.
    #[getter]
    fn sessions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.sessions.iter().map(|s| s.clone_ref(py)))
    }
}

/// Whether an op is recorded for differentiation: in grad mode, when an operand is tracked or a
/// functional transform captures the trace.
pub(crate) fn records(grad_enabled: bool, capture_trace: bool, any_tracked: bool) -> bool {
    grad_enabled && (any_tracked || capture_trace)
}

/// Under `capture_trace` (and grad mode), a new constant gets an untracked leaf node so that
/// functional transforms can differentiate with respect to it.
pub(crate) fn captured_node(
    py: Python<'_>,
    t: &Tensor,
) -> PyResult<Option<Arc<tenferro_ad::Node>>> {
    let state = current_state(py)?;
    let st = state.get();
    Ok((st.capture_trace && st.grad_enabled).then(|| tenferro_ad::Node::captured_leaf(t)))
}

/// The ``ContextVar`` holding the mode state.
#[pyfunction]
pub fn _state_var(py: Python<'_>) -> PyResult<Py<PyAny>> {
    STATE_VAR
        .get_or_try_init(py, || {
            let init = Py::new(
                py,
                ModeState {
                    grad_enabled: true,
                    capture_trace: false,
                    sessions: Vec::new(),
                },
            )?;
            let cv = crate::imports::get(py).context_var.bind(py);
            let kwargs = pyo3::types::PyDict::new(py);
            kwargs.set_item("default", init)?;
            Ok::<_, PyErr>(cv.call(("tenferro_state",), Some(&kwargs))?.unbind())
        })
        .map(|v| v.clone_ref(py))
}

/// The mode state of the calling context, read once per op (`PyContextVar_Get`, no Python call).
pub(crate) fn current_state(py: Python<'_>) -> PyResult<Bound<'_, ModeState>> {
    let var = match STATE_VAR.get(py) {
        Some(v) => v,
        None => {
            _state_var(py)?;
            STATE_VAR
                .get(py)
                .ok_or_else(|| PyValueError::new_err("tenferro: mode state is not initialised"))?
        }
    };
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

/// A runtime paired with a borrowed engine for a ``with`` block (``rt.session(engine)``), or
/// the implicit session behind ``tf.prim`` (innermost active session, else the tensors'
/// runtime and the default engine, borrowed per op).
#[pyclass(module = "tenferro", name = "Session", frozen)]
pub struct PySession {
    target: Option<(Py<PyRuntime>, Py<PyCpuEngine>)>,
    timeout: Option<Duration>,
    active: AtomicBool,
    token: Mutex<Option<Py<PyAny>>>,
}

/// What an op runs on.
pub(crate) struct Exec {
    pub(crate) runtime: Py<PyRuntime>,
    pub(crate) engine: Arc<CpuEngine>,
    /// Release the engine after the op (implicit borrow).
    pub(crate) release: bool,
}

impl Drop for Exec {
    fn drop(&mut self) {
        if self.release {
            self.engine.lending().release();
        }
    }
}

enum Operand<'py> {
    /// A tensor argument, borrowed from its Python object.
    T(Bound<'py, PyTensor>),
    /// A NumPy array or other array-like, adopted as a constant.
    Adopted(Tensor),
    /// A weak Python scalar.
    S(Scalar),
}

/// Convert anything array-like to a tensor (copying unless `share`), via NumPy.
pub(crate) fn tensor_from_object(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    copy: bool,
) -> PyResult<Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = t.get().tensor.clone();
        return if copy { contiguous_copy(py, &t) } else { Ok(t) };
    }
    let arr = crate::imports::get(py)
        .as_supported_ndarray
        .bind(py)
        .call1((obj,))?;
    let view = view_of_ndarray(py, &arr)?;
    if copy {
        contiguous_copy(py, &view)
    } else {
        Ok(view)
    }
}

fn contiguous_copy(py: Python<'_>, t: &Tensor) -> PyResult<Tensor> {
    let e = default_cpu_engine(py)?;
    let t = t.clone();
    if t.numel() >= DETACH_MIN_ELEMENTS {
        run_detached(py, t.numel(), || e.contiguous_copy(&t))
    } else {
        e.contiguous_copy(&t).py(py)
    }
}

impl PySession {
    /// The implicit session of `tf.prim`.
    pub(crate) fn implicit() -> PySession {
        PySession {
            target: None,
            timeout: None,
            active: AtomicBool::new(true),
            token: Mutex::new(None),
        }
    }

    /// Resolve runtime and engine for an op with the given tensor runtimes.
    pub(crate) fn resolve(
        &self,
        py: Python<'_>,
        name: &str,
        first_rt: Option<&Py<PyRuntime>>,
        state: &Bound<'_, ModeState>,
    ) -> PyResult<Exec> {
        if let Some((rt, eng)) = &self.target {
            if !self.active.load(Ordering::Acquire) {
                return Err(to_pyerr(
                    py,
                    tenferro_tensor::Error::SessionInactive { op: name.into() },
                ));
            }
            return Ok(Exec {
                runtime: rt.clone_ref(py),
                engine: eng.get().engine.clone(),
                release: false,
            });
        }
        // Implicit: the innermost active session of this context; else the engine of the context
        // owning the first tensor's runtime (while it lives); else the default context's.
        // The innermost *active* session (a session exited out of order stays in outer
        // snapshots of the stack but is skipped).
        if let Some(s) = state
            .get()
            .sessions
            .iter()
            .rev()
            .find(|s| s.get().active.load(Ordering::Acquire))
        {
            return s.get().resolve(py, name, first_rt, state);
        }
        let (runtime, owned) = match first_rt {
            Some(r) => (r.clone_ref(py), r.get().owner_engine()),
            None => (default_runtime(py)?, None),
        };
        let engine = match owned {
            Some(e) => e,
            None => default_cpu_engine(py)?,
        };
        let borrow = match engine.lending().acquire(name, Some(Duration::ZERO), false) {
            Ok(b) => b,
            Err(_) => acquire_waiting(py, &engine, name, None, false)?,
        };
        Ok(Exec {
            runtime,
            engine,
            release: borrow == Borrow::Acquired,
        })
    }

    /// Run `op` on Python operands (tensors, weak Python scalars, array-likes).
    pub(crate) fn dispatch(
        &self,
        py: Python<'_>,
        op: Op,
        args: &[&Bound<'_, PyAny>],
    ) -> PyResult<PyTensor> {
        let mut outs = self.dispatch_n(py, op, args)?;
        outs.pop()
            .ok_or_else(|| PyValueError::new_err("op produced no output"))
    }

    /// Run an op with several outputs (a decomposition) and return them as a tuple.
    pub(crate) fn dispatch_tuple<'py>(
        &self,
        py: Python<'py>,
        op: Op,
        args: &[&Bound<'_, PyAny>],
    ) -> PyResult<Bound<'py, PyTuple>> {
        let outs = self.dispatch_n(py, op, args)?;
        let objs = outs
            .into_iter()
            .map(|t| Py::new(py, t))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, objs)
    }

    /// Run `op` (any number of outputs) on Python operands.
    pub(crate) fn dispatch_n(
        &self,
        py: Python<'_>,
        op: Op,
        args: &[&Bound<'_, PyAny>],
    ) -> PyResult<Vec<PyTensor>> {
        let name = op.name();
        let mut operands: Vec<Operand<'_>> = Vec::with_capacity(args.len());
        let mut first_rt: Option<&Py<PyRuntime>> = None;
        for a in args {
            if let Ok(t) = a.cast::<PyTensor>() {
                operands.push(Operand::T(t.clone()));
            } else if let Some(s) = weak_scalar(a)? {
                operands.push(Operand::S(s));
            } else {
                operands.push(Operand::Adopted(tensor_from_object(py, a, false)?));
            }
        }
        for o in &operands {
            if let Operand::T(t) = o {
                first_rt = Some(&t.get().runtime);
                break;
            }
        }
        let state = current_state(py)?;
        let exec = self.resolve(py, name, first_rt, &state)?;
        // Every tensor must belong to the op's runtime.
        for (i, o) in operands.iter().enumerate() {
            if let Operand::T(t) = o {
                let rt = &t.get().runtime;
                if !rt.is(&exec.runtime) {
                    return Err(to_pyerr(
                        py,
                        tenferro_tensor::Error::context_mismatch(
                            name,
                            format!(
                                "operand {i} belongs to runtime {} but the op runs on runtime {}",
                                rt.get().inner.id(),
                                exec.runtime.get().inner.id()
                            ),
                        ),
                    ));
                }
            }
        }
        // Weak scalars adopt the dtype of the tensor operands they are combined with.
        let data_from = usize::from(matches!(op, Op::Select));
        let common = operands
            .iter()
            .skip(data_from)
            .filter_map(|o| match o {
                Operand::T(t) => Some(t.get().tensor.dtype()),
                Operand::Adopted(t) => Some(t.dtype()),
                Operand::S(_) => None,
            })
            .reduce(promote);
        let mut scalars: Vec<Option<Tensor>> = Vec::with_capacity(operands.len());
        for (i, o) in operands.iter().enumerate() {
            scalars.push(match o {
                Operand::S(s) => {
                    let d = match (i >= data_from, common) {
                        (true, Some(c)) => promote_weak(c, s.kind()),
                        _ => scalar_default_dtype(s.kind()),
                    };
                    Some(scalar_tensor(name, *s, d)?)
                }
                _ => None,
            });
        }
        let refs: Vec<&Tensor> = operands
            .iter()
            .zip(&scalars)
            .map(|(o, s)| match (o, s) {
                (Operand::T(t), _) => Some(&t.get().tensor),
                (Operand::Adopted(t), _) => Some(t),
                (Operand::S(_), s) => s.as_ref(),
            })
            .collect::<Option<_>>()
            .ok_or_else(|| {
                PyValueError::new_err(format!("{name}: scalar operand not converted"))
            })?;
        let engine: &CpuEngine = &exec.engine;
        let outs: Vec<Tensor> = if matches!(op, Op::Linalg(_)) {
            // Decompositions and solves cost far more than releasing the GIL.
            run_detached(py, op_work(&op, &refs), || apply_multi(engine, &op, &refs))?
        } else if refs.iter().any(|t| t.numel() >= DETACH_MIN_ELEMENTS) {
            vec![run_detached(py, op_work(&op, &refs), || {
                apply(engine, &op, &refs)
            })?]
        } else {
            vec![apply(engine, &op, &refs).py(py)?]
        };
        let st = state.get();
        let any_node = operands
            .iter()
            .any(|o| matches!(o, Operand::T(t) if t.get().node().is_some()));
        if records(st.grad_enabled, st.capture_trace, any_node) {
            let vars: Vec<Var> = operands
                .iter()
                .zip(&refs)
                .map(|(o, t)| match o {
                    Operand::T(pt) => input_var(pt.get(), st.capture_trace),
                    _ => Var::constant((*t).clone()),
                })
                .collect();
            let vs = if op.num_outputs() == 1 {
                let mut outs = outs;
                let out = outs
                    .pop()
                    .ok_or_else(|| PyValueError::new_err("op produced no output"))?;
                vec![record(&op, vars, out, st.capture_trace)]
            } else {
                record_multi(&op, vars, outs, st.capture_trace)
            };
            return Ok(vs
                .into_iter()
                .map(|v| PyTensor::with_node(v.value, exec.runtime.clone_ref(py), v.node))
                .collect());
        }
        Ok(outs
            .into_iter()
            .map(|out| PyTensor::new(out, exec.runtime.clone_ref(py)))
            .collect())
    }
}

/// A tensor argument as AD sees it. Under `capture_trace` every consumed tensor becomes an
/// identifiable (untracked) leaf.
pub(crate) fn input_var(pt: &PyTensor, capture: bool) -> Var {
    let node = if capture {
        Some(
            pt.node
                .get_or_init(|| tenferro_ad::Node::captured_leaf(&pt.tensor))
                .clone(),
        )
    } else {
        pt.node().cloned()
    };
    Var {
        value: pt.tensor.clone(),
        node,
    }
}

fn parse_axes(
    py: Python<'_>,
    op: &str,
    axes: Option<&Bound<'_, PyAny>>,
    ndim: usize,
) -> PyResult<Vec<usize>> {
    let raw: Vec<i64> = match axes {
        None => return Ok((0..ndim).collect()),
        Some(a) if a.is_none() => return Ok((0..ndim).collect()),
        Some(a) => {
            if let Ok(i) = a.extract::<i64>() {
                vec![i]
            } else {
                a.extract::<Vec<i64>>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{op}: axes must be None, an int or a sequence of ints, got {}",
                        repr(a)
                    ))
                })?
            }
        }
    };
    normalize_axes(op, &raw, ndim).py(py)
}

fn parse_shape(op: &str, shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if let Ok(n) = shape.extract::<i64>() {
        return to_usize_dims(op, &[n]);
    }
    let v: Vec<i64> = shape.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: shape must be an int or a sequence of ints, got {}",
            repr(shape)
        ))
    })?;
    to_usize_dims(op, &v)
}

fn to_usize_dims(op: &str, v: &[i64]) -> PyResult<Vec<usize>> {
    v.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                PyValueError::new_err(format!(
                    "{op}: negative dimensions are not allowed, got {v:?}"
                ))
            })
        })
        .collect()
}

fn parse_compare_dir(dir: &Bound<'_, PyAny>) -> PyResult<CompareDir> {
    let name: Option<String> = dir
        .extract::<String>()
        .ok()
        .or_else(|| dir.getattr("name").ok().and_then(|n| n.extract().ok()));
    name.as_deref().and_then(CompareDir::parse).ok_or_else(|| {
        PyValueError::new_err(format!(
            "compare: direction must be one of EQ, NE, LT, LE, GT, GE (case-insensitive), got {}",
            repr(dir)
        ))
    })
}

fn ndim_of(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(t) = a.cast::<PyTensor>() {
        return Ok(t.get().tensor.ndim());
    }
    crate::imports::get(py)
        .np_ndim
        .bind(py)
        .call1((a,))?
        .extract()
}

fn attr_dims(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
    field: &str,
) -> PyResult<Vec<usize>> {
    let v = cfg.getattr(field).map_err(|_| {
        PyTypeError::new_err(format!("{op}: config {} has no field {field}", repr(cfg)))
    })?;
    let raw: Vec<i64> = v.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: {field} must be a sequence of ints, got {}",
            repr(&v)
        ))
    })?;
    raw.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                to_pyerr(
                    py,
                    tenferro_tensor::Error::axis(
                        op,
                        format!("{field} {raw:?} has a negative entry {d}"),
                    ),
                )
            })
        })
        .collect()
}

fn attr_i64s(op: &str, cfg: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<i64>> {
    let v = cfg.getattr(field).map_err(|_| {
        PyTypeError::new_err(format!("{op}: config {} has no field {field}", repr(cfg)))
    })?;
    v.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: {field} must be a sequence of ints, got {}",
            repr(&v)
        ))
    })
}

/// `index_vector_dim` of a gather/scatter config for `indices` of rank `rank`: in `0..=rank`
/// (`rank` means an implicit trailing index vector of length 1), or negative, counted from the
/// end of the indices' axes (`-1` is the last axis).
fn index_vector_dim_of(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
    rank: usize,
) -> PyResult<usize> {
    let v: i64 = cfg
        .getattr("index_vector_dim")?
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{op}: index_vector_dim must be an int")))?;
    let n = rank as i64;
    if v < -n || v > n {
        return Err(to_pyerr(
            py,
            tenferro_tensor::Error::axis(
                op,
                format!("index_vector_dim {v} is out of bounds for indices of rank {rank} (allowed: -{rank}..={rank})"),
            ),
        ));
    }
    Ok(if v < 0 { v + n } else { v } as usize)
}

/// Axis-list field `field` of a primitive's config: entries index the dimensions of a tensor of
/// rank `rank` and may be negative (counted from the end, as `reduce_sum`'s axes); an entry out
/// of range or repeated is an `AxisError` that quotes the entries as the user gave them.
fn attr_axes(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
    field: &str,
    rank: usize,
) -> PyResult<Vec<usize>> {
    let raw = attr_i64s(op, cfg, field)?;
    axes_arg(py, op, field, &raw, rank)
}

/// The one rule for axis and permutation parameters of primitives (`ops.md`): each entry may be
/// negative (counted from the end of the rank it indexes); out of range or repeated entries are
/// `AxisError`s naming the parameter and quoting the values as given.
fn axes_arg(
    py: Python<'_>,
    op: &str,
    what: &str,
    raw: &[i64],
    rank: usize,
) -> PyResult<Vec<usize>> {
    tenferro_tensor::shape::normalize_axes(op, raw, rank)
        .map_err(|e| {
            let msg = e.to_string();
            let detail = msg.strip_prefix(&format!("{op}: ")).unwrap_or(&msg);
            tenferro_tensor::Error::axis(op, format!("{what} {raw:?}: {detail}"))
        })
        .py(py)
}

/// `DotGeneralConfig` of a user call: dims may be negative, relative to each operand's rank.
fn dot_config_for(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
    lhs: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
) -> PyResult<DotGeneralConfig> {
    let (ln, rn) = (ndim_of(py, lhs)?, ndim_of(py, rhs)?);
    let c = DotGeneralConfig {
        lhs_contracting_dims: attr_axes(py, op, cfg, "lhs_contracting_dims", ln)?,
        rhs_contracting_dims: attr_axes(py, op, cfg, "rhs_contracting_dims", rn)?,
        lhs_batch_dims: attr_axes(py, op, cfg, "lhs_batch_dims", ln)?,
        rhs_batch_dims: attr_axes(py, op, cfg, "rhs_batch_dims", rn)?,
    };
    // A role overlap that only shows once negative entries are normalised, quoted as given.
    for side in ["lhs", "rhs"] {
        let (batch, contracting) = if side == "lhs" {
            (&c.lhs_batch_dims, &c.lhs_contracting_dims)
        } else {
            (&c.rhs_batch_dims, &c.rhs_contracting_dims)
        };
        if let Some(d) = batch.iter().find(|d| contracting.contains(d)) {
            let bf = format!("{side}_batch_dims");
            let cf = format!("{side}_contracting_dims");
            return Err(to_pyerr(
                py,
                tenferro_tensor::Error::axis(
                    op,
                    format!(
                        "{bf} {:?} and {cf} {:?} both name dimension {d} of the {side} operand (rank {})",
                        attr_i64s(op, cfg, &bf)?,
                        attr_i64s(op, cfg, &cf)?,
                        if side == "lhs" { ln } else { rn },
                    ),
                ),
            ));
        }
    }
    Ok(c)
}

/// A dimension-number field StableHLO wants increasing: sorted once normalised, else an
/// `AxisError` quoting the entries as given.
fn sorted_axes(
    py: Python<'_>,
    op: &str,
    field: &str,
    raw: &[i64],
    rank: usize,
) -> PyResult<Vec<usize>> {
    let v = axes_arg(py, op, field, raw, rank)?;
    if v.windows(2).any(|w| w[0] >= w[1]) {
        return Err(to_pyerr(
            py,
            tenferro_tensor::Error::axis(
                op,
                format!("{field} {raw:?} must be increasing (StableHLO), counting negative entries from the end of rank {rank}"),
            ),
        ));
    }
    Ok(v)
}

/// The two axes of `extract_diag`/`embed_diag`, normalised; naming one axis twice is an
/// `AxisError` quoting both as given.
fn diag_axes(
    py: Python<'_>,
    op: &str,
    axis_a: i64,
    axis_b: i64,
    rank: usize,
) -> PyResult<(usize, usize)> {
    let (a, b) = (
        axis_of(py, op, axis_a, rank)?,
        axis_of(py, op, axis_b, rank)?,
    );
    if a == b {
        return Err(to_pyerr(
            py,
            tenferro_tensor::Error::axis(
                op,
                format!("axes ({axis_a}, {axis_b}) both name axis {a} of rank {rank}; they must be distinct"),
            ),
        ));
    }
    Ok((a, b))
}

/// `DotGeneralConfig` of a planner-emitted step (non-negative dims only).
pub(crate) fn dot_config(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
) -> PyResult<DotGeneralConfig> {
    Ok(DotGeneralConfig {
        lhs_contracting_dims: attr_dims(py, op, cfg, "lhs_contracting_dims")?,
        rhs_contracting_dims: attr_dims(py, op, cfg, "rhs_contracting_dims")?,
        lhs_batch_dims: attr_dims(py, op, cfg, "lhs_batch_dims")?,
        rhs_batch_dims: attr_dims(py, op, cfg, "rhs_batch_dims")?,
    })
}

fn axis_of(py: Python<'_>, op: &str, axis: i64, ndim: usize) -> PyResult<usize> {
    tenferro_tensor::shape::normalize_axis(op, axis, ndim).py(py)
}

fn real_factor(op: &str, f: &Bound<'_, PyAny>) -> PyResult<f64> {
    if f.is_instance_of::<pyo3::types::PyComplex>() {
        return Err(PyTypeError::new_err(format!(
            "{op}: factor must be real, got {}",
            repr(f)
        )));
    }
    f.extract::<f64>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: factor must be a real number, got {}",
            repr(f)
        ))
    })
}

macro_rules! session_methods {
    (unary: [$($u:ident => $U:ident),*], binary: [$($b:ident => $B:ident),*], reduce: [$($r:ident => $R:ident),*]) => {
        #[pymethods]
        impl PySession {
            $(
                #[doc = concat!("Primitive `", stringify!($u), "`, elementwise (ops.md, unary family).\n\n",
                    "Parameters\n----------\nx : Tensor, array_like or Python scalar\n    Any shape; a dtype admitted by the catalog row (``tf.prim.CATALOG``).\n\n",
                    "Returns\n-------\nTensor\n    Same shape and dtype (``abs`` of complex is real).\n\n",
                    "Raises\n------\ntenferro.errors.DTypeError\n    If the dtype is not admitted (the message names the op and the dtype).")]
                fn $u(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    self.dispatch(py, Op::Unary(UnaryOp::$U), &[x])
                }
            )*
            $(
                #[doc = concat!("Primitive `", stringify!($b), "`, elementwise with NumPy broadcasting (ops.md, binary family).\n\n",
                    "Parameters\n----------\nx, y : Tensor, array_like or Python scalar\n    Broadcast-compatible shapes; dtypes promoted by the lattice (Python scalars are weak).\n\n",
                    "Returns\n-------\nTensor\n    The broadcast shape and the promoted dtype. Integer ``div``/``rem`` truncate toward zero.\n\n",
                    "Raises\n------\ntenferro.errors.ShapeError\n    Shapes that do not broadcast.\ntenferro.errors.DTypeError\n    A promoted dtype the op does not admit.\nZeroDivisionError\n    Integer ``div``/``rem`` by zero.\nValueError\n    Integer ``pow`` with a negative exponent.")]
                fn $b(&self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    self.dispatch(py, Op::Binary(BinaryOp::$B), &[x, y])
                }
            )*
            $(
                #[doc = concat!("Primitive `", stringify!($r), "` over ``axes`` (ops.md, reductions).\n\n",
                    "Parameters\n----------\nx : Tensor or array_like\n    Any shape.\naxes : None, int or sequence of int\n    Axes to reduce (negative allowed); ``None`` reduces all, ``()`` keeps the shape.\n\n",
                    "Returns\n-------\nTensor\n    ``x``'s shape without ``axes``; the dtype is kept. Float sums are pairwise.\n\n",
                    "Raises\n------\ntenferro.errors.AxisError\n    An axis out of range or repeated.\ntenferro.errors.DTypeError\n    A dtype the reduction does not admit.\nValueError\n    ``reduce_max``/``reduce_min`` over an empty axis.")]
                #[pyo3(signature = (x, axes=None))]
                fn $r(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axes: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                    let axes = parse_axes(py, stringify!($r), axes, ndim_of(py, x)?)?;
                    self.dispatch(py, Op::Reduce { op: ReduceOp::$R, axes }, &[x])
                }
            )*

            /// `compare(x, y, direction)` → bool; direction is a ``tf.CompareDir`` or its name.
            fn compare(&self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, direction: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let d = parse_compare_dir(direction)?;
                self.dispatch(py, Op::Compare(d), &[x, y])
            }

            /// `select(pred, on_true, on_false)` (broadcasting).
            fn select(&self, py: Python<'_>, pred: &Bound<'_, PyAny>, on_true: &Bound<'_, PyAny>, on_false: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Select, &[pred, on_true, on_false])
            }

            /// Alias of ``select``.
            fn where_select(&self, py: Python<'_>, pred: &Bound<'_, PyAny>, on_true: &Bound<'_, PyAny>, on_false: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Select, &[pred, on_true, on_false])
            }

            /// `clamp(x, lo, hi)` = `min(max(x, lo), hi)`, NaN-propagating.
            fn clamp(&self, py: Python<'_>, x: &Bound<'_, PyAny>, lo: &Bound<'_, PyAny>, hi: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Clamp, &[x, lo, hi])
            }

            /// Checked conversion up the promotion lattice (``DTypeError`` otherwise).
            fn convert(&self, py: Python<'_>, x: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let d = dtype_from_py(py, "convert", dtype)?;
                self.dispatch(py, Op::Convert(d), &[x])
            }

            /// Lossy conversion (float→int truncates, complex→real drops the imaginary part).
            fn cast(&self, py: Python<'_>, x: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let d = dtype_from_py(py, "cast", dtype)?;
                self.dispatch(py, Op::Cast(d), &[x])
            }

            /// `transpose(x, perm)`: output axis ``i`` is input axis ``perm[i]`` (a view).
            fn transpose(&self, py: Python<'_>, x: &Bound<'_, PyAny>, perm: Vec<i64>) -> PyResult<PyTensor> {
                let perm = axes_arg(py, "transpose", "perm", &perm, ndim_of(py, x)?)?;
                self.dispatch(py, Op::Transpose(perm), &[x])
            }

            /// Column-major `reshape(x, shape)` (a view when the strides allow).
            fn reshape(&self, py: Python<'_>, x: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let s = parse_shape("reshape", shape)?;
                self.dispatch(py, Op::Reshape(s), &[x])
            }

            /// StableHLO `broadcast_in_dim(x, shape, dims)`: input axis ``i`` → output axis ``dims[i]``.
            fn broadcast_in_dim(&self, py: Python<'_>, x: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>, dims: Vec<i64>) -> PyResult<PyTensor> {
                let s = parse_shape("broadcast_in_dim", shape)?;
                let d = axes_arg(py, "broadcast_in_dim", "dims", &dims, s.len())?;
                self.dispatch(py, Op::BroadcastInDim { shape: s, dims: d }, &[x])
            }

            /// `reverse(x, axes)` (a view with negative strides).
            fn reverse(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axes: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let axes = parse_axes(py, "reverse", Some(axes), ndim_of(py, x)?)?;
                self.dispatch(py, Op::Reverse(axes), &[x])
            }

            /// StableHLO ``slice(x, tf.SliceConfig(starts=, limits=, strides=None))`` (a view).
            ///
            /// Raises ``ShapeError`` for ranks/limits that do not fit ``x``.
            fn slice(&self, py: Python<'_>, x: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let starts = attr_dims(py, "slice", config, "starts")?;
                let limits = attr_dims(py, "slice", config, "limits")?;
                let strides = match config.getattr("strides") {
                    Ok(v) if !v.is_none() => attr_dims(py, "slice", config, "strides")?,
                    _ => vec![1; starts.len()],
                };
                self.dispatch(py, Op::Slice(SliceConfig { starts, limits, strides }), &[x])
            }

            /// ``pad(x, tf.PadConfig(edge_padding_low=, edge_padding_high=, interior_padding=))``
            /// with zeros; negative edges crop.
            fn pad(&self, py: Python<'_>, x: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let c = PadConfig {
                    low: attr_i64s("pad", config, "edge_padding_low")?,
                    high: attr_i64s("pad", config, "edge_padding_high")?,
                    interior: attr_dims(py, "pad", config, "interior_padding")?,
                };
                self.dispatch(py, Op::Pad(c), &[x])
            }

            /// ``dynamic_slice(x, starts, sizes)``: ``starts`` a rank-1 integer tensor; starts clamp.
            fn dynamic_slice(&self, py: Python<'_>, x: &Bound<'_, PyAny>, starts: &Bound<'_, PyAny>, sizes: Vec<i64>) -> PyResult<PyTensor> {
                let sizes = to_usize_dims("dynamic_slice", &sizes)?;
                self.dispatch(py, Op::DynamicSlice { sizes }, &[x, starts])
            }

            /// ``dynamic_update_slice(x, update, starts)``: ``update`` written at clamped starts.
            fn dynamic_update_slice(&self, py: Python<'_>, x: &Bound<'_, PyAny>, update: &Bound<'_, PyAny>, starts: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::DynamicUpdateSlice, &[x, update, starts])
            }

            /// ``concatenate(xs, axis)``: tensors of equal rank joined along ``axis`` (promoted dtype).
            fn concatenate(&self, py: Python<'_>, xs: &Bound<'_, PyAny>, axis: i64) -> PyResult<PyTensor> {
                let items: Vec<Bound<'_, PyAny>> = xs.try_iter()?.collect::<PyResult<_>>()?;
                if items.is_empty() {
                    return Err(PyValueError::new_err("concatenate: need at least one tensor"));
                }
                let ax = axis_of(py, "concatenate", axis, ndim_of(py, &items[0])?)?;
                let refs: Vec<&Bound<'_, PyAny>> = items.iter().collect();
                self.dispatch(py, Op::Concatenate { axis: ax }, &refs)
            }

            /// StableHLO ``gather(x, indices, tf.GatherConfig(...))``; out-of-bounds starts clamp.
            fn gather(&self, py: Python<'_>, x: &Bound<'_, PyAny>, indices: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let (xn, inn) = (ndim_of(py, x)?, ndim_of(py, indices)?);
                let index_vector_dim = index_vector_dim_of(py, "gather", config, inn)?;
                let offset = attr_i64s("gather", config, "offset_dims")?;
                // Output rank: the batch axes of `indices` (all but the index vector) + the offsets.
                let out_rank = inn - usize::from(index_vector_dim < inn) + offset.len();
                let c = GatherConfig {
                    offset_dims: sorted_axes(py, "gather", "offset_dims", &offset, out_rank)?,
                    collapsed_slice_dims: attr_axes(py, "gather", config, "collapsed_slice_dims", xn)?,
                    start_index_map: attr_axes(py, "gather", config, "start_index_map", xn)?,
                    index_vector_dim,
                    slice_sizes: attr_dims(py, "gather", config, "slice_sizes")?,
                };
                self.dispatch(py, Op::Gather(c), &[x, indices])
            }

            /// StableHLO ``scatter(x, indices, updates, tf.ScatterConfig(...))`` adding at
            /// duplicates; windows leaving ``x`` are dropped.
            fn scatter(&self, py: Python<'_>, x: &Bound<'_, PyAny>, indices: &Bound<'_, PyAny>, updates: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let (xn, inn, un) = (ndim_of(py, x)?, ndim_of(py, indices)?, ndim_of(py, updates)?);
                let c = ScatterConfig {
                    update_window_dims: sorted_axes(py, "scatter", "update_window_dims", &attr_i64s("scatter", config, "update_window_dims")?, un)?,
                    inserted_window_dims: sorted_axes(py, "scatter", "inserted_window_dims", &attr_i64s("scatter", config, "inserted_window_dims")?, xn)?,
                    scatter_dims_to_operand_dims: attr_axes(py, "scatter", config, "scatter_dims_to_operand_dims", xn)?,
                    index_vector_dim: index_vector_dim_of(py, "scatter", config, inn)?,
                };
                self.dispatch(py, Op::Scatter(c), &[x, indices, updates])
            }

            /// ``extract_diag(x, axis_a=0, axis_b=1)``: the diagonal takes ``axis_a``'s place,
            /// ``axis_b`` disappears (a view).
            #[pyo3(signature = (x, axis_a=0, axis_b=1))]
            fn extract_diag(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis_a: i64, axis_b: i64) -> PyResult<PyTensor> {
                let nd = ndim_of(py, x)?;
                let (a, b) = diag_axes(py, "extract_diag", axis_a, axis_b, nd)?;
                self.dispatch(py, Op::ExtractDiag { a, b }, &[x])
            }

            /// ``embed_diag(x, axis_a=0, axis_b=1)``: inverse of ``extract_diag``; ``axis_b`` is
            /// re-inserted (output coordinates), zeros off the diagonal.
            #[pyo3(signature = (x, axis_a=0, axis_b=1))]
            fn embed_diag(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis_a: i64, axis_b: i64) -> PyResult<PyTensor> {
                let nd = ndim_of(py, x)? + 1;
                let (a, b) = diag_axes(py, "embed_diag", axis_a, axis_b, nd)?;
                self.dispatch(py, Op::EmbedDiag { a, b }, &[x])
            }

            /// ``tril(x, k=0)`` on axes 0 (rows) and 1 (columns): keeps ``j - i <= k``.
            #[pyo3(signature = (x, k=0))]
            fn tril(&self, py: Python<'_>, x: &Bound<'_, PyAny>, k: i64) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Tril(k), &[x])
            }

            /// ``triu(x, k=0)`` on axes 0 (rows) and 1 (columns): keeps ``j - i >= k``.
            #[pyo3(signature = (x, k=0))]
            fn triu(&self, py: Python<'_>, x: &Bound<'_, PyAny>, k: i64) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Triu(k), &[x])
            }

            /// ``dot_general(lhs, rhs, tf.DotGeneralConfig(...))``: output axes
            /// ``[lhs free…, rhs free…, batch…]`` (batch last). GEMM through faer.
            fn dot_general(&self, py: Python<'_>, lhs: &Bound<'_, PyAny>, rhs: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let c = dot_config_for(py, "dot_general", config, lhs, rhs)?;
                self.dispatch(py, Op::DotGeneral(c), &[lhs, rhs])
            }

            /// ``dot_general`` of the conjugated flagged operands (no copy: faer reads the
            /// conjugate in place).
            fn dot_general_with_conj(&self, py: Python<'_>, lhs: &Bound<'_, PyAny>, rhs: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>, lhs_conj: bool, rhs_conj: bool) -> PyResult<PyTensor> {
                let c = dot_config_for(py, "dot_general_with_conj", config, lhs, rhs)?;
                self.dispatch(py, Op::DotGeneralWithConj { config: c, lhs_conj, rhs_conj }, &[lhs, rhs])
            }

            /// Rank-2 ``matmul(a, b)`` (``tf.matmul`` / ``@`` give NumPy batching).
            fn matmul(&self, py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Matmul, &[a, b])
            }

            /// ``scale_real(x, factor)``: multiply by a real Python number (integers round the
            /// product; for bool a zero factor gives False).
            fn scale_real(&self, py: Python<'_>, x: &Bound<'_, PyAny>, factor: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let f = real_factor("scale_real", factor)?;
                self.dispatch(py, Op::ScaleReal(f), &[x])
            }

            /// ``scale_complex(x, factor)``: multiply a complex tensor by a complex number.
            fn scale_complex(&self, py: Python<'_>, x: &Bound<'_, PyAny>, factor: num_complex::Complex64) -> PyResult<PyTensor> {
                self.dispatch(py, Op::ScaleComplex(factor), &[x])
            }

            /// ``svd(a, full_matrices=True, eps=1e-12)`` → ``(U, S, Vh)`` with ``a = U·diag(S)·Vh``;
            /// matrices on axes 0, 1, batch axes last (``tf.linalg.svd`` has NumPy's layout).
            /// ``eps`` broadens the inverse gaps of the derivative rules.
            #[pyo3(signature = (a, full_matrices=true, eps=1e-12))]
            fn svd<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>, full_matrices: bool, eps: f64) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Svd { full_matrices, eps }), &[a])
            }

            /// ``qr(a, complete=False)`` → ``(Q, R)``, ``R`` with a non-negative real diagonal
            /// (batch axes last).
            #[pyo3(signature = (a, complete=false))]
            fn qr<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>, complete: bool) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Qr { complete }), &[a])
            }

            /// ``eigh(a, eps=1e-12)`` → ``(w, V)`` from the lower triangle, ``w`` ascending
            /// (batch axes last).
            #[pyo3(signature = (a, eps=1e-12))]
            fn eigh<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>, eps: f64) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Eigh { eps }), &[a])
            }

            /// ``svdvals(a)`` → ``S`` (real, non-increasing, batch axes last) without computing
            /// singular vectors; its derivative rules recompute ``svd``.
            fn svdvals(&self, py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::Svdvals), &[a])
            }

            /// ``eigvalsh(a)`` → ``w`` (real, ascending, batch axes last) of the Hermitian matrix
            /// of the lower triangle, without eigenvectors; its derivative rules recompute ``eigh``.
            fn eigvalsh(&self, py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::Eigvalsh), &[a])
            }

            /// Whether an op on ``x`` here would be recorded for differentiation (grad mode and
            /// ``x`` tracked, or a transform capturing the trace).
            fn _records(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<bool> {
                let state = current_state(py)?;
                let st = state.get();
                let tracked = x
                    .cast::<PyTensor>()
                    .is_ok_and(|t| t.get().node().is_some());
                Ok(records(st.grad_enabled, st.capture_trace, tracked))
            }

            /// ``eig(a)`` → complex ``(w, V)`` (batch axes last).
            fn eig<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Eig), &[a])
            }

            /// ``cholesky(a)``: lower factor of the Hermitian matrix given by the lower triangle.
            fn cholesky(&self, py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::Cholesky), &[a])
            }

            /// ``lu(a)`` → ``(P, L, U)`` with ``a = P·L·U`` (batch axes last).
            fn lu<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Lu), &[a])
            }

            /// ``solve(a, b)``: ``x`` with ``a·x = b`` (``b`` a matrix; batch axes last).
            fn solve(&self, py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::Solve), &[a, b])
            }

            /// ``triangular_solve(a, b, lower=True)``: ``x`` with ``tri(a)·x = b``.
            #[pyo3(signature = (a, b, lower=true))]
            fn triangular_solve(&self, py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, lower: bool) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::TriangularSolve { lower }), &[a, b])
            }

            /// ``slogdet(a)`` → ``(sign, logabsdet)`` (batch axes last).
            fn slogdet<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Slogdet), &[a])
            }

            /// An untracked tensor of the session's runtime holding a copy of ``data``.
            fn constant(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let state = current_state(py)?;
                let exec = self.resolve(py, "constant", None, &state)?;
                let t = tensor_from_object(py, data, true)?;
                let node = captured_node(py, &t)?;
                Ok(PyTensor::with_node(t, exec.runtime.clone_ref(py), node))
            }

            fn __enter__(slf: &Bound<'_, Self>) -> PyResult<Py<Self>> {
                let py = slf.py();
                let this = slf.get();
                let Some((_, eng)) = &this.target else {
                    return Err(PyTypeError::new_err("the implicit session cannot be entered"));
                };
                let engine = eng.get().engine.clone();
                if this.active.load(Ordering::Acquire) {
                    return Err(to_pyerr(py, tenferro_tensor::Error::reentered("Session.__enter__", "this session is already active")));
                }
                match engine.lending().acquire("session", Some(Duration::ZERO), true) {
                    Ok(_) => {}
                    Err(tenferro_tensor::Error::Reentered { .. }) => {
                        return Err(to_pyerr(py, tenferro_tensor::Error::reentered("session", "this engine is already lent to a session on this thread; nest sessions on different engines instead")));
                    }
                    Err(_) => {
                        acquire_waiting(py, &engine, "session", this.timeout, true)?;
                    }
                }
                let state = current_state(py)?;
                let st = state.get();
                let mut sessions: Vec<Py<PySession>> = st.sessions.iter().map(|s| s.clone_ref(py)).collect();
                sessions.push(slf.clone().unbind());
                let new_state = Py::new(py, ModeState { grad_enabled: st.grad_enabled, capture_trace: st.capture_trace, sessions })?;
                let token = match _state_var(py)?.bind(py).call_method1("set", (new_state,)) {
                    Ok(t) => t,
                    Err(e) => {
                        engine.lending().release();
                        return Err(e);
                    }
                };
                *this.token.lock().unwrap_or_else(|e| e.into_inner()) = Some(token.unbind());
                this.active.store(true, Ordering::Release);
                Ok(slf.clone().unbind())
            }

            #[pyo3(signature = (*_args))]
            fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
                let token = self.token.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some((_, eng)) = &self.target {
                    if self.active.swap(false, Ordering::AcqRel) {
                        eng.get().engine.lending().release();
                    }
                }
                if let Some(tok) = token {
                    _state_var(py)?.bind(py).call_method1("reset", (tok,))?;
                }
                Ok(false)
            }

            /// The session's runtime (``None`` for the implicit session).
            #[getter]
            fn runtime(&self, py: Python<'_>) -> Option<Py<PyRuntime>> {
                self.target.as_ref().map(|(r, _)| r.clone_ref(py))
            }

            /// The session's engine (``None`` for the implicit session).
            #[getter]
            fn engine(&self, py: Python<'_>) -> Option<Py<PyCpuEngine>> {
                self.target.as_ref().map(|(_, e)| e.clone_ref(py))
            }

            fn __repr__(&self) -> String {
                match &self.target {
                    Some((r, e)) => format!("Session(runtime={}, engine={})", r.get().inner.id(), e.get().engine.describe()),
                    None => "Session(implicit)".to_string(),
                }
            }
        }
    };
}

session_methods!(
    unary: [neg => Neg, conj => Conj, abs => Abs, sign => Sign, exp => Exp, log => Log, sin => Sin,
            cos => Cos, tanh => Tanh, sqrt => Sqrt, rsqrt => Rsqrt, expm1 => Expm1, log1p => Log1p,
            erf => Erf],
    binary: [add => Add, sub => Sub, mul => Mul, div => Div, rem => Rem, pow => Pow,
             maximum => Maximum, minimum => Minimum],
    reduce: [reduce_sum => Sum, reduce_prod => Prod, reduce_max => Max, reduce_min => Min,
             reduce_sum_squares => SumSquares]
);

/// The implicit session object used by ``tf.prim``.
#[pyfunction]
pub fn _implicit_session() -> PySession {
    PySession::implicit()
}

/// Register the classes and functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRuntime>()?;
    m.add_class::<PyCpuEngine>()?;
    m.add_class::<PySession>()?;
    m.add_class::<ModeState>()?;
    m.add_function(wrap_pyfunction!(default_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(default_engine, m)?)?;
    m.add_function(wrap_pyfunction!(reset_default_engine, m)?)?;
    m.add_function(wrap_pyfunction!(allowed_cpus, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_cpu_threads, m)?)?;
    m.add_function(wrap_pyfunction!(_fail_next_pool_build, m)?)?;
    m.add_function(wrap_pyfunction!(_set_linger_us, m)?)?;
    m.add_function(wrap_pyfunction!(_fail_next_affinity_handshake, m)?)?;
    m.add_function(wrap_pyfunction!(_state_var, m)?)?;
    m.add_function(wrap_pyfunction!(_implicit_session, m)?)?;
    Ok(())
}
