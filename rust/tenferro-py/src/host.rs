//! [`PyHost`]: what the eager core asks of Python — run a kernel with the GIL released (and on
//! a helper thread, interruptible by Ctrl-C, from [`INTERRUPTIBLE_MIN_WORK`] on), wait for a
//! busy engine while serving signal handlers, check signals between program steps, and the
//! default engine.

use crate::defaults::default_engine_core;
use crate::errors::to_pyerr;
use pyo3::prelude::*;
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tenferro_eager::Host;
use tenferro_ops::Op;
use tenferro_runtime::{Borrow, Engine};
use tenferro_tensor::{Error, Result, Tensor};

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

/// The eager core's host in Python: holds the GIL token and the exception a signal handler
/// raised (returned instead of the core's `Interrupted`).
pub(crate) struct PyHost<'py> {
    py: Python<'py>,
    signal: RefCell<Option<PyErr>>,
}

impl<'py> PyHost<'py> {
    pub(crate) fn new(py: Python<'py>) -> PyHost<'py> {
        PyHost {
            py,
            signal: RefCell::new(None),
        }
    }

    /// A core result as a Python result: the signal handler's exception if one stopped the
    /// work, else the core error's exception.
    pub(crate) fn finish<T>(&self, r: Result<T>) -> PyResult<T> {
        r.map_err(|e| match self.signal.borrow_mut().take() {
            Some(sig) => sig,
            None => to_pyerr(self.py, e),
        })
    }

    /// Run a whole program (`f`, given the host its steps use) of estimated `work`
    /// ([`op_work`] summed over its steps; `heavy` when it factorises) as eager ops run one op:
    /// small programs with the GIL held (releasing it would cost more than they do; signals
    /// are checked between steps), larger ones on this thread with the GIL released for the
    /// whole run ([`InlineHost`]: signals served between steps, each step as large as an
    /// interruptible eager op on a helper thread that Ctrl-C stops).
    ///
    /// # Errors
    /// `f`'s errors; `Interrupted` (the signal handler's exception in [`PyHost::finish`]).
    pub(crate) fn run_program<T>(
        &self,
        op: &str,
        work: usize,
        heavy: bool,
        f: impl FnOnce(&dyn Host) -> Result<T> + Send,
    ) -> Result<T>
    where
        T: Send,
    {
        if !heavy && work < DETACH_MIN_ELEMENTS {
            return f(self);
        }
        let host = InlineHost {
            start: Instant::now(),
            last_check_ns: AtomicU64::new(0),
            signal: Mutex::new(None),
        };
        let r = self.py.detach(|| f(&host));
        match host.signal.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(self.interrupted(op, e)),
            None => r,
        }
    }

    /// Keep `e` (raised by Python while the core waited) to be returned by [`PyHost::finish`].
    fn interrupted(&self, op: &str, e: PyErr) -> Error {
        *self.signal.borrow_mut() = Some(e);
        Error::Interrupted { op: op.to_string() }
    }
}

impl Host for PyHost<'_> {
    fn run(
        &self,
        op: &Op,
        inputs: &[&Tensor],
        job: &mut (dyn FnMut() -> Result<()> + Send),
    ) -> Result<()> {
        // Decompositions and solves cost far more than releasing the GIL.
        if !matches!(op, Op::Linalg(_)) && inputs.iter().all(|t| t.numel() < DETACH_MIN_ELEMENTS) {
            return job();
        }
        match run_detached(self.py, op_work(op, inputs), job) {
            Ok(r) => r,
            Err(e) => Err(self.interrupted(op.name(), e)),
        }
    }

    fn wait_for_engine(
        &self,
        engine: &dyn Engine,
        op: &str,
        timeout: Option<Duration>,
        reentry_is_error: bool,
    ) -> Result<Borrow> {
        match acquire_waiting(self.py, engine, op, timeout, reentry_is_error) {
            Ok(r) => r,
            Err(e) => Err(self.interrupted(op, e)),
        }
    }

    fn checkpoint(&self, op: &str) -> Result<()> {
        self.py.check_signals().map_err(|e| self.interrupted(op, e))
    }

    fn default_engine(&self) -> Result<Arc<dyn Engine>> {
        // Building it can raise (a `CpuThreadError`): that exception reaches the caller.
        default_engine_core(self.py).map_err(|e| self.interrupted("default_engine", e))
    }
}

/// The host of a program running with the GIL released ([`PyHost::run_program`]): steps run
/// on the calling thread (no thread start or wake-up per call, which under load cost more than
/// a mid-size program); at most every [`SIGNAL_POLL`], between steps, it takes the GIL back to
/// run Python's signal handlers, and a step of [`INTERRUPTIBLE_MIN_WORK`] or more runs on a
/// helper thread that Ctrl-C stops, as an eager op does. The engine is already borrowed, so
/// nothing waits for one.
struct InlineHost {
    start: Instant,
    /// When signals were last served, in nanoseconds from `start`.
    last_check_ns: AtomicU64,
    /// The exception a signal handler raised (returned by [`PyHost::run_program`]).
    signal: Mutex<Option<PyErr>>,
}

impl InlineHost {
    fn stopped(&self, op: &str, e: PyErr) -> Error {
        *self.signal.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
        Error::Interrupted { op: op.to_string() }
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

impl Host for InlineHost {
    fn run(
        &self,
        op: &Op,
        inputs: &[&Tensor],
        job: &mut (dyn FnMut() -> Result<()> + Send),
    ) -> Result<()> {
        let work = op_work(op, inputs);
        if work < INTERRUPTIBLE_MIN_WORK {
            return job();
        }
        let r = Python::attach(|py| run_detached(py, work, job));
        self.last_check_ns.store(self.now_ns(), Ordering::Relaxed);
        r.unwrap_or_else(|e| Err(self.stopped(op.name(), e)))
    }

    fn checkpoint(&self, op: &str) -> Result<()> {
        let now = self.now_ns();
        let poll = u64::try_from(SIGNAL_POLL.as_nanos()).unwrap_or(u64::MAX);
        if now.saturating_sub(self.last_check_ns.load(Ordering::Relaxed)) < poll {
            return Ok(());
        }
        self.last_check_ns.store(now, Ordering::Relaxed);
        Python::attach(|py| py.check_signals()).map_err(|e| self.stopped(op, e))
    }

    fn default_engine(&self) -> Result<Arc<dyn Engine>> {
        Err(Error::internal(
            "program",
            "a program running without the GIL resolves no engine",
        ))
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
/// returned as `Err`; the engine stays usable. The helper inherits this thread's CPU mask.
pub(crate) fn run_detached<T: Send>(
    py: Python<'_>,
    work: usize,
    f: impl FnOnce() -> Result<T> + Send,
) -> PyResult<Result<T>> {
    if work < INTERRUPTIBLE_MIN_WORK {
        return Ok(py.detach(f));
    }
    enum Outcome<T> {
        Done(Result<T>),
        Signal(PyErr),
        Panicked(Box<dyn std::any::Any + Send>),
    }
    let flag = Arc::new(AtomicBool::new(false));
    let job = Mutex::new(Some(f));
    let lost = || Error::internal("op", "the helper thread ended without a result");
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
                    return Outcome::Done(match f {
                        Some(f) => f(),
                        None => Err(lost()),
                    });
                }
            };
            loop {
                match rx.recv_timeout(SIGNAL_POLL) {
                    Ok(r) => return Outcome::Done(r),
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        return match handle.join() {
                            Err(payload) => Outcome::Panicked(payload),
                            Ok(()) => Outcome::Done(Err(lost())),
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
        Outcome::Done(r) => Ok(r),
        Outcome::Signal(e) => Err(e),
        Outcome::Panicked(p) => std::panic::resume_unwind(p),
    }
}

/// Borrow `engine` for this thread, waiting with the GIL released up to `timeout` (``None``:
/// forever) and serving signal handlers every [`SIGNAL_POLL`], so Ctrl-C ends the wait (the
/// handler's exception is the `Err`).
fn acquire_waiting(
    py: Python<'_>,
    engine: &dyn Engine,
    op: &str,
    timeout: Option<Duration>,
    reentry_is_error: bool,
) -> PyResult<Result<Borrow>> {
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
            Err(Error::EngineBusy { .. })
                if deadline.is_none_or(|d| std::time::Instant::now() < d) =>
            {
                py.check_signals()?;
            }
            Err(Error::EngineBusy { .. }) => {
                let secs = timeout.unwrap_or_default().as_secs_f64();
                return Ok(Err(Error::engine_busy(
                    op,
                    format!("the engine is held by another thread; gave up after {secs:.3} s"),
                )));
            }
            r => return Ok(r),
        }
    }
}
