//! Prepared plans (`graph-mode.md`, "Explicit layer: execution contexts"): a compiled
//! [`Program`] bound to one engine kind and thread setting. Preparing folds the program's
//! constant-only subgraphs on that engine ([`fold_constants`]) and measures what a runner needs
//! to decide how to run it (the work it does, whether it factorises), once; the plan is cached
//! in the engine's [`crate::PlanCache`] under [`prepared_key`] and replayed by every later run.
//!
//! The key is the compiled program's process-unique id (never reused, so a plan can never be
//! served for another program), the engine's kind and its thread setting: the engine is not part
//! of a trace's key, it is part of the prepared plan's.

use crate::passes::{fold_constants, fold_unit_factors};
use crate::{Engine, Instr, Program};
use tenferro_ops::{infer_outputs, Op, OutMeta};
use tenferro_tensor::{DType, Error, Result, Tensor};

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
    /// Per instruction, the dtype and shape of each output and the operands' common dtype,
    /// inferred once here (the run's input shapes and dtypes are the traced ones, checked by the
    /// caller), so a run never re-infers; empty when inference failed (a run then validates
    /// the step as an eager op would, raising its error).
    metas: Vec<Vec<OutMeta>>,
    /// Per instruction, the slots it reads for the last time (freed right after it runs; never
    /// an input or a constant, which the runner does not own).
    frees: Vec<Vec<usize>>,
    /// The inputs' dtypes and shapes `metas` was inferred for.
    inputs: Vec<(DType, Vec<usize>)>,
}

/// The outputs of one step of [`PreparedGraph::run`]: one tensor (every op but the
/// decompositions) or several.
#[derive(Debug)]
pub enum StepOutputs {
    /// The output of a single-output op.
    One(Tensor),
    /// One tensor per output of a several-output op.
    Many(Vec<Tensor>),
}

impl PreparedGraph {
    /// Prepare `program` (whose inputs have the dtypes and shapes `inputs`) on `engine`: fold
    /// every instruction whose operands are all constants into a constant (executed once, here;
    /// an instruction whose folding fails — integer division by zero — stays, so its error is
    /// raised by the run, with the eager class and message), drop multiplications by constant
    /// ones ([`fold_unit_factors`]), then drop what became dead, estimate the run's work and
    /// infer every step's output metadata.
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
            fold_unit_factors(&fold_constants(program, engine)?, inputs)?
        };
        let (work, factorises, metas) = estimate(&folded, inputs);
        let first_out = folded.n_inputs() + folded.consts().len();
        let frees = folded
            .instrs()
            .iter()
            .enumerate()
            .map(|(k, ins)| {
                let mut f: Vec<usize> = Vec::new();
                for &i in &ins.inputs {
                    if i >= first_out && folded.is_last_use(i, k) && !f.contains(&i) {
                        f.push(i);
                    }
                }
                f
            })
            .collect();
        Ok(PreparedGraph {
            program: folded,
            source_instrs: program.instrs().len(),
            work,
            factorises,
            metas,
            frees,
            inputs: inputs.to_vec(),
        })
    }

    /// Run the prepared program on `inputs`: `step(k, instr, operands, metas)` executes
    /// instruction `k` with the output metadata inferred at preparation (`metas` is empty when
    /// it could not be inferred, or when `inputs` do not have the dtypes and shapes the plan was
    /// prepared for: then every step validates as an eager op, raising its error). Slots
    /// are read in place (constants are never copied), and every intermediate is dropped right
    /// after its last read, so its buffer returns to the engine's pool for the next allocation
    /// of its size (pass 7's recycling). Inputs and constants are only read.
    ///
    /// # Errors
    /// `Internal` for a wrong number of inputs or a malformed step; every error of `step`.
    pub fn run(
        &self,
        name: &str,
        inputs: Vec<Tensor>,
        mut step: impl FnMut(usize, &Instr, &[&Tensor], &[OutMeta]) -> Result<StepOutputs>,
    ) -> Result<Vec<Tensor>> {
        let p = &self.program;
        if inputs.len() != p.n_inputs() {
            return Err(Error::internal(
                name,
                format!("a program of {} inputs got {}", p.n_inputs(), inputs.len()),
            ));
        }
        // The metadata holds for the prepared inputs only (callers check them; this keeps a
        // kernel from ever being handed metadata that does not describe its operands).
        let known = self.inputs.len() == inputs.len()
            && self
                .inputs
                .iter()
                .zip(&inputs)
                .all(|((d, s), t)| *d == t.dtype() && s.as_slice() == t.shape());
        let consts = p.consts();
        let n_in = p.n_inputs();
        let first_out = n_in + consts.len();
        // Instruction outputs only; inputs and constants are read where they are.
        let mut slots: Vec<Option<Tensor>> = Vec::with_capacity(p.n_slots() - first_out);
        let freed = || Error::internal(name, "the program reads a freed slot");
        for (k, ins) in p.instrs().iter().enumerate() {
            let metas: &[OutMeta] = match self.metas.get(k) {
                Some(m) if known => m,
                _ => &[],
            };
            let out = {
                let get = |i: usize| -> Result<&Tensor> {
                    if i < n_in {
                        Ok(&inputs[i])
                    } else if i < first_out {
                        Ok(&consts[i - n_in])
                    } else {
                        slots
                            .get(i - first_out)
                            .and_then(Option::as_ref)
                            .ok_or_else(freed)
                    }
                };
                match ins.inputs.as_slice() {
                    [] => step(k, ins, &[], metas)?,
                    &[a] => step(k, ins, &[get(a)?], metas)?,
                    &[a, b] => step(k, ins, &[get(a)?, get(b)?], metas)?,
                    &[a, b, c] => step(k, ins, &[get(a)?, get(b)?, get(c)?], metas)?,
                    many => {
                        let args = many.iter().map(|&i| get(i)).collect::<Result<Vec<_>>>()?;
                        step(k, ins, &args, metas)?
                    }
                }
            };
            match out {
                StepOutputs::One(t) if ins.op.num_outputs() == 1 => slots.push(Some(t)),
                StepOutputs::Many(ts) if ts.len() == ins.op.num_outputs() => {
                    slots.extend(ts.into_iter().map(Some));
                }
                _ => {
                    return Err(Error::internal(
                        ins.op.name(),
                        format!(
                            "a program step gave the wrong number of outputs (its op has {})",
                            ins.op.num_outputs()
                        ),
                    ))
                }
            }
            if let Some(frees) = self.frees.get(k) {
                for &i in frees {
                    slots[i - first_out] = None;
                }
            }
        }
        p.outputs()
            .iter()
            .map(|&o| {
                if o < n_in {
                    Ok(inputs[o].clone())
                } else if o < first_out {
                    Ok(consts[o - n_in].clone())
                } else {
                    slots
                        .get(o - first_out)
                        .and_then(Option::clone)
                        .ok_or_else(|| Error::internal(name, "a program output is missing"))
                }
            })
            .collect()
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

/// `(work, has a linalg op, output metas per instruction)` of `p` on inputs of `inputs`'
/// dtypes and shapes (no metas when a shape is unknown).
fn estimate(p: &Program, inputs: &[(DType, Vec<usize>)]) -> (usize, bool, Vec<Vec<OutMeta>>) {
    let factorises = p.instrs().iter().any(|i| matches!(i.op, Op::Linalg(_)));
    if inputs.len() != p.n_inputs() {
        return (usize::MAX, factorises, Vec::new());
    }
    let mut all: Vec<Vec<OutMeta>> = Vec::with_capacity(p.instrs().len());
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
            return (usize::MAX, factorises, Vec::new());
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
        metas.extend(outs.iter().map(|m| (m.dtype, m.shape.clone())));
        all.push(outs);
    }
    (work, factorises, all)
}
