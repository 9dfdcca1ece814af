//! The CPU thread policy of `engines.md`: the process-wide default worker count (resolved once,
//! then fixed), CPU affinity (Linux), and building worker pools on a helper thread whose mask is
//! the main thread's snapshot, with per-worker pinning verified by reading the mask back.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tenferro_tensor::{CpuThreadReason, Error, Result};

/// What one worker reported from its start handler.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerInfo {
    /// OS thread id (Linux `gettid`; 0 elsewhere).
    pub tid: i64,
    /// The CPUs the worker may run on, read back from the kernel after pinning (sorted; empty
    /// where the platform does not report affinity).
    pub cpus: Vec<usize>,
}

/// How long an engine's workers keep polling for the next parallel op after one ends, before
/// they park.
///
/// A parked worker is woken through the kernel, and on a virtual machine whose idle vCPUs halt
/// (the 2-core reference machine: `haltpoll` with `guest_halt_poll_ns=0`) that wake-up costs
/// 60–120 µs, measured: an empty `install` costs 4 µs back to back, 18 µs after a 100 µs pause
/// and 117 µs after 1 ms. A 256² f64 GEMM on two workers then took 760 µs after a 1 ms pause
/// against 406 µs back to back, no better than one thread. Polling workers keep their vCPUs
/// awake between the ops of a Python loop, as OpenBLAS's spinning threads do (~0.1 s there).
/// They poll with `yield_now`, so the caller's thread, when it shares a CPU with one, gets it.
/// `TENFERRO_LINGER_US` (read once per process, clamped to [`MAX_LINGER`]) overrides it; `0`
/// parks workers at once.
pub const LINGER: Duration = Duration::from_millis(2);

/// The polling span in microseconds; `u64::MAX` until first read.
static LINGER_US: AtomicU64 = AtomicU64::new(u64::MAX);

/// The longest polling span accepted (larger settings are clamped): 1 s.
pub const MAX_LINGER: Duration = Duration::from_secs(1);

fn clamp_us(span: Duration) -> u64 {
    span.min(MAX_LINGER).as_micros() as u64
}

/// [`LINGER`], or `TENFERRO_LINGER_US` when that is set to a whole number of microseconds (read
/// on first use), or what [`set_linger`] last set; never more than [`MAX_LINGER`].
pub fn linger() -> Duration {
    let us = LINGER_US.load(Ordering::Relaxed);
    if us != u64::MAX {
        return Duration::from_micros(us);
    }
    let span = std::env::var("TENFERRO_LINGER_US")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(LINGER, Duration::from_micros);
    let us = clamp_us(span);
    LINGER_US.store(us, Ordering::Relaxed);
    Duration::from_micros(us)
}

/// Set the polling span of every engine's workers (test and benchmark hook; `0` parks at once;
/// clamped to [`MAX_LINGER`]). Workers already polling finish their current span.
pub fn set_linger(span: Duration) {
    LINGER_US.store(clamp_us(span), Ordering::Relaxed);
}

/// Bumped in the child process after `fork()`: the workers of pools built before it do not exist
/// there, so engines compare the generation they were built in before using their pool.
static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);

#[cfg(target_os = "linux")]
extern "C" fn after_fork_in_child() {
    FORK_GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The current fork generation (see [`FORK_GENERATION`]); the first call registers the
/// `pthread_atfork` child handler that bumps it.
pub(crate) fn fork_generation() -> u64 {
    #[cfg(target_os = "linux")]
    {
        static REGISTER: std::sync::Once = std::sync::Once::new();
        REGISTER.call_once(|| {
            // SAFETY: registers a handler that only increments an atomic (async-signal-safe).
            unsafe {
                libc::pthread_atfork(None, None, Some(after_fork_in_child));
            }
        });
    }
    FORK_GENERATION.load(Ordering::Relaxed)
}

/// State shared by an engine's ops and its polling workers.
#[derive(Debug, Default)]
pub(crate) struct Warmth {
    /// Bumped when a parallel op starts: polling workers stop and take the op's work.
    epoch: AtomicU64,
    /// Parallel ops running now (from any caller thread): workers do not poll during one.
    active: AtomicUsize,
    /// The epoch whose polling jobs were last queued (one generation per op end).
    queued: AtomicU64,
}

/// An engine's worker pool as kernels use it: [`Pool::install`] runs work on the workers and
/// then leaves them polling for [`LINGER`] (see there for why).
#[derive(Clone, Copy)]
pub(crate) struct Pool<'a> {
    pub(crate) pool: &'a rayon::ThreadPool,
    pub(crate) warmth: &'a Arc<Warmth>,
}

impl Pool<'_> {
    /// Run `f` on the workers (as `rayon::ThreadPool::install`), then queue one polling job per
    /// worker if no other parallel op of this engine is running.
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        struct Active<'a>(&'a Warmth);
        impl Drop for Active<'_> {
            fn drop(&mut self) {
                self.0.active.fetch_sub(1, Ordering::AcqRel);
            }
        }
        let w = self.warmth;
        w.active.fetch_add(1, Ordering::AcqRel);
        w.epoch.fetch_add(1, Ordering::AcqRel);
        let r = {
            let _active = Active(w);
            self.pool.install(f)
        };
        self.linger();
        r
    }

    /// [`Pool::install`] with the other workers polling for `f`'s parallel work until `f`
    /// returns ([`with_pollers`]): for the decompositions, whether one matrix runs with faer's
    /// `Par::rayon` (a parallel region per Householder step) or a batch is split over the
    /// workers (the setting in which every batched `bench_linalg` line was measured).
    pub(crate) fn install_polled<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        self.install(|| with_pollers(f))
    }

    fn linger(&self) {
        let span = linger();
        if span.is_zero() {
            return;
        }
        let w = self.warmth;
        let epoch = w.epoch.load(Ordering::Acquire);
        if w.active.load(Ordering::Acquire) != 0 || w.queued.swap(epoch, Ordering::AcqRel) == epoch
        {
            return;
        }
        let w = Arc::clone(w);
        self.pool.spawn_broadcast(move |_| {
            let t0 = Instant::now();
            while w.epoch.load(Ordering::Acquire) == epoch
                && w.active.load(Ordering::Acquire) == 0
                && t0.elapsed() < span
            {
                std::thread::yield_now();
            }
        });
    }
}

/// Run `f` on the current worker while every other worker of its pool polls for the parallel
/// work `f` creates (`rayon::yield_now`) until `f` returns, instead of parking between `f`'s
/// parallel regions.
///
/// Rayon parks an idle worker after a few dozen yields, and a parked worker is woken through the
/// kernel: on the reference VM 60–120 µs each time (see [`LINGER`]), and longer right after the
/// machine idled. A decomposition such as faer's SVD opens a parallel region per Householder step
/// (hundreds per matrix), with sequential work between them that outlasts rayon's spin. A 256²
/// complex SVD on two workers (standalone faer, alternating runs, median of 20): 20.8 → 19.0 ms
/// back to back, 26–27 → 22–23 ms for the first call after a 0.2 s pause (one worker: 23 ms).
/// Only the decompositions poll ([`Pool::install_polled`]): elementwise ops, reductions and GEMMs
/// open one or a few parallel regions, and the einsum benchmark's GEMM-bound lines (targets met
/// without polling) moved more from run to run with polling than in-process A/B runs could
/// resolve. The pollers are scope jobs: an idle worker steals one; one nobody stole is run by `f`'s worker after `f` and returns at once. They poll with
/// `std::thread::yield_now` when no rayon work is pending, so other threads get the CPU. A zero
/// [`linger`] span (`TENFERRO_LINGER_US=0`, for machines shared with other busy processes) turns
/// this polling off too: workers then never busy-wait.
fn with_pollers<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let others = rayon::current_num_threads().saturating_sub(1);
    if others == 0 || linger().is_zero() {
        return f();
    }
    /// Ends the polling even when `f` unwinds (the scope waits for its jobs before re-raising).
    struct Done<'a>(&'a AtomicBool);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let done = AtomicBool::new(false);
    rayon::scope(|s| {
        for _ in 0..others {
            s.spawn(|_| {
                while !done.load(Ordering::Acquire) {
                    if let Some(rayon::Yield::Idle) | None = rayon::yield_now() {
                        std::thread::yield_now();
                    }
                }
            });
        }
        let _done = Done(&done);
        f()
    })
}

/// Linux affinity through `sched_{get,set}affinity` with a dynamically sized mask.
#[cfg(target_os = "linux")]
pub mod affinity {
    use std::io;

    const WORD_BITS: usize = u64::BITS as usize;

    /// The calling thread's OS id.
    pub fn gettid() -> i64 {
        // SAFETY: `gettid` has no preconditions.
        unsafe { libc::syscall(libc::SYS_gettid) as i64 }
    }

    /// The CPUs thread `tid` may run on (`0`: the calling thread), sorted. The mask buffer starts
    /// at 1024 CPUs and doubles while the kernel answers `EINVAL` (its mask is larger), so
    /// machines with more than 1024 CPUs are handled.
    ///
    /// # Errors
    /// The OS error of `sched_getaffinity` (other than the size retry).
    pub fn get(tid: i64) -> io::Result<Vec<usize>> {
        let mut words = 1024 / WORD_BITS;
        loop {
            let mut mask = vec![0u64; words];
            let bytes = words * std::mem::size_of::<u64>();
            // SAFETY: `mask` is `bytes` long and writable; the kernel writes at most `bytes`.
            let rc = unsafe {
                libc::sched_getaffinity(
                    tid as libc::pid_t,
                    bytes,
                    mask.as_mut_ptr().cast::<libc::cpu_set_t>(),
                )
            };
            if rc == 0 {
                return Ok(cpus_of(&mask));
            }
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EINVAL) && words < (1 << 20) {
                words *= 2;
                continue;
            }
            return Err(err);
        }
    }

    /// Restrict thread `tid` (`0`: the calling thread) to `cpus`.
    ///
    /// # Errors
    /// The OS error of `sched_setaffinity` (`EINVAL` when no CPU of the set is usable).
    pub fn set(tid: i64, cpus: &[usize]) -> io::Result<()> {
        let max = cpus.iter().copied().max().unwrap_or(0);
        let words = (max / WORD_BITS + 1).max(1024 / WORD_BITS);
        let mut mask = vec![0u64; words];
        for &c in cpus {
            mask[c / WORD_BITS] |= 1u64 << (c % WORD_BITS);
        }
        let bytes = words * std::mem::size_of::<u64>();
        // SAFETY: `mask` is `bytes` long; the kernel only reads it.
        let rc = unsafe {
            libc::sched_setaffinity(
                tid as libc::pid_t,
                bytes,
                mask.as_ptr().cast::<libc::cpu_set_t>(),
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// The set bits of a mask, ascending.
    pub fn cpus_of(mask: &[u64]) -> Vec<usize> {
        let mut out = Vec::new();
        for (w, &word) in mask.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                out.push(w * WORD_BITS + b);
                bits &= bits - 1;
            }
        }
        out
    }
}

static MAIN_SNAPSHOT: OnceLock<Vec<usize>> = OnceLock::new();

/// Record the calling thread's allowed CPUs as "the main thread's snapshot" (done once, at
/// module import, on the importing thread); later calls keep the first snapshot.
pub fn record_main_snapshot() {
    let _ = allowed_cpus();
}

/// The sorted CPUs the main thread may run on (the snapshot of [`record_main_snapshot`]; taken
/// on first use otherwise). Off Linux: `0..available_parallelism`.
pub fn allowed_cpus() -> &'static [usize] {
    MAIN_SNAPSHOT.get_or_init(|| {
        #[cfg(target_os = "linux")]
        if let Ok(cpus) = affinity::get(0) {
            if !cpus.is_empty() {
                return cpus;
            }
        }
        (0..crate::available_parallelism()).collect()
    })
}

/// The process-wide default of `CpuEngine()`.
struct DefaultPolicy {
    /// Set by [`set_default_cpu_threads`] before the default was fixed.
    requested: Option<usize>,
    /// Fixed by the first successful default construction.
    fixed: Option<usize>,
}

static POLICY: Mutex<DefaultPolicy> = Mutex::new(DefaultPolicy {
    requested: None,
    fixed: None,
});

fn policy() -> std::sync::MutexGuard<'static, DefaultPolicy> {
    POLICY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Validate a worker count given to `op` (every route that names a count: `CpuEngine(threads=)`,
/// `set_default_cpu_threads`): `1..=`[`MAX_THREADS`](crate::MAX_THREADS).
///
/// # Errors
/// [`Error::CpuThread`] with reason `ZeroThreads` for `n < 1`, `Pool` above the limit.
pub fn check_thread_count(op: &str, n: i64) -> Result<usize> {
    let max = crate::MAX_THREADS;
    if n < 1 {
        return Err(Error::cpu_thread(
            op,
            CpuThreadReason::ZeroThreads,
            format!("threads={n}: an engine needs at least one thread"),
        ));
    }
    match usize::try_from(n) {
        Ok(n) if n <= max => Ok(n),
        _ => Err(Error::cpu_thread(
            op,
            CpuThreadReason::Pool,
            format!("threads={n} exceeds the limit of {max} worker threads"),
        )),
    }
}

/// Set the worker count every later `CpuEngine()` (default construction) uses.
///
/// # Errors
/// [`Error::AlreadyInitialized`] once a default construction fixed the count;
/// [`Error::CpuThread`] (`ZeroThreads` for `0`, `Pool` above
/// [`MAX_THREADS`](crate::MAX_THREADS)), see [`check_thread_count`].
pub fn set_default_cpu_threads(n: usize) -> Result<()> {
    let n = check_thread_count(
        "set_default_cpu_threads",
        i64::try_from(n).unwrap_or(i64::MAX),
    )?;
    let mut p = policy();
    if let Some(fixed) = p.fixed {
        return Err(Error::already_initialized(
            "set_default_cpu_threads",
            format!(
                "the default CPU thread count is already fixed at {fixed} by the first \
                 default CpuEngine; call set_default_cpu_threads before creating it"
            ),
        ));
    }
    p.requested = Some(n);
    Ok(())
}

/// The fixed default count, if a default construction happened.
pub fn fixed_default_cpu_threads() -> Option<usize> {
    policy().fixed
}

/// A positive count from an environment variable: `Some(Some(n))` for `n ≥ 1`, `Some(None)`
/// for `0` ("platform default"), `None` when unset or not a number (rayon's rules).
fn env_count(name: &str) -> Option<Option<usize>> {
    let v = std::env::var(name).ok()?;
    match v.trim().parse::<usize>() {
        Ok(0) => Some(None),
        Ok(n) => Some(Some(n)),
        Err(_) => None,
    }
}

/// The environment's count: `RAYON_NUM_THREADS`, then `RAYON_RS_NUM_CPUS`; `None` means the
/// platform default. Mirrors rayon: `0` in `RAYON_NUM_THREADS` means the platform default,
/// garbage there is ignored (the older variable is consulted), `0`/garbage in the older one means
/// the platform default. A count above [`MAX_THREADS`](crate::MAX_THREADS) is clamped to it,
/// with a message for [`take_thread_count_warning`] (once per process).
fn env_threads() -> Option<usize> {
    let (name, n) = match env_count("RAYON_NUM_THREADS") {
        Some(n) => ("RAYON_NUM_THREADS", n),
        None => (
            "RAYON_RS_NUM_CPUS",
            env_count("RAYON_RS_NUM_CPUS").flatten(),
        ),
    };
    let max = crate::MAX_THREADS;
    match n {
        Some(n) if n > max => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                *WARNING.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!(
                    "{name}={n} exceeds the limit of {max} worker threads; the default CPU \
                     engine uses {max}"
                ));
            }
            Some(max)
        }
        n => n,
    }
}

/// Whether the clamping of an environment count was reported (once per process).
static WARNED: AtomicBool = AtomicBool::new(false);
/// The clamping message not yet taken by [`take_thread_count_warning`].
static WARNING: Mutex<Option<String>> = Mutex::new(None);

/// The message of an environment thread count that was clamped to
/// [`MAX_THREADS`](crate::MAX_THREADS), once (the binding turns it into a `RuntimeWarning`).
pub fn take_thread_count_warning() -> Option<String> {
    WARNING.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Run `f` on a short-lived helper thread whose affinity is the main thread's snapshot, so that
/// threads it spawns (pool workers) inherit the process's CPUs even when the caller is pinned.
fn on_helper<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let cpus = allowed_cpus().to_vec();
    std::thread::Builder::new()
        .name("tenferro-pool-builder".into())
        .spawn(move || {
            #[cfg(target_os = "linux")]
            {
                // Best effort: if the snapshot is no longer usable, keep the inherited mask.
                let _ = affinity::set(0, &cpus);
            }
            #[cfg(not(target_os = "linux"))]
            let _ = cpus;
            f()
        })
        .map_err(|e| pool_error(format!("cannot start the pool-builder thread: {e}")))?
        .join()
        .map_err(|_| pool_error("the pool-builder thread panicked".into()))
}

fn pool_error(msg: String) -> Error {
    Error::cpu_thread("CpuEngine", CpuThreadReason::Pool, msg)
}

/// The platform's available parallelism under the main thread's snapshot (and cgroup quotas).
fn platform_threads() -> usize {
    on_helper(crate::available_parallelism).unwrap_or_else(|_| crate::available_parallelism())
}

/// Test hooks (`tf._testing`): make the next pool build / the next affinity handshake fail.
static FAIL_NEXT_POOL: AtomicBool = AtomicBool::new(false);
static FAIL_NEXT_HANDSHAKE: AtomicBool = AtomicBool::new(false);

/// Test hook: the next pool build fails (reason `Pool`).
pub fn fail_next_pool_build() {
    FAIL_NEXT_POOL.store(true, Ordering::SeqCst);
}

/// Test hook: the next pinned worker reports a mask other than its pin (reason `Affinity`).
pub fn fail_next_affinity_handshake() {
    FAIL_NEXT_HANDSHAKE.store(true, Ordering::SeqCst);
}

/// Validate a pin list against the main thread's snapshot.
///
/// # Errors
/// [`Error::CpuThread`] with `EmptyCpuList`, `DuplicateCpu`, `CpuNotAllowed` or
/// `UnsupportedPlatform`.
pub(crate) fn check_pin(pin: &[usize]) -> Result<()> {
    let op = "CpuEngine";
    if !cfg!(target_os = "linux") {
        return Err(Error::cpu_thread(
            op,
            CpuThreadReason::UnsupportedPlatform,
            "pin= is supported on Linux only",
        ));
    }
    if pin.is_empty() {
        return Err(Error::cpu_thread(
            op,
            CpuThreadReason::EmptyCpuList,
            "pin=[]: give at least one CPU",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for &c in pin {
        if !seen.insert(c) {
            return Err(Error::cpu_thread(
                op,
                CpuThreadReason::DuplicateCpu,
                format!("pin={pin:?}: CPU {c} appears more than once"),
            ));
        }
    }
    let allowed = allowed_cpus();
    for &c in pin {
        if allowed.binary_search(&c).is_err() {
            return Err(Error::cpu_thread(
                op,
                CpuThreadReason::CpuNotAllowed,
                format!("pin={pin:?}: CPU {c} is not in tf.allowed_cpus() = {allowed:?}"),
            ));
        }
    }
    Ok(())
}

/// Build a pool of `n` workers (pinned to `pin[i]` when given) on a helper thread; return it with
/// what each worker reported, in worker order.
///
/// # Errors
/// `Pool` if the pool cannot be built or a worker does not report; `Affinity` if a pinned worker
/// cannot be restricted to its CPU or reports another mask.
pub(crate) fn build_pool(
    n: usize,
    pin: Option<Vec<usize>>,
) -> Result<(rayon::ThreadPool, Vec<WorkerInfo>)> {
    if FAIL_NEXT_POOL.swap(false, Ordering::SeqCst) {
        return Err(pool_error(format!(
            "cannot build a pool of {n} threads: injected failure (tenferro._testing)"
        )));
    }
    let fail_handshake = pin.is_some() && FAIL_NEXT_HANDSHAKE.swap(false, Ordering::SeqCst);
    let (tx, rx) = mpsc::channel::<(usize, WorkerInfo, Option<String>)>();
    let pin2 = pin.clone();
    let pool = on_helper(move || {
        let tx = Mutex::new(tx);
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("tenferro-cpu-{i}"))
            .start_handler(move |i| {
                let report = worker_start(i, pin2.as_deref(), fail_handshake);
                if let Ok(tx) = tx.lock() {
                    let _ = tx.send(report);
                }
            })
            .build()
    })?
    .map_err(|e| pool_error(format!("cannot build a pool of {n} threads: {e}")))?;
    let mut infos = vec![WorkerInfo::default(); n];
    for _ in 0..n {
        let (i, info, err) = rx.recv_timeout(Duration::from_secs(30)).map_err(|_| {
            pool_error(format!(
                "a worker of the pool of {n} threads did not report its start"
            ))
        })?;
        if let Some(msg) = err {
            return Err(Error::cpu_thread(
                "CpuEngine",
                CpuThreadReason::Affinity,
                msg,
            ));
        }
        if let Some(pin) = &pin {
            if info.cpus != [pin[i]] {
                return Err(Error::cpu_thread(
                    "CpuEngine",
                    CpuThreadReason::Affinity,
                    format!(
                        "worker {i} was pinned to CPU {} but runs on CPUs {:?}",
                        pin[i], info.cpus
                    ),
                ));
            }
        }
        if let Some(slot) = infos.get_mut(i) {
            *slot = info;
        }
    }
    Ok((pool, infos))
}

/// A worker's start handler: pin (when asked), then report its tid and its mask as read back.
fn worker_start(
    i: usize,
    pin: Option<&[usize]>,
    fail_handshake: bool,
) -> (usize, WorkerInfo, Option<String>) {
    #[cfg(target_os = "linux")]
    {
        let mut err = None;
        if let Some(&cpu) = pin.and_then(|p| p.get(i)) {
            if let Err(e) = affinity::set(0, &[cpu]) {
                err = Some(format!("worker {i} cannot be pinned to CPU {cpu}: {e}"));
            }
        }
        let mut cpus = affinity::get(0).unwrap_or_default();
        if fail_handshake && i == 0 {
            cpus.push(usize::MAX); // what a mis-pinned worker would report
        }
        (
            i,
            WorkerInfo {
                tid: affinity::gettid(),
                cpus,
            },
            err,
        )
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pin, fail_handshake);
        (i, WorkerInfo::default(), None)
    }
}

/// Resolve the default count under the policy lock and run `build(count)`; a successful build
/// that did not fall back fixes the count. `build` returns whether it fell back to serial. Every
/// source is capped at [`MAX_THREADS`](crate::MAX_THREADS): an explicit request is validated
/// when set, the environment is clamped with a warning, the platform count (a machine with
/// more than 1024 CPUs) silently.
pub(crate) fn with_default_count<T>(build: impl FnOnce(usize) -> (T, bool)) -> T {
    let mut p = policy();
    let n = p
        .fixed
        .or(p.requested)
        .or_else(env_threads)
        .unwrap_or_else(platform_threads)
        .clamp(1, crate::MAX_THREADS);
    let (out, fell_back) = build(n);
    if !fell_back {
        p.fixed = Some(n);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    #[test]
    fn masks_of_more_than_1024_cpus() {
        #[cfg(target_os = "linux")]
        {
            let mut mask = vec![0u64; 40];
            mask[0] = 0b101;
            mask[39] = 1 << 63;
            assert_eq!(affinity::cpus_of(&mask), vec![0, 2, 39 * 64 + 63]);
            let me = affinity::get(0).unwrap();
            assert!(!me.is_empty());
            assert!(affinity::set(0, &[5000]).is_err(), "no such CPU");
            assert_eq!(
                affinity::get(0).unwrap(),
                me,
                "a failed set changes nothing"
            );
        }
    }

    #[test]
    fn pollers_run_the_parallel_work_and_stop_when_it_returns_or_unwinds() {
        use std::sync::atomic::AtomicBool;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // The second half of the join can only run on another worker while the first waits for
        // it: the pollers (or woken workers) must take it, and the result comes back.
        let r = pool.install(|| {
            with_pollers(|| {
                let other_ran = AtomicBool::new(false);
                let (a, b) = rayon::join(
                    || {
                        while !other_ran.load(Ordering::Acquire) {
                            std::hint::spin_loop();
                        }
                        1
                    },
                    || {
                        other_ran.store(true, Ordering::Release);
                        2
                    },
                );
                a + b
            })
        });
        assert_eq!(r, 3);
        // Nested parallel ops poll too, and a sum spread over the workers is exact.
        let s = pool.install(|| {
            with_pollers(|| with_pollers(|| (0..10_000u64).into_par_iter().sum::<u64>()))
        });
        assert_eq!(s, 49_995_000);
        // A panic inside the op ends the polling (no hang) and reaches the caller; the pool
        // stays usable.
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.install(|| with_pollers(|| panic!("kernel failed")))
        }));
        assert!(err.is_err());
        assert_eq!(pool.install(|| with_pollers(|| 5)), 5);
        // A one-worker pool runs the op alone.
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        assert_eq!(one.install(|| with_pollers(|| 6)), 6);
    }

    #[test]
    fn pin_validation() {
        assert!(matches!(
            check_pin(&[]),
            Err(Error::CpuThread {
                reason: CpuThreadReason::EmptyCpuList | CpuThreadReason::UnsupportedPlatform,
                ..
            })
        ));
        let c = allowed_cpus()[0];
        if cfg!(target_os = "linux") {
            assert!(matches!(
                check_pin(&[c, c]),
                Err(Error::CpuThread {
                    reason: CpuThreadReason::DuplicateCpu,
                    ..
                })
            ));
            assert!(matches!(
                check_pin(&[usize::MAX]),
                Err(Error::CpuThread {
                    reason: CpuThreadReason::CpuNotAllowed,
                    ..
                })
            ));
            assert!(check_pin(&[c]).is_ok());
        }
    }
}
