//! The engine-facing half of tenferro's runtime: the [`Engine`] trait every backend implements,
//! engine lending (what a session holds), runtime identity, and [`apply`], the one path every
//! eager op takes: validate with the catalog, promote operands, execute, contain panics.

mod lending;
pub mod passes;
mod plan_cache;
mod prepared;
pub mod profile;
mod program;

pub use lending::{thread_token, Borrow, Lending};
pub use passes::{
    fingerprint, fold_constants, optimize, optimize_for, Pass, PassConfig, PassReport, PassStep,
};
pub use plan_cache::{CacheStats, KeyHasher, PlanCache};
pub use prepared::{prepared_key, PreparedGraph, StepOutputs, PREPARED_GRAPH_TAG};
pub use program::{Instr, Program, ProgramBuilder, Symbol, TraceEnded};

use smallvec::SmallVec;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use tenferro_ops::{infer, infer_outputs, Op, OpKind, OutMeta};
use tenferro_tensor::{BufferPool, DType, Error, Result, Tensor};

/// An execution backend (CPU now; CUDA behind a feature later).
pub trait Engine: Send + Sync {
    /// Short description (`"cpu(threads=2)"`).
    fn describe(&self) -> String;
    /// The engine's kind (`"cpu"`): with [`Engine::num_threads`], what a prepared plan is
    /// specific to ([`prepared_key`]).
    fn kind(&self) -> &'static str;
    /// Number of worker threads (1 for a serial engine).
    fn num_threads(&self) -> usize;
    /// Whether this engine executes primitive `kind` (engine capabilities are the engine's, not
    /// the catalog's); [`apply`] refuses the others with `Unsupported`.
    fn supports(&self, kind: OpKind) -> bool;
    /// Run one validated op. `inputs` already have `meta.operand_dtype` where the op promotes.
    ///
    /// # Errors
    /// Value-dependent failures (integer division by zero, negative integer powers) and
    /// allocation failures.
    fn execute(&self, op: &Op, inputs: &[&Tensor], meta: &OutMeta) -> Result<Tensor>;
    /// Run one validated op with several outputs (the decompositions of `linalg`); `metas`
    /// holds one entry per output.
    ///
    /// # Errors
    /// As [`Engine::execute`]; `LinAlg` for numerical failures.
    fn execute_multi(&self, op: &Op, inputs: &[&Tensor], metas: &[OutMeta]) -> Result<Vec<Tensor>>;
    /// The engine's buffer pool.
    fn buffer_pool(&self) -> &Arc<BufferPool>;
    /// Who holds the engine.
    fn lending(&self) -> &Lending;
    /// The engine's cache of prepared plans (GEMM layouts, einsum programs), keyed by the
    /// callers; entries are engine-specific, so the cache lives with the engine.
    fn plan_cache(&self) -> &PlanCache;
    /// A compact copy of `x` in fresh storage from this engine's pool (adopting host arrays).
    ///
    /// # Errors
    /// Allocation failure.
    fn contiguous_copy(&self, x: &Tensor) -> Result<Tensor>;
    /// Whether a panic broke the engine.
    fn broken_reason(&self) -> Option<String>;
    /// Mark the engine broken after a panic.
    fn mark_broken(&self, reason: String);
}

/// Run `f` on `engine`, turning a panic into [`Error::EngineBroken`] and marking the engine.
///
/// # Errors
/// [`Error::EngineBroken`] if the engine was broken before or `f` panics; `f`'s own errors.
pub fn guarded<T>(engine: &dyn Engine, op: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    if let Some(reason) = engine.broken_reason() {
        return Err(Error::engine_broken(
            op,
            format!("the engine is broken by an earlier panic ({reason}); create a new engine"),
        ));
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            engine.mark_broken(format!("panic in {op}: {msg}"));
            Err(Error::engine_broken(
                op,
                format!(
                    "internal panic ({msg}); this engine refuses further work, create a new one"
                ),
            ))
        }
    }
}

/// `slice` as a view: each axis keeps `start, start + stride, ...` below `limit` (the config
/// is validated by the catalog first).
fn slice_view(x: &Tensor, c: &tenferro_ops::SliceConfig) -> Result<Tensor> {
    let mut v = x.clone();
    for (axis, ((&start, &limit), &stride)) in
        c.starts.iter().zip(&c.limits).zip(&c.strides).enumerate()
    {
        let len = if limit > start {
            (limit - start - 1) / stride.max(1) + 1
        } else {
            0
        };
        v = v.slice_axis_view(axis, start, len, stride.max(1) as isize)?;
    }
    Ok(v)
}

/// Execute one primitive eagerly: validate and infer with the catalog, return views for
/// metadata-only layout ops, promote operands to the common dtype, run the kernel.
///
/// # Errors
/// Every validation error of [`infer`], kernel errors, and [`Error::EngineBroken`].
pub fn apply(engine: &dyn Engine, op: &Op, inputs: &[&Tensor]) -> Result<Tensor> {
    let prof = profile::profiler();
    if prof.enabled() {
        let t0 = std::time::Instant::now();
        let r = apply_inner(engine, op, inputs);
        prof.add(op.name(), profile::Phase::Forward, t0.elapsed());
        return r;
    }
    apply_inner(engine, op, inputs)
}

/// Execute an op with any number of outputs (decompositions return several; every other op
/// one): validate with the catalog, promote operands, run the kernel.
///
/// # Errors
/// As [`apply`].
pub fn apply_multi(engine: &dyn Engine, op: &Op, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
    if op.num_outputs() == 1 {
        return Ok(vec![apply(engine, op, inputs)?]);
    }
    let prof = profile::profiler();
    let t0 = prof.enabled().then(std::time::Instant::now);
    check_supported(engine, op)?;
    let metas: Vec<_> = inputs.iter().map(|t| (t.dtype(), t.shape())).collect();
    let outs = infer_outputs(op, &metas)?;
    let operand_dtype = outs[0].operand_dtype;
    let r = guarded(engine, op.name(), || {
        let converted = promote_operands(engine, op, inputs, operand_dtype)?;
        let ins: Vec<&Tensor> = converted.iter().collect();
        engine.execute_multi(op, &ins, &outs)
    });
    if let Some(t0) = t0 {
        prof.add(op.name(), profile::Phase::Forward, t0.elapsed());
    }
    r
}

/// Execute one step of a prepared program ([`PreparedGraph::run`]) whose output metadata
/// `metas` was inferred when the program was prepared (its operands have the traced dtypes and
/// shapes): what [`apply_multi`] does without inferring again. With no `metas` (inference
/// failed at preparation) it is [`apply_multi`], raising the eager error.
///
/// # Errors
/// As [`apply`].
pub fn apply_prepared(
    engine: &dyn Engine,
    op: &Op,
    inputs: &[&Tensor],
    metas: &[OutMeta],
) -> Result<StepOutputs> {
    let prof = profile::profiler();
    let t0 = prof.enabled().then(std::time::Instant::now);
    let r = apply_prepared_inner(engine, op, inputs, metas);
    if let Some(t0) = t0 {
        prof.add(op.name(), profile::Phase::Forward, t0.elapsed());
    }
    r
}

fn apply_prepared_inner(
    engine: &dyn Engine,
    op: &Op,
    inputs: &[&Tensor],
    metas: &[OutMeta],
) -> Result<StepOutputs> {
    let n = op.num_outputs();
    if metas.len() != n {
        return if n == 1 {
            apply_inner(engine, op, inputs).map(StepOutputs::One)
        } else {
            apply_multi(engine, op, inputs).map(StepOutputs::Many)
        };
    }
    check_supported(engine, op)?;
    if n != 1 {
        let operand_dtype = metas[0].operand_dtype;
        return guarded(engine, op.name(), || {
            let converted = promote_operands(engine, op, inputs, operand_dtype)?;
            let ins: Vec<&Tensor> = converted.iter().collect();
            engine.execute_multi(op, &ins, metas)
        })
        .map(StepOutputs::Many);
    }
    let meta = &metas[0];
    if let Some(v) = layout_view(op, inputs)? {
        return Ok(StepOutputs::One(v));
    }
    let promote = inputs
        .iter()
        .enumerate()
        .any(|(i, t)| op.is_data_operand(i) && t.dtype() != meta.operand_dtype);
    guarded(engine, op.name(), || {
        if promote {
            let converted = promote_operands(engine, op, inputs, meta.operand_dtype)?;
            let ins: Vec<&Tensor> = converted.iter().collect();
            engine.execute(op, &ins, meta)
        } else {
            engine.execute(op, inputs, meta)
        }
    })
    .map(StepOutputs::One)
}

/// The metadata-only layout ops as views (`None`: the op runs a kernel).
fn layout_view(op: &Op, inputs: &[&Tensor]) -> Result<Option<Tensor>> {
    Ok(Some(match op {
        Op::Transpose(perm) => inputs[0].transpose_view(perm)?,
        Op::Reverse(axes) => inputs[0].reverse_view(axes)?,
        Op::Slice(c) => slice_view(inputs[0], c)?,
        Op::BroadcastInDim { shape, dims } => inputs[0].broadcast_in_dim_view(shape, dims)?,
        Op::Reshape(shape) => match inputs[0].reshape_view(shape) {
            Some(v) => v,
            None => return Ok(None),
        },
        Op::Convert(to) | Op::Cast(to) if *to == inputs[0].dtype() => inputs[0].clone(),
        _ => return Ok(None),
    }))
}

fn promote_operands(
    engine: &dyn Engine,
    op: &Op,
    inputs: &[&Tensor],
    to: tenferro_tensor::DType,
) -> Result<Vec<Tensor>> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if op.is_data_operand(i) && t.dtype() != to {
                let m = OutMeta {
                    dtype: to,
                    shape: t.shape().to_vec(),
                    operand_dtype: t.dtype(),
                };
                engine.execute(&Op::Convert(to), &[t], &m)
            } else {
                Ok((*t).clone())
            }
        })
        .collect()
}

/// `Unsupported` unless `engine` executes `op`.
fn check_supported(engine: &dyn Engine, op: &Op) -> Result<()> {
    if engine.supports(op.kind()) {
        return Ok(());
    }
    Err(Error::unsupported(
        op.name(),
        format!("the engine {} has no kernel for it", engine.describe()),
    ))
}

fn apply_inner(engine: &dyn Engine, op: &Op, inputs: &[&Tensor]) -> Result<Tensor> {
    check_supported(engine, op)?;
    if op.num_outputs() != 1 {
        return Err(Error::value(
            op.name(),
            format!("has {} outputs; use apply_multi", op.num_outputs()),
        ));
    }
    // Inline up to 4 operands (every op but a long `concatenate`): no allocation here.
    let metas: SmallVec<[(DType, &[usize]); 4]> =
        inputs.iter().map(|t| (t.dtype(), t.shape())).collect();
    let meta = infer(op, &metas)?;
    // Metadata-only layout ops.
    if let Some(v) = layout_view(op, inputs)? {
        return Ok(v);
    }
    // Operands already of the common dtype (the usual case) go to the kernel as they are.
    if !inputs
        .iter()
        .enumerate()
        .any(|(i, t)| op.is_data_operand(i) && t.dtype() != meta.operand_dtype)
    {
        return guarded(engine, op.name(), || engine.execute(op, inputs, &meta));
    }
    guarded(engine, op.name(), || {
        let mut converted: Vec<Tensor> = Vec::new();
        let mut idx = Vec::with_capacity(inputs.len());
        for (i, t) in inputs.iter().enumerate() {
            if op.is_data_operand(i) && t.dtype() != meta.operand_dtype {
                let m = OutMeta {
                    dtype: meta.operand_dtype,
                    shape: t.shape().to_vec(),
                    operand_dtype: t.dtype(),
                };
                converted.push(engine.execute(&Op::Convert(meta.operand_dtype), &[t], &m)?);
                idx.push(Some(converted.len() - 1));
            } else {
                idx.push(None);
            }
        }
        let ins: Vec<&Tensor> = inputs
            .iter()
            .zip(&idx)
            .map(|(t, i)| match i {
                Some(k) => &converted[*k],
                None => *t,
            })
            .collect();
        engine.execute(op, &ins, &meta)
    })
}
