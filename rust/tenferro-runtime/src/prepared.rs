//! Prepared plans (`graph-mode.md`, "Explicit layer: execution contexts"): a compiled
//! [`Program`] bound to one engine kind and thread setting. Preparing folds the program's
//! constant-only subgraphs on that engine ([`fold_constants`]) and measures what a runner needs
//! to decide how to run it (the work it does, whether it factorises), once; the plan is cached
//! in the engine's [`crate::PlanCache`] under [`prepared_key`] and replayed by every later run.
//!
//! The key is the compiled program's process-unique id (never reused, so a plan can never be
//! served for another program), the engine's kind and its thread setting: the engine is not part
//! of a trace's key, it is part of the prepared plan's.

use crate::passes::fold_constants;
use crate::{Engine, Program};
use tenferro_ops::{infer_outputs, Op};
use tenferro_tensor::{DType, Result};

/// Plan-cache key tag of prepared graph plans (einsum programs and GEMM plans use others);
/// [`crate::PlanCache::stats_for`] and [`crate::PlanCache::clear_tag`] select them by it.
pub const PREPARED_GRAPH_TAG: i64 = -0x4752_4150; // "GRAP"

/// The plan-cache key of program `program_id` prepared on `engine`: tag, id, engine kind, and
/// thread setting (a serial engine and a pooled one get separate plans).
pub fn prepared_key(program_id: u64, engine: &dyn Engine) -> [i64; 4] {
    [
        PREPARED_GRAPH_TAG,
        program_id as i64,
        kind_code(engine.kind()),
        engine.num_threads() as i64,
    ]
}

/// A stable integer of an engine kind name (FNV-1a).
fn kind_code(kind: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in kind.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// A compiled program prepared for one engine kind and thread setting (see the module docs).
#[derive(Debug)]
pub struct PreparedGraph {
    program: Program,
    source_instrs: usize,
    work: usize,
    factorises: bool,
}

impl PreparedGraph {
    /// Prepare `program` (whose inputs have the dtypes and shapes `inputs`) on `engine`: fold
    /// every instruction whose operands are all constants into a constant (executed once, here;
    /// an instruction whose folding fails — integer division by zero — stays, so its error is
    /// raised by the run, with the eager class and message), then drop what became dead, and
    /// estimate the run's work.
    ///
    /// # Errors
    /// `Internal` for a malformed program; `EngineBroken` when the engine is broken.
    pub fn prepare(
        program: &Program,
        inputs: &[(DType, Vec<usize>)],
        engine: &dyn Engine,
    ) -> Result<PreparedGraph> {
        if let Some(reason) = engine.broken_reason() {
            return Err(tenferro_tensor::Error::engine_broken(
                "jit",
                format!("the engine is broken by an earlier panic ({reason}); create a new engine"),
            ));
        }
        let foldable =
            !program.consts().is_empty() || program.instrs().iter().any(|i| i.inputs.is_empty());
        let folded = if !foldable {
            // Nothing is constant-only without a constant or an instruction of no operands.
            program.clone()
        } else {
            fold_constants(program, engine)?
        };
        let (work, factorises) = estimate(&folded, inputs);
        Ok(PreparedGraph {
            program: folded,
            source_instrs: program.instrs().len(),
            work,
            factorises,
        })
    }

    /// The program to run (after folding).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Instructions of the program before folding.
    pub fn source_instrs(&self) -> usize {
        self.source_instrs
    }

    /// Instructions removed by folding (folded into constants, or dead after it).
    pub fn folded(&self) -> usize {
        self.source_instrs
            .saturating_sub(self.program.instrs().len())
    }

    /// Estimated work of one run: per instruction the elements it touches, or the
    /// multiply-adds of a contraction (`usize::MAX` when a shape is unknown).
    pub fn work(&self) -> usize {
        self.work
    }

    /// Whether the program runs a decomposition or solve (`Op::Linalg`).
    pub fn factorises(&self) -> bool {
        self.factorises
    }

    /// Approximate heap bytes (the plan cache's byte budget): the program with its constants.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.program.bytes()
    }
}

/// `(work, has a linalg op)` of `p` on inputs of `inputs`' dtypes and shapes.
fn estimate(p: &Program, inputs: &[(DType, Vec<usize>)]) -> (usize, bool) {
    let factorises = p.instrs().iter().any(|i| matches!(i.op, Op::Linalg(_)));
    if inputs.len() != p.n_inputs() {
        return (usize::MAX, factorises);
    }
    let mut metas: Vec<(DType, Vec<usize>)> = Vec::with_capacity(p.n_slots());
    metas.extend(inputs.iter().cloned());
    metas.extend(p.consts().iter().map(|t| (t.dtype(), t.shape().to_vec())));
    let numel = |s: &[usize]| s.iter().product::<usize>();
    let mut work = 0usize;
    for ins in p.instrs() {
        let args: Vec<(DType, &[usize])> = ins
            .inputs
            .iter()
            .map(|&i| (metas[i].0, metas[i].1.as_slice()))
            .collect();
        let Ok(outs) = infer_outputs(&ins.op, &args) else {
            return (usize::MAX, factorises);
        };
        let largest = args
            .iter()
            .map(|(_, s)| numel(s))
            .chain(outs.iter().map(|m| numel(&m.shape)))
            .max()
            .unwrap_or(0);
        let step = match (&ins.op, args.as_slice()) {
            (Op::DotGeneral(c) | Op::DotGeneralWithConj { config: c, .. }, [(_, l), (_, r)]) => {
                let shared: usize = c
                    .rhs_contracting_dims
                    .iter()
                    .chain(&c.rhs_batch_dims)
                    .map(|&d| r.get(d).copied().unwrap_or(1))
                    .product::<usize>()
                    .max(1);
                numel(l).saturating_mul(numel(r) / shared).max(largest)
            }
            (Op::Linalg(_), [(_, a), ..]) => {
                let n = a.iter().take(2).copied().max().unwrap_or(1);
                largest.saturating_mul(n)
            }
            _ => largest,
        };
        work = work.saturating_add(step);
        metas.extend(outs.into_iter().map(|m| (m.dtype, m.shape)));
    }
    (work, factorises)
}
