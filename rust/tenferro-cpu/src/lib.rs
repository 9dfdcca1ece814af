//! The CPU engine of tenferro: strided kernels for every primitive of this release, run on the
//! engine's own rayon pool (never rayon's global pool) above a measured work threshold, with a
//! per-engine buffer pool for outputs.

// Matches over op kinds (and every other enum) are exhaustive: a new variant must be routed
// by hand, never caught by a plausible default (issue 17).
#![deny(clippy::wildcard_enum_match_arm)]
// Strided loops index several parallel arrays (shape, per-operand strides, offsets) by axis.
#![allow(clippy::needless_range_loop)]

pub mod cancel;
mod contraction;
mod elementwise;
mod fft;
mod hyperbolic;
mod linalg;
mod map;
pub mod math;
mod reduce;
pub mod small_gemm;
mod sort;
mod strided;
mod structural;
pub mod threads;
pub mod vmath;

pub use tenferro_runtime::{CacheStats, PlanCache};

pub use cancel::with_cancel_flag;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use tenferro_ops::{Op, OutMeta};
use tenferro_runtime::{Engine, Lending};
use tenferro_tensor::storage::DEFAULT_POOL_LIMIT;
use tenferro_tensor::{BufferPool, Error, Result, Tensor};
pub use threads::{allowed_cpus, record_main_snapshot, set_default_cpu_threads, WorkerInfo};

/// Upper bound on explicit worker counts (checked before any thread is spawned).
pub const MAX_THREADS: usize = 1024;

/// The CPU engine: a worker pool (absent for a serial engine), a buffer pool and lending state.
pub struct CpuEngine {
    pub(crate) pool: Option<rayon::ThreadPool>,
    /// Shared with the workers' polling jobs (see [`threads::LINGER`]).
    warmth: Arc<threads::Warmth>,
    /// The fork generation the pool was built in: in a child process forked later its workers
    /// do not exist, and the engine runs inline instead.
    generation: u64,
    pub(crate) threads: usize,
    workers: Vec<WorkerInfo>,
    pub(crate) buffer_pool: Arc<BufferPool>,
    pub(crate) plan_cache: PlanCache,
    /// Operands `dot_general` had to copy because their axes could not be merged.
    pub(crate) operand_copies: AtomicU64,
    lending: Lending,
    broken: Mutex<Option<String>>,
    /// Whether `broken` holds a reason: every op reads this flag (one load), not the mutex.
    is_broken: std::sync::atomic::AtomicBool,
    /// Test hook: panic inside the next `execute` (see `tf._testing`).
    panic_next: std::sync::atomic::AtomicBool,
}

/// The platform's available parallelism (honours the calling thread's affinity mask and cgroup
/// quotas).
pub fn available_parallelism() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl CpuEngine {
    /// An engine with `threads` workers; one thread gives a serial engine that runs on the
    /// caller's thread. `None` is the default construction of `engines.md`: the count set by
    /// [`set_default_cpu_threads`], else `RAYON_NUM_THREADS` / `RAYON_RS_NUM_CPUS`, else the
    /// available parallelism under the main thread's CPU snapshot; the first success fixes it for
    /// the process. A default construction whose pool cannot be built falls back to a serial
    /// engine without fixing the count.
    ///
    /// # Errors
    /// [`Error::CpuThread`] with reason `ZeroThreads` for `Some(0)`, `Pool` if an explicit pool
    /// cannot be built.
    ///
    /// # Examples
    /// ```
    /// let e = tenferro_cpu::CpuEngine::new(Some(1)).unwrap();
    /// assert!(e.worker_info().is_empty()); // serial: no workers
    /// ```
    pub fn new(threads: Option<usize>) -> Result<CpuEngine> {
        let threads = threads
            .map(|n| threads::check_thread_count("CpuEngine", i64::try_from(n).unwrap_or(i64::MAX)))
            .transpose()?;
        match threads {
            Some(1) => Ok(CpuEngine::serial()),
            Some(n) => {
                let (pool, workers) = threads::build_pool(n, None)?;
                Ok(CpuEngine::from_parts(Some(pool), n, workers))
            }
            None => Ok(threads::with_default_count(|n| {
                if n == 1 {
                    return (CpuEngine::serial(), false);
                }
                match threads::build_pool(n, None) {
                    Ok((pool, workers)) => (CpuEngine::from_parts(Some(pool), n, workers), false),
                    Err(_) => (CpuEngine::serial(), true),
                }
            })),
        }
    }

    /// An engine whose worker `i` is pinned to CPU `cpus[i]`, each pin verified by reading the
    /// worker's mask back from the kernel.
    ///
    /// # Errors
    /// [`Error::CpuThread`] with reason `EmptyCpuList`, `DuplicateCpu`, `CpuNotAllowed` (not in
    /// [`allowed_cpus`]), `UnsupportedPlatform` (not Linux), `Affinity` (a worker failed its
    /// handshake) or `Pool`.
    pub fn pinned(cpus: &[usize]) -> Result<CpuEngine> {
        threads::check_pin(cpus)?;
        let (pool, workers) = threads::build_pool(cpus.len(), Some(cpus.to_vec()))?;
        Ok(CpuEngine::from_parts(Some(pool), cpus.len(), workers))
    }

    fn serial() -> CpuEngine {
        CpuEngine::from_parts(None, 1, Vec::new())
    }

    fn from_parts(
        pool: Option<rayon::ThreadPool>,
        threads: usize,
        workers: Vec<WorkerInfo>,
    ) -> CpuEngine {
        CpuEngine {
            pool,
            warmth: Arc::default(),
            generation: threads::fork_generation(),
            threads,
            workers,
            buffer_pool: BufferPool::new(DEFAULT_POOL_LIMIT),
            plan_cache: PlanCache::new(256),
            operand_copies: AtomicU64::new(0),
            lending: Lending::default(),
            broken: Mutex::new(None),
            is_broken: std::sync::atomic::AtomicBool::new(false),
            panic_next: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// What each worker reported when it started (empty for a serial engine).
    pub fn worker_info(&self) -> &[WorkerInfo] {
        &self.workers
    }

    /// The pool to split work across, or `None` to run inline: a serial engine, or a call made
    /// from one of this engine's own workers (which must not wait on its own pool).
    #[inline]
    pub(crate) fn parallel_pool(&self) -> Option<threads::Pool<'_>> {
        self.live_pool()
            .filter(|p| p.pool.current_thread_index().is_none())
    }

    /// The pool, unless this process was forked after it was built (its workers live in the
    /// parent only).
    fn live_pool(&self) -> Option<threads::Pool<'_>> {
        self.pool
            .as_ref()
            .filter(|_| threads::fork_generation() == self.generation)
            .map(|pool| threads::Pool {
                pool,
                warmth: &self.warmth,
            })
    }

    /// Run `f` on one of this engine's workers (inline for a serial engine, or in a process
    /// forked after the engine was built).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self.live_pool() {
            Some(pool) => pool.install(f),
            None => f(),
        }
    }
}

/// Whether the CPU engine executes primitive `kind`, known without building an engine: every
/// primitive (`execute`'s match over `Op` is exhaustive, with no wildcard arm).
pub fn supports(kind: tenferro_ops::OpKind) -> bool {
    let _ = kind;
    true
}

impl Engine for CpuEngine {
    fn describe(&self) -> String {
        format!("CpuEngine(threads={})", self.threads)
    }

    fn kind(&self) -> &'static str {
        "cpu"
    }

    fn num_threads(&self) -> usize {
        self.threads
    }

    fn execute(&self, op: &Op, inputs: &[&Tensor], meta: &OutMeta) -> Result<Tensor> {
        let name = op.name();
        // A load first: the swap (a locked instruction) only when the test hook is armed.
        if self.panic_next.load(std::sync::atomic::Ordering::Relaxed)
            && self
                .panic_next
                .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            panic!("injected panic in {name} (tenferro._testing)");
        }
        let shape = &meta.shape;
        match op {
            Op::Unary(u) => elementwise::unary(self, *u, name, inputs[0]),
            Op::Binary(b) => elementwise::binary(self, *b, name, shape, inputs[0], inputs[1]),
            Op::Compare(d) => elementwise::compare(self, *d, name, shape, inputs[0], inputs[1]),
            Op::Select => elementwise::select(self, name, shape, inputs[0], inputs[1], inputs[2]),
            Op::Clamp => elementwise::clamp(self, name, shape, inputs[0], inputs[1], inputs[2]),
            Op::Convert(to) | Op::Cast(to) => elementwise::cast(self, name, inputs[0], *to),
            Op::Reshape(new_shape) => {
                // Not expressible as a view: materialise compactly, then re-view.
                let compact = elementwise::cast(self, name, inputs[0], inputs[0].dtype())?;
                compact
                    .reshape_view(new_shape)
                    .ok_or_else(|| Error::shape(name, format!("cannot reshape into {new_shape:?}")))
            }
            Op::Transpose(perm) => inputs[0].transpose_view(perm),
            Op::Reverse(axes) => inputs[0].reverse_view(axes),
            Op::BroadcastInDim { shape, dims } => inputs[0].broadcast_in_dim_view(shape, dims),
            Op::Reduce { op: r, axes } => reduce::reduce(self, name, *r, inputs[0], axes, shape),
            Op::Slice(c) => structural::slice(inputs[0], c, shape),
            Op::Pad(c) => structural::pad(self, name, inputs[0], c, shape),
            Op::DynamicSlice { sizes } => structural::dynamic_slice(inputs[0], inputs[1], sizes),
            Op::DynamicUpdateSlice => {
                structural::dynamic_update_slice(self, name, inputs[0], inputs[1], inputs[2])
            }
            Op::Concatenate { axis } => structural::concatenate(self, name, inputs, *axis, shape),
            Op::Gather(c) => structural::gather(self, name, inputs[0], inputs[1], c, shape),
            Op::Scatter(c) => structural::scatter(self, name, inputs[0], inputs[1], inputs[2], c),
            Op::ExtractDiag { a, b } => inputs[0].extract_diag_view(*a, *b),
            Op::EmbedDiag { a, b } => structural::embed_diag(self, name, inputs[0], *a, *b, shape),
            Op::Tril(k) => structural::triangle(self, name, inputs[0], *k, true),
            Op::Triu(k) => structural::triangle(self, name, inputs[0], *k, false),
            Op::DotGeneral(c) => {
                contraction::dot_general(self, name, c, inputs[0], inputs[1], (false, false), shape)
            }
            Op::DotGeneralWithConj {
                config,
                lhs_conj,
                rhs_conj,
            } => contraction::dot_general(
                self,
                name,
                config,
                inputs[0],
                inputs[1],
                (*lhs_conj, *rhs_conj),
                shape,
            ),
            Op::Matmul => {
                let cfg = tenferro_ops::DotGeneralConfig {
                    lhs_contracting_dims: vec![1],
                    rhs_contracting_dims: vec![0],
                    lhs_batch_dims: vec![],
                    rhs_batch_dims: vec![],
                };
                contraction::dot_general(
                    self,
                    name,
                    &cfg,
                    inputs[0],
                    inputs[1],
                    (false, false),
                    shape,
                )
            }
            Op::ScaleReal(r) => contraction::scale_real(self, name, inputs[0], *r),
            Op::ScaleComplex(c) => contraction::scale_complex(self, name, inputs[0], *c),
            Op::Fft(c) => fft::fft(self, name, inputs[0], c, meta),
            Op::Linalg(l) => linalg::execute(self, *l, name, inputs, std::slice::from_ref(meta))?
                .pop()
                .ok_or_else(|| Error::value(name, "no output")),
            Op::Sort { axis, descending } => sort::sort(self, name, inputs[0], *axis, *descending),
            Op::Argsort { axis, descending } => {
                sort::argsort(self, name, inputs[0], *axis, *descending)
            }
            Op::Argmax(axis) => sort::arg_extreme(self, name, inputs[0], *axis, shape, true),
            Op::Argmin(axis) => sort::arg_extreme(self, name, inputs[0], *axis, shape, false),
            Op::SearchSorted { right } => {
                sort::searchsorted(self, name, inputs[0], inputs[1], *right)
            }
            Op::Cumsum(axis) => sort::scan(self, name, inputs[0], *axis, false),
            Op::Cumprod(axis) => sort::scan(self, name, inputs[0], *axis, true),
        }
    }

    fn execute_multi(&self, op: &Op, inputs: &[&Tensor], metas: &[OutMeta]) -> Result<Vec<Tensor>> {
        if let Op::Linalg(l) = op {
            return linalg::execute(self, *l, op.name(), inputs, metas);
        }
        Ok(vec![self.execute(op, inputs, &metas[0])?])
    }

    fn supports(&self, kind: tenferro_ops::OpKind) -> bool {
        supports(kind)
    }

    fn buffer_pool(&self) -> &Arc<BufferPool> {
        &self.buffer_pool
    }

    fn lending(&self) -> &Lending {
        &self.lending
    }

    fn plan_cache(&self) -> &PlanCache {
        &self.plan_cache
    }

    fn contiguous_copy(&self, x: &Tensor) -> Result<Tensor> {
        elementwise::cast(self, "copy", x, x.dtype())
    }

    fn broken_reason(&self) -> Option<String> {
        if !self.is_broken.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        self.broken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn mark_broken(&self, reason: String) {
        *self.broken.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
        self.is_broken
            .store(true, std::sync::atomic::Ordering::Release);
    }
}

impl CpuEngine {
    /// Test hook: make the next kernel panic, to exercise broken-engine handling.
    pub fn inject_panic_on_next_op(&self) {
        self.panic_next
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Number of `dot_general` operands copied because their axes could not be merged.
    pub fn operand_copies(&self) -> u64 {
        self.operand_copies
            .load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenferro_ops::{BinaryOp, ReduceOp, UnaryOp};
    use tenferro_runtime::apply;

    fn t(shape: &[usize], v: Vec<f64>) -> Tensor {
        Tensor::from_vec(shape, v).unwrap()
    }

    #[test]
    fn binary_on_odd_strides_and_broadcast() {
        for threads in [1, 2] {
            let e = CpuEngine::new(Some(threads)).unwrap();
            let n = 70_000;
            let a = t(&[n], (0..n).map(|i| i as f64).collect());
            let r = a.reverse_view(&[0]).unwrap();
            let one = t(&[], vec![1.0]);
            let y = apply(&e, &Op::Binary(BinaryOp::Add), &[&r, &one]).unwrap();
            let v = y.to_vec::<f64>();
            assert_eq!(v[0], n as f64);
            assert_eq!(v[n - 1], 1.0);
            let m = t(&[2, 3], vec![1., 2., 3., 4., 5., 6.]);
            let mt = m.transpose_view(&[1, 0]).unwrap();
            let s = apply(&e, &Op::Binary(BinaryOp::Mul), &[&mt, &mt]).unwrap();
            assert_eq!(s.to_vec::<f64>(), vec![1., 9., 25., 4., 16., 36.]);
        }
    }

    #[test]
    fn reductions_pairwise_and_axes() {
        let e = CpuEngine::new(Some(2)).unwrap();
        let n = 1 << 20;
        let a = Tensor::from_vec(&[n], vec![0.1f32; n]).unwrap();
        let s = apply(
            &e,
            &Op::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0],
            },
            &[&a],
        )
        .unwrap();
        let got = s.to_vec::<f32>()[0] as f64;
        assert!(
            (got - 0.1f32 as f64 * n as f64).abs() / (n as f64 * 0.1) < 1e-6,
            "{got}"
        );
        let m = t(&[2, 3], vec![1., 2., 3., 4., 5., 6.]);
        let r = apply(
            &e,
            &Op::Reduce {
                op: ReduceOp::Max,
                axes: vec![1],
            },
            &[&m],
        )
        .unwrap();
        assert_eq!(r.to_vec::<f64>(), vec![5., 6.]);
    }

    #[test]
    fn integer_division_by_zero_is_an_error() {
        let e = CpuEngine::new(Some(1)).unwrap();
        let a = Tensor::from_vec(&[2], vec![1i64, 2]).unwrap();
        let z = Tensor::from_vec(&[2], vec![1i64, 0]).unwrap();
        assert!(matches!(
            apply(&e, &Op::Binary(BinaryOp::Div), &[&a, &z]),
            Err(Error::ZeroDivision { .. })
        ));
        let m = Tensor::from_vec(&[1], vec![i64::MIN]).unwrap();
        let neg = Tensor::from_vec(&[1], vec![-1i64]).unwrap();
        let q = apply(&e, &Op::Binary(BinaryOp::Div), &[&m, &neg]).unwrap();
        assert_eq!(q.to_vec::<i64>(), vec![i64::MIN]);
    }

    #[test]
    fn work_from_an_own_worker_runs_inline() {
        let e = CpuEngine::new(Some(2)).unwrap();
        assert_eq!(e.worker_info().len(), 2);
        let n = 1 << 18;
        let a = t(&[n], vec![1.0; n]);
        // On a worker of `e`, a large op must not wait on `e`'s own pool.
        let s = e.install(|| {
            assert!(e.parallel_pool().is_none());
            let sum = apply(
                &e,
                &Op::Reduce {
                    op: ReduceOp::Sum,
                    axes: vec![0],
                },
                &[&a],
            )
            .unwrap();
            let y = apply(&e, &Op::Unary(UnaryOp::Exp), &[&a]).unwrap();
            (sum.to_vec::<f64>()[0], y.to_vec::<f64>()[n - 1])
        });
        assert_eq!(s.0, n as f64);
        assert!((s.1 - 1f64.exp()).abs() < 1e-15);
        assert!(e.parallel_pool().is_some());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn pinned_workers_and_engines_built_inside_them() {
        let allowed = allowed_cpus().to_vec();
        let cpu = *allowed.last().unwrap();
        let e = CpuEngine::pinned(&[cpu]).unwrap();
        let w = &e.worker_info()[0];
        assert_eq!(w.cpus, vec![cpu]);
        assert_eq!(threads::affinity::get(w.tid).unwrap(), vec![cpu]);
        // An engine built on the pinned worker still spans the main thread's snapshot.
        let inner = e.install(|| CpuEngine::new(Some(2)).unwrap());
        for w in inner.worker_info() {
            assert_eq!(w.cpus, allowed);
        }
    }

    #[test]
    fn a_set_cancel_flag_stops_kernels_and_an_unset_one_changes_nothing() {
        use std::sync::atomic::{AtomicBool, Ordering};
        for threads in [1, 2] {
            let e = CpuEngine::new(Some(threads)).unwrap();
            let x = t(&[6], vec![0., 1., 2., 3., 4., 5.]);
            // 6·2⁴⁰ additions (hours): must stop once the flag is set from another thread.
            let huge = x.broadcast_in_dim_view(&[6, 1 << 40], &[0]).unwrap();
            let sum = Op::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0, 1],
            };
            let flag = Arc::new(AtomicBool::new(false));
            let r = std::thread::scope(|s| {
                s.spawn(|| {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    flag.store(true, Ordering::Relaxed);
                });
                with_cancel_flag("sum", &flag, || apply(&e, &sum, &[&huge]))
            });
            assert!(
                matches!(r, Err(Error::Interrupted { .. })),
                "{threads}: {r:?}"
            );
            // A GEMM under a set flag stops before its first column block.
            let n = 600;
            let a = t(&[n, n], vec![1.0; n * n]);
            let r = with_cancel_flag("matmul", &flag, || apply(&e, &Op::Matmul, &[&a, &a]));
            assert!(matches!(r, Err(Error::Interrupted { .. })));
            // The engine is usable, and an unset flag gives the same results as none.
            let calm = Arc::new(AtomicBool::new(false));
            let m = x.broadcast_in_dim_view(&[6, 100_000], &[0]).unwrap();
            let plain = apply(&e, &sum, &[&m]).unwrap().to_vec::<f64>();
            let flagged = with_cancel_flag("sum", &calm, || apply(&e, &sum, &[&m]))
                .unwrap()
                .to_vec::<f64>();
            assert_eq!(plain, vec![1_500_000.0]);
            assert_eq!(flagged, plain);
            let big = t(&[1 << 18], (0..1 << 18).map(|i| i as f64 * 1e-4).collect());
            let exp = Op::Unary(UnaryOp::Exp);
            let plain = apply(&e, &exp, &[&big]).unwrap().to_vec::<f64>();
            let flagged = with_cancel_flag("exp", &calm, || apply(&e, &exp, &[&big]))
                .unwrap()
                .to_vec::<f64>();
            assert_eq!(flagged, plain);
            let prod = with_cancel_flag("matmul", &calm, || apply(&e, &Op::Matmul, &[&a, &a]))
                .unwrap()
                .to_vec::<f64>();
            assert!(prod.iter().all(|&v| v == n as f64));
        }
    }

    #[test]
    fn exp_matches_scalar() {
        let e = CpuEngine::new(Some(2)).unwrap();
        let xs: Vec<f64> = (0..100_000).map(|i| (i as f64) * 1e-3 - 50.0).collect();
        let a = t(&[xs.len()], xs.clone());
        let y = apply(&e, &Op::Unary(UnaryOp::Exp), &[&a])
            .unwrap()
            .to_vec::<f64>();
        for (x, v) in xs.iter().zip(y) {
            assert!((v - x.exp()).abs() <= 4.0 * f64::EPSILON * x.exp());
        }
    }
}
