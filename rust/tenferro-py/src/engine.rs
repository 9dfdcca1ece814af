//! `tf.CpuEngine`'s methods and the process-wide CPU thread settings (engines.md, thread
//! policy). The only module besides `classes.rs` that names the CPU engine type: this is where
//! one is constructed and configured.

use crate::classes::PyCpuEngine;
use crate::errors::PyResultExt;
use crate::imports;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyModule;
use std::sync::Arc;
use tenferro_cpu::CpuEngine;
use tenferro_runtime::Engine;

/// Whether the CPU engine executes primitive `kind` (no engine is built).
pub(crate) fn cpu_supports(kind: tenferro_ops::OpKind) -> bool {
    tenferro_cpu::supports(kind)
}

/// Every CPU engine the binding built, held weakly (``tf.clear_caches()`` clears their plan
/// caches); dead entries are pruned on each registration.
static ENGINES: std::sync::Mutex<Vec<std::sync::Weak<CpuEngine>>> =
    std::sync::Mutex::new(Vec::new());

fn register_engine(e: &Arc<CpuEngine>) {
    let mut v = ENGINES.lock().unwrap_or_else(|e| e.into_inner());
    v.retain(|w| w.strong_count() > 0);
    v.push(Arc::downgrade(e));
}

/// Every live engine the binding built.
pub(crate) fn live_engines() -> Vec<Arc<CpuEngine>> {
    ENGINES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(std::sync::Weak::upgrade)
        .collect()
}

/// Clear the plan cache (einsum programs, GEMM plans, prepared graphs) of every live engine
/// (part of ``tf.clear_caches()``); each cache's ``clears`` counts it.
#[pyfunction]
pub fn _clear_engine_caches() {
    for e in live_engines() {
        e.plan_cache().clear();
    }
}

/// A default construction (``tf.CpuEngine()``), as the default engine is built.
pub(crate) fn default_construction(py: Python<'_>) -> PyResult<PyCpuEngine> {
    PyCpuEngine::new(py, None, None)
}

#[pymethods]
impl PyCpuEngine {
    #[new]
    #[pyo3(signature = (threads=None, pin=None))]
    fn new(py: Python<'_>, threads: Option<i64>, pin: Option<Vec<i64>>) -> PyResult<Self> {
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
        let cpu = Arc::new(engine);
        register_engine(&cpu);
        Ok(PyCpuEngine { cpu })
    }

    /// Number of worker threads (1: serial engine running on the caller's thread).
    #[getter]
    fn num_threads(&self) -> usize {
        self.cpu.num_threads()
    }

    /// The CPUs each worker may run on, as the worker read its own mask back when it started
    /// (sorted lists, one per worker; ``[]`` for a serial engine or off Linux).
    #[getter]
    fn worker_cpus(&self) -> Vec<Vec<usize>> {
        self.cpu
            .worker_info()
            .iter()
            .map(|w| w.cpus.clone())
            .collect()
    }

    /// OS thread ids of the workers (for ``os.sched_getaffinity(tid)``; ``[]`` when serial).
    #[getter]
    fn worker_tids(&self) -> Vec<i64> {
        self.cpu.worker_info().iter().map(|w| w.tid).collect()
    }

    /// Statistics of the engine's buffer pool (``tf.BufferPoolStats``).
    pub(crate) fn buffer_pool_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self.cpu.buffer_pool().stats();
        imports::get(py)?.buffer_pool_stats.bind(py).call1((
            s.buffers,
            s.retained_bytes,
            s.capacity_bytes,
            s.hits,
            s.misses,
            s.live,
            s.peak_live,
            s.live_bytes,
            s.peak_live_bytes,
        ))
    }

    /// Free every buffer retained by the pool.
    fn reset_buffer_pool(&self) {
        self.cpu.buffer_pool().reset();
    }

    /// Restart the peaks of ``buffer_pool_stats()`` (``peak_live_bytes``,
    /// ``peak_live_buffers``) from the buffers live now, to measure one computation's peak.
    fn reset_peak_memory_stats(&self) {
        self.cpu.buffer_pool().reset_peak_live();
    }

    /// Statistics of the engine's prepared-plan cache (``tf.CacheStats``).
    fn cache_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        imports::cache_stats(py, &self.cpu.plan_cache().stats())
    }

    /// Drop every cached plan (statistics keep counting; ``clears`` increments).
    fn clear_caches(&self) {
        self.cpu.plan_cache().clear();
    }

    /// Number of contraction operands copied because their axes could not be read in place.
    #[getter]
    fn operand_copies(&self) -> u64 {
        self.cpu.operand_copies()
    }

    /// Test hook (``tf._testing``): the next kernel on this engine panics.
    fn _inject_panic_on_next_op(&self) {
        self.cpu.inject_panic_on_next_op();
    }

    /// Bound the bytes the pool retains (freeing any excess now).
    fn set_buffer_pool_limit(&self, nbytes: usize) {
        self.cpu.buffer_pool().set_limit(nbytes);
    }

    fn __repr__(&self) -> String {
        self.cpu.describe()
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

/// Test hook: the CPU kernel level of the engine's own vector kernels (small GEMM, batched
/// small products): ``(selected, available)`` names (``"scalar"``, ``"avx2"``, ``"avx512"``).
#[pyfunction]
pub fn _cpu_kernels() -> (&'static str, Vec<&'static str>) {
    use tenferro_cpu::small_gemm;
    (
        small_gemm::selected().name(),
        small_gemm::available().iter().map(|i| i.name()).collect(),
    )
}

/// Test hook: force one of the available kernel levels (``None``: the widest available again).
/// Raises ``ValueError`` for a name this CPU cannot run.
#[pyfunction]
#[pyo3(signature = (name=None))]
pub fn _set_cpu_kernel(name: Option<&str>) -> PyResult<()> {
    use tenferro_cpu::small_gemm;
    let isa = match name {
        None => None,
        Some(n) => Some(small_gemm::Isa::parse(n).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "_set_cpu_kernel: unknown kernel {n:?} (scalar, avx2, avx512)"
            ))
        })?),
    };
    small_gemm::force(isa).map_err(|k| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "_set_cpu_kernel: this CPU cannot run the {k} kernel"
        ))
    })
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

/// Register the class and functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCpuEngine>()?;
    m.add_function(wrap_pyfunction!(allowed_cpus, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_cpu_threads, m)?)?;
    m.add_function(wrap_pyfunction!(_fail_next_pool_build, m)?)?;
    m.add_function(wrap_pyfunction!(_set_linger_us, m)?)?;
    m.add_function(wrap_pyfunction!(_cpu_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(_set_cpu_kernel, m)?)?;
    m.add_function(wrap_pyfunction!(_fail_next_affinity_handshake, m)?)?;
    m.add_function(wrap_pyfunction!(_clear_engine_caches, m)?)?;
    Ok(())
}
