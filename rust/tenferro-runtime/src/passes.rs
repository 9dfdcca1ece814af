//! Optimisation passes over a [`Program`] (`graph-mode.md`, "Passes"), run in the spec's order:
//!
//! 1. dead-code elimination ([`PassConfig::dce`]);
//! 2. common-subexpression elimination ([`PassConfig::cse`]);
//! 3. algebraic layout simplification ([`PassConfig::layout`]);
//! 4. transpose folding into `dot_general` dimension numbers ([`PassConfig::fold_transpose`]);
//! 5. conj folding into `dot_general` ([`PassConfig::fold_conj`]);
//! 6. dead-code elimination again ([`PassConfig::final_dce`]);
//!
//! then [`Program::new`] recomputes the last use of every slot. Every pass is one forward or
//! backward walk over the instructions with hash-map or array lookups: linear in the program
//! size (instructions plus operands plus parameter lengths), so an unrolled MPS chain of `N`
//! sites compiles in `O(N)`.
//!
//! A pass never changes the number or order of the program's inputs and outputs; an output may
//! become an alias of an input, a constant or another output. Values are unchanged bit for bit,
//! except where transpose or conj folding rewrites a contraction: then only floating-point
//! reassociation inside the contraction may differ (GEMM operand order and packing).
//!
//! [`fold_constants`] (prepare time, on an engine) executes every instruction whose operands
//! are all constants and makes its outputs constants; [`fold_unit_factors`] (prepare time, when
//! the constants' values are known) drops multiplications by a constant of exact ones.

use crate::{Engine, Instr, Program};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use tenferro_ops::{infer_outputs, DotGeneralConfig, LinalgOp, Op, UnaryOp};
use tenferro_tensor::{DType, Error, Result, Tensor};

/// Which passes [`optimize`] runs (each can be switched off for tests and ablations).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassConfig {
    /// 1: dead-code elimination.
    pub dce: bool,
    /// 2: common-subexpression elimination.
    pub cse: bool,
    /// 3: algebraic layout simplification.
    pub layout: bool,
    /// 4: transpose folding into `dot_general`.
    pub fold_transpose: bool,
    /// 5: conj folding into `dot_general` (complex operands).
    pub fold_conj: bool,
    /// 6: dead-code elimination after the folds.
    pub final_dce: bool,
}

impl Default for PassConfig {
    /// Every pass on.
    fn default() -> Self {
        PassConfig {
            dce: true,
            cse: true,
            layout: true,
            fold_transpose: true,
            fold_conj: true,
            final_dce: true,
        }
    }
}

impl PassConfig {
    /// Every pass off ([`optimize`] then only recomputes last use).
    pub fn none() -> PassConfig {
        PassConfig {
            dce: false,
            cse: false,
            layout: false,
            fold_transpose: false,
            fold_conj: false,
            final_dce: false,
        }
    }

    /// Only `pass` on.
    pub fn only(pass: Pass) -> PassConfig {
        let mut c = PassConfig::none();
        *c.flag_mut(pass) = true;
        c
    }

    /// Whether `pass` is on.
    pub fn enabled(&self, pass: Pass) -> bool {
        match pass {
            Pass::Dce => self.dce,
            Pass::Cse => self.cse,
            Pass::Layout => self.layout,
            Pass::FoldTranspose => self.fold_transpose,
            Pass::FoldConj => self.fold_conj,
            Pass::FinalDce => self.final_dce,
        }
    }

    fn flag_mut(&mut self, pass: Pass) -> &mut bool {
        match pass {
            Pass::Dce => &mut self.dce,
            Pass::Cse => &mut self.cse,
            Pass::Layout => &mut self.layout,
            Pass::FoldTranspose => &mut self.fold_transpose,
            Pass::FoldConj => &mut self.fold_conj,
            Pass::FinalDce => &mut self.final_dce,
        }
    }
}

/// The passes, in the order [`optimize`] runs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// Dead-code elimination.
    Dce,
    /// Common-subexpression elimination.
    Cse,
    /// Algebraic layout simplification.
    Layout,
    /// Transpose folding into `dot_general`.
    FoldTranspose,
    /// Conj folding into `dot_general`.
    FoldConj,
    /// Dead-code elimination after the folds.
    FinalDce,
}

impl Pass {
    /// Every pass, in running order.
    pub const ALL: [Pass; 6] = [
        Pass::Dce,
        Pass::Cse,
        Pass::Layout,
        Pass::FoldTranspose,
        Pass::FoldConj,
        Pass::FinalDce,
    ];

    /// Short name (`"dce"`, `"cse"`, `"layout"`, `"fold_transpose"`, `"fold_conj"`,
    /// `"final_dce"`).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Dce => "dce",
            Pass::Cse => "cse",
            Pass::Layout => "layout",
            Pass::FoldTranspose => "fold_transpose",
            Pass::FoldConj => "fold_conj",
            Pass::FinalDce => "final_dce",
        }
    }
}

/// One row of a [`PassReport`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassStep {
    /// The pass.
    pub pass: Pass,
    /// Whether it ran (off in the [`PassConfig`]: the count is carried over).
    pub ran: bool,
    /// Instructions after it.
    pub instrs: usize,
    /// Instructions it rewrote in place or replaced by an alias (0 for the DCE passes, whose
    /// effect is the drop in `instrs`).
    pub rewrites: usize,
}

/// What [`optimize`] did: the instruction count before and after each pass (the rows of a
/// pass-ablation table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassReport {
    /// Instructions of the program given.
    pub initial: usize,
    /// One row per pass of [`Pass::ALL`], in order.
    pub steps: Vec<PassStep>,
}

impl PassReport {
    /// Instructions after the last pass.
    pub fn final_count(&self) -> usize {
        self.steps.last().map_or(self.initial, |s| s.instrs)
    }
}

/// Optimise `program` with the passes `config` enables, knowing nothing of the inputs'
/// shapes and dtypes: the rewrites that need a slot's shape or dtype (identity reshapes and
/// broadcasts, conj folding, which needs to know the operand is complex) apply only where it
/// follows from constants and op parameters. Use [`optimize_for`] when the input metadata is
/// known (a trace always knows it).
///
/// # Errors
/// `Internal` when `program` is malformed (a rewrite produced an invalid program: a pass bug,
/// reported instead of run).
pub fn optimize(program: &Program, config: &PassConfig) -> Result<(Program, PassReport)> {
    run_passes(program, None, config)
}

/// Optimise `program` whose inputs have the dtypes and shapes `inputs` (one entry per program
/// input): as [`optimize`], with every slot's shape and dtype inferred by the catalog.
///
/// # Errors
/// `Internal` when `inputs` does not have one entry per program input or a rewrite produced an
/// invalid program.
pub fn optimize_for(
    program: &Program,
    inputs: &[(DType, Vec<usize>)],
    config: &PassConfig,
) -> Result<(Program, PassReport)> {
    if inputs.len() != program.n_inputs() {
        return Err(Error::internal(
            "optimize",
            format!(
                "a program of {} inputs given metadata for {}",
                program.n_inputs(),
                inputs.len()
            ),
        ));
    }
    run_passes(program, Some(inputs), config)
}

fn run_passes(
    program: &Program,
    inputs: Option<&[(DType, Vec<usize>)]>,
    config: &PassConfig,
) -> Result<(Program, PassReport)> {
    let initial = program.instrs().len();
    // Slot metadata is inferred once, on the program given; every pass reports which old slot
    // each of its slots stands for, and `orig` follows that to the original slot.
    let table = if config.layout || config.fold_conj {
        infer_metas(program, inputs)
    } else {
        Vec::new()
    };
    let mut orig: Vec<usize> = (0..program.n_slots()).collect();
    let mut p = program.clone();
    let mut steps = Vec::with_capacity(Pass::ALL.len());
    for pass in Pass::ALL {
        let ran = config.enabled(pass);
        let mut rewrites = 0;
        if ran {
            let metas = Metas {
                table: &table,
                orig: &orig,
            };
            let (q, n, origin) = match pass {
                Pass::Dce | Pass::FinalDce => dce(&p)?,
                Pass::Cse => cse(&p)?,
                Pass::Layout => layout(&p, &metas)?,
                Pass::FoldTranspose => fold_transpose(&p)?,
                Pass::FoldConj => fold_conj(&p, &metas, config.fold_transpose)?,
            };
            orig = origin.iter().map(|&o| orig[o]).collect();
            p = q;
            rewrites = n;
        }
        steps.push(PassStep {
            pass,
            ran,
            instrs: p.instrs().len(),
            rewrites,
        });
    }
    // Every pass ends in `Program::new`, which recomputes last use; rebuild once more so a
    // program with every pass off is also fresh.
    let p = Program::new(
        p.n_inputs(),
        p.consts().to_vec(),
        p.instrs().to_vec(),
        p.outputs().to_vec(),
    )?;
    Ok((p, PassReport { initial, steps }))
}

// ---------------------------------------------------------------------------------------------
// Slot metadata (partial: unknown input shapes stay unknown).

/// What is known of a slot.
#[derive(Clone, Debug, Default)]
struct Meta {
    dtype: Option<DType>,
    shape: Option<Vec<usize>>,
}

/// The metadata of the current program's slots: `table` holds the original program's,
/// `orig` maps a current slot to the original slot of the same value.
struct Metas<'a> {
    table: &'a [Meta],
    orig: &'a [usize],
}

impl Metas<'_> {
    fn get(&self, slot: usize) -> &Meta {
        &self.table[self.orig[slot]]
    }
}

/// Per slot of `p`: its dtype and shape where the inputs' metadata (if given), the constants
/// and the op parameters determine them. One forward walk; each step costs its operands'
/// ranks.
fn infer_metas(p: &Program, inputs: Option<&[(DType, Vec<usize>)]>) -> Vec<Meta> {
    let mut metas: Vec<Meta> = Vec::with_capacity(p.n_slots());
    match inputs {
        Some(ins) => metas.extend(ins.iter().map(|(d, s)| Meta {
            dtype: Some(*d),
            shape: Some(s.clone()),
        })),
        None => metas.resize(p.n_inputs(), Meta::default()),
    }
    metas.extend(p.consts().iter().map(|t| Meta {
        dtype: Some(t.dtype()),
        shape: Some(t.shape().to_vec()),
    }));
    for ins in p.instrs() {
        let n_out = ins.op.num_outputs();
        let known: Option<Vec<(DType, &[usize])>> = ins
            .inputs
            .iter()
            .map(|&i| Some((metas[i].dtype?, metas[i].shape.as_deref()?)))
            .collect();
        if let Some(Ok(outs)) = known.map(|k| infer_outputs(&ins.op, &k)) {
            metas.extend(outs.into_iter().map(|m| Meta {
                dtype: Some(m.dtype),
                shape: Some(m.shape),
            }));
            continue;
        }
        // Partial knowledge: layout ops keep the dtype; their parameters give the shape.
        let x = ins
            .inputs
            .first()
            .map(|&i| metas[i].clone())
            .unwrap_or_default();
        let partial = match &ins.op {
            Op::Reshape(shape) | Op::BroadcastInDim { shape, .. } => Some(Meta {
                dtype: x.dtype,
                shape: Some(shape.clone()),
            }),
            Op::Transpose(perm) => Some(Meta {
                dtype: x.dtype,
                shape: x
                    .shape
                    .as_ref()
                    .filter(|s| s.len() == perm.len())
                    .map(|s| perm.iter().map(|&q| s[q]).collect()),
            }),
            _ => None,
        };
        match partial {
            Some(m) if n_out == 1 => metas.push(m),
            _ => metas.resize(metas.len() + n_out, Meta::default()),
        }
    }
    metas
}

// ---------------------------------------------------------------------------------------------
// The rebuilding walk shared by the rewriting passes.

/// A pass's result: the program, its number of rewrites, and per slot an old slot holding the
/// same value.
type Rewritten = (Program, usize, Vec<usize>);

/// Rebuilds a program instruction by instruction: each old instruction is either emitted (maybe
/// with another op or other operands) or its single output becomes an alias of a slot already
/// in the new program.
struct Rewriter<'a> {
    old: &'a Program,
    /// Old slot → new slot.
    map: Vec<usize>,
    instrs: Vec<Instr>,
    /// New slot → the new instruction defining it, for single-output instructions.
    producer: Vec<Option<usize>>,
    /// New slot → an old slot holding the same value (its metadata).
    origin: Vec<usize>,
    rewrites: usize,
}

impl<'a> Rewriter<'a> {
    fn new(old: &'a Program) -> Rewriter<'a> {
        let base = old.n_inputs() + old.consts().len();
        let mut map = Vec::with_capacity(old.n_slots());
        map.extend(0..base);
        Rewriter {
            old,
            map,
            instrs: Vec::with_capacity(old.instrs().len()),
            producer: vec![None; base],
            origin: (0..base).collect(),
            rewrites: 0,
        }
    }

    /// The new slot of old slot `s`.
    fn slot(&self, s: usize) -> usize {
        self.map[s]
    }

    /// The instruction defining new slot `s` (single-output instructions only).
    fn def(&self, s: usize) -> Option<&Instr> {
        self.producer[s].map(|k| &self.instrs[k])
    }

    /// Emit `op(inputs)` (new slots) for the old instruction whose first output is old slot
    /// `out`.
    fn emit(&mut self, op: Op, inputs: Vec<usize>, out: usize) {
        let n = op.num_outputs();
        let k = self.instrs.len();
        debug_assert_eq!(self.map.len(), out);
        for j in 0..n {
            self.map.push(self.origin.len());
            self.origin.push(out + j);
            self.producer.push((n == 1).then_some(k));
        }
        self.instrs.push(Instr { op, inputs });
    }

    /// The old instruction whose outputs start at old slot `out` is unchanged but for its
    /// operands' renumbering.
    fn keep(&mut self, ins: &Instr, out: usize) {
        let inputs = ins.inputs.iter().map(|&i| self.slot(i)).collect();
        self.emit(ins.op.clone(), inputs, out);
    }

    /// Old slots `out..out + n` are the new slots `to..to + n` (a value computed already).
    fn alias(&mut self, out: usize, to: usize, n: usize) {
        debug_assert_eq!(self.map.len(), out);
        self.map.extend(to..to + n);
        self.rewrites += 1;
    }

    /// The new program, the number of rewrites, and per new slot an old slot of its value.
    fn finish(self) -> Result<Rewritten> {
        let outputs = self.old.outputs().iter().map(|&o| self.map[o]).collect();
        let p = Program::new(
            self.old.n_inputs(),
            self.old.consts().to_vec(),
            self.instrs,
            outputs,
        )?;
        Ok((p, self.rewrites, self.origin))
    }
}

/// `(instr, its first output slot)` for every instruction of `p`, in order.
fn walk(p: &Program) -> impl Iterator<Item = (&Instr, usize)> {
    let mut next = p.n_inputs() + p.consts().len();
    p.instrs().iter().map(move |ins| {
        let out = next;
        next += ins.op.num_outputs();
        (ins, out)
    })
}

// ---------------------------------------------------------------------------------------------
// 1, 6: dead-code elimination.

/// Drop every instruction none of whose outputs an output needs (a several-output instruction
/// lives if any output is needed), and every constant nothing reads. One backward walk
/// (liveness) and one forward walk (renumbering): `O(instructions + operands)`.
fn dce(p: &Program) -> Result<Rewritten> {
    let n_in = p.n_inputs();
    let mut live = vec![false; p.n_slots()];
    for &o in p.outputs() {
        live[o] = true;
    }
    let starts: Vec<usize> = walk(p).map(|(_, out)| out).collect();
    let mut keep = vec![false; p.instrs().len()];
    for (k, ins) in p.instrs().iter().enumerate().rev() {
        let out = starts[k];
        if live[out..out + ins.op.num_outputs()].iter().any(|&l| l) {
            keep[k] = true;
            for &i in &ins.inputs {
                live[i] = true;
            }
        }
    }
    let mut map = vec![usize::MAX; p.n_slots()];
    map[..n_in].iter_mut().enumerate().for_each(|(i, m)| *m = i);
    let mut origin: Vec<usize> = (0..n_in).collect();
    let mut consts = Vec::new();
    for (c, t) in p.consts().iter().enumerate() {
        if live[n_in + c] {
            map[n_in + c] = n_in + consts.len();
            origin.push(n_in + c);
            consts.push(t.clone());
        }
    }
    let mut next = n_in + consts.len();
    let mut instrs = Vec::with_capacity(keep.iter().filter(|&&k| k).count());
    for (k, ins) in p.instrs().iter().enumerate() {
        if !keep[k] {
            continue;
        }
        for j in 0..ins.op.num_outputs() {
            map[starts[k] + j] = next + j;
            origin.push(starts[k] + j);
        }
        next += ins.op.num_outputs();
        instrs.push(Instr {
            op: ins.op.clone(),
            inputs: ins.inputs.iter().map(|&i| map[i]).collect(),
        });
    }
    let outputs = p.outputs().iter().map(|&o| map[o]).collect();
    Ok((Program::new(n_in, consts, instrs, outputs)?, 0, origin))
}

// ---------------------------------------------------------------------------------------------
// 2: common-subexpression elimination.

/// Hash-consing: an instruction whose op (with its parameters) and renumbered operand slots
/// equal an earlier one's is replaced by that one's outputs. Ops hash by their parameters
/// (floats by their bits) and compare by `==` and then by their `Debug` text, which spells
/// floats exactly: `-0.0` never merges with `0.0`, and an op with a NaN parameter never merges
/// (`==` is false). One forward walk with a hash map: expected `O(instructions + parameters)`.
fn cse(p: &Program) -> Result<Rewritten> {
    let mut rw = Rewriter::new(p);
    // Hash → (new instruction, its first output slot), for every emitted instruction.
    let mut seen: HashMap<u64, Vec<(usize, usize)>> = HashMap::with_capacity(p.instrs().len());
    for (ins, out) in walk(p) {
        let inputs: Vec<usize> = ins.inputs.iter().map(|&i| rw.slot(i)).collect();
        let mut h = DefaultHasher::new();
        hash_op(&ins.op, &mut h);
        inputs.hash(&mut h);
        let key = h.finish();
        let found = seen.get(&key).and_then(|cands| {
            cands.iter().find_map(|&(k, first)| {
                let prev = &rw.instrs[k];
                (prev.inputs == inputs && same_op(&prev.op, &ins.op)).then_some(first)
            })
        });
        match found {
            Some(first) => rw.alias(out, first, ins.op.num_outputs()),
            None => {
                let entry = (rw.instrs.len(), rw.origin.len());
                rw.emit(ins.op.clone(), inputs, out);
                seen.entry(key).or_default().push(entry);
            }
        }
    }
    rw.finish()
}

/// A 64-bit fingerprint of `program` with inputs `inputs` (dtypes and shapes): its
/// instructions (ops and parameters, floats by their bits, and operand slots), outputs, and
/// constants by identity (storage, offset, dtype, shape, strides: the program holds them, so an
/// address cannot be reused while it lives). Equal programs over the same constants give equal
/// fingerprints, so the derivative caches (`graph-mode.md`) serve re-traced programs too.
pub fn fingerprint(program: &Program, inputs: &[(DType, Vec<usize>)]) -> u64 {
    let mut h = DefaultHasher::new();
    program.n_inputs().hash(&mut h);
    for (d, s) in inputs {
        d.name().hash(&mut h);
        s.hash(&mut h);
    }
    for c in program.consts() {
        (std::sync::Arc::as_ptr(c.storage()) as *const () as usize).hash(&mut h);
        c.offset().hash(&mut h);
        c.dtype().name().hash(&mut h);
        c.shape().hash(&mut h);
        c.strides().hash(&mut h);
    }
    for ins in program.instrs() {
        hash_op(&ins.op, &mut h);
        ins.inputs.hash(&mut h);
    }
    program.outputs().hash(&mut h);
    h.finish()
}

/// Equal ops with bitwise-equal float parameters (`==` alone equates `0.0` and `-0.0`).
fn same_op(a: &Op, b: &Op) -> bool {
    a == b && format!("{a:?}") == format!("{b:?}")
}

/// Hash `op` and its parameters (floats by their bits).
fn hash_op(op: &Op, h: &mut DefaultHasher) {
    std::mem::discriminant(op).hash(h);
    match op {
        Op::Unary(u) => u.hash(h),
        Op::Binary(b) => b.hash(h),
        Op::Compare(d) => d.hash(h),
        Op::Select | Op::Clamp | Op::DynamicUpdateSlice | Op::Matmul => {}
        Op::Convert(d) | Op::Cast(d) => d.hash(h),
        Op::Transpose(v) | Op::Reshape(v) | Op::Reverse(v) => v.hash(h),
        Op::BroadcastInDim { shape, dims } => {
            shape.hash(h);
            dims.hash(h);
        }
        Op::Reduce { op, axes } => {
            op.hash(h);
            axes.hash(h);
        }
        Op::Slice(c) => c.hash(h),
        Op::Pad(c) => c.hash(h),
        Op::DynamicSlice { sizes } => sizes.hash(h),
        Op::Concatenate { axis } => axis.hash(h),
        Op::Gather(c) => c.hash(h),
        Op::Scatter(c) => c.hash(h),
        Op::Fft(c) => c.hash(h),
        Op::ExtractDiag { a, b } | Op::EmbedDiag { a, b } => (a, b).hash(h),
        Op::Tril(k) | Op::Triu(k) => k.hash(h),
        Op::DotGeneral(c) => c.hash(h),
        Op::DotGeneralWithConj {
            config,
            lhs_conj,
            rhs_conj,
        } => (config, lhs_conj, rhs_conj).hash(h),
        Op::ScaleReal(x) => x.to_bits().hash(h),
        Op::ScaleComplex(z) => (z.re.to_bits(), z.im.to_bits()).hash(h),
        Op::Linalg(l) => match l {
            LinalgOp::Svd { full_matrices, eps } => (full_matrices, eps.to_bits()).hash(h),
            LinalgOp::Qr { complete } => complete.hash(h),
            LinalgOp::Eigh { eps } => eps.to_bits().hash(h),
            LinalgOp::TriangularSolve { lower } => lower.hash(h),
            LinalgOp::Svdvals
            | LinalgOp::Eigvalsh
            | LinalgOp::Eig
            | LinalgOp::Cholesky
            | LinalgOp::Lu
            | LinalgOp::Solve
            | LinalgOp::Slogdet => std::mem::discriminant(l).hash(h),
        },
        Op::Sort { axis, descending } | Op::Argsort { axis, descending } => {
            (axis, descending).hash(h)
        }
        Op::Argmax(a) | Op::Argmin(a) | Op::Cumsum(a) | Op::Cumprod(a) => a.hash(h),
        Op::SearchSorted { right } => right.hash(h),
    }
}

// ---------------------------------------------------------------------------------------------
// 3: algebraic layout simplification.

fn is_identity(perm: &[usize]) -> bool {
    perm.iter().enumerate().all(|(i, &p)| i == p)
}

/// Identity transposes, reshapes and broadcasts become aliases of their operand;
/// `transpose∘transpose`, `reshape∘reshape` and `broadcast_in_dim∘broadcast_in_dim` become one
/// op on the inner operand (the inner op is left to dead-code elimination). One forward walk;
/// each step costs its parameters' length.
fn layout(p: &Program, metas: &Metas<'_>) -> Result<Rewritten> {
    let mut rw = Rewriter::new(p);
    for (ins, out) in walk(p) {
        let rewritten = match &ins.op {
            Op::Transpose(perm) => {
                let x = rw.slot(ins.inputs[0]);
                let inner = match rw.def(x).map(|d| (&d.op, &d.inputs)) {
                    Some((Op::Transpose(q), inputs)) if q.len() == perm.len() => {
                        // out[i] = t[perm[i]] = z[q[perm[i]]].
                        Some((perm.iter().map(|&i| q[i]).collect::<Vec<_>>(), inputs[0]))
                    }
                    _ => None,
                };
                match inner {
                    Some((c, z)) if is_identity(&c) => Some(Err(z)),
                    Some((c, z)) => Some(Ok((Op::Transpose(c), z))),
                    None if is_identity(perm) => Some(Err(x)),
                    None => None,
                }
            }
            Op::Reshape(shape) => {
                let x = rw.slot(ins.inputs[0]);
                let inner = match rw.def(x).map(|d| (&d.op, &d.inputs)) {
                    Some((Op::Reshape(_), inputs)) => Some(inputs[0]),
                    _ => None,
                };
                let z = inner.unwrap_or(x);
                if metas.get(rw.origin[z]).shape.as_ref() == Some(shape) {
                    Some(Err(z))
                } else {
                    inner.map(|z| Ok((Op::Reshape(shape.clone()), z)))
                }
            }
            Op::BroadcastInDim { shape, dims } => {
                let x = rw.slot(ins.inputs[0]);
                let inner = match rw.def(x).map(|d| (&d.op, &d.inputs)) {
                    // x axis j → t axis d1[j] → out axis dims[d1[j]]; sizes stay compatible
                    // (1 or equal at each step).
                    Some((Op::BroadcastInDim { dims: d1, .. }, inputs))
                        if d1.iter().all(|&d| d < dims.len()) =>
                    {
                        Some((d1.iter().map(|&d| dims[d]).collect::<Vec<_>>(), inputs[0]))
                    }
                    _ => None,
                };
                let (d, z) = match &inner {
                    Some((d, z)) => (d.as_slice(), *z),
                    None => (dims.as_slice(), x),
                };
                if d.len() == shape.len()
                    && is_identity(d)
                    && metas.get(rw.origin[z]).shape.as_ref() == Some(shape)
                {
                    Some(Err(z))
                } else {
                    inner.map(|(d, z)| {
                        Ok((
                            Op::BroadcastInDim {
                                shape: shape.clone(),
                                dims: d,
                            },
                            z,
                        ))
                    })
                }
            }
            _ => None,
        };
        match rewritten {
            None => rw.keep(ins, out),
            Some(Err(alias)) => rw.alias(out, alias, 1),
            Some(Ok((op, z))) => {
                rw.rewrites += 1;
                rw.emit(op, vec![z], out);
            }
        }
    }
    rw.finish()
}

// ---------------------------------------------------------------------------------------------
// 4: transpose folding into dot_general.

/// The config of `dot_general(transpose(z, perm), ·)` (`lhs`) or `dot_general(·,
/// transpose(z, perm))` as a contraction of `z`, when the output axis order is unchanged: the
/// free axes keep their relative order under `perm` (contracting and batch axes may move
/// freely: they are paired by position). `None` otherwise.
fn fold_perm(c: &DotGeneralConfig, perm: &[usize], lhs: bool) -> Option<DotGeneralConfig> {
    let (contracting, batch) = if lhs {
        (&c.lhs_contracting_dims, &c.lhs_batch_dims)
    } else {
        (&c.rhs_contracting_dims, &c.rhs_batch_dims)
    };
    if contracting.iter().chain(batch).any(|&d| d >= perm.len()) {
        return None;
    }
    let free = if lhs {
        c.lhs_free(perm.len())
    } else {
        c.rhs_free(perm.len())
    };
    if free.windows(2).any(|w| perm[w[0]] > perm[w[1]]) {
        return None;
    }
    let contracting: Vec<usize> = contracting.iter().map(|&d| perm[d]).collect();
    let batch: Vec<usize> = batch.iter().map(|&d| perm[d]).collect();
    let mut out = c.clone();
    if lhs {
        out.lhs_contracting_dims = contracting;
        out.lhs_batch_dims = batch;
    } else {
        out.rhs_contracting_dims = contracting;
        out.rhs_batch_dims = batch;
    }
    Some(out)
}

/// The config of a `dot_general` or `dot_general_with_conj`, and a constructor of the same op
/// kind with another config.
fn dot_config(op: &Op) -> Option<&DotGeneralConfig> {
    match op {
        Op::DotGeneral(c) | Op::DotGeneralWithConj { config: c, .. } => Some(c),
        _ => None,
    }
}

fn with_config(op: &Op, config: DotGeneralConfig) -> Op {
    match op {
        Op::DotGeneralWithConj {
            lhs_conj, rhs_conj, ..
        } => Op::DotGeneralWithConj {
            config,
            lhs_conj: *lhs_conj,
            rhs_conj: *rhs_conj,
        },
        _ => Op::DotGeneral(config),
    }
}

/// A transpose feeding an operand of `dot_general`/`dot_general_with_conj` is absorbed into the
/// dimension numbers when that leaves the output's axis order unchanged ([`fold_perm`]); the
/// transpose is left to dead-code elimination. One forward walk; each step costs its operands'
/// ranks.
fn fold_transpose(p: &Program) -> Result<Rewritten> {
    let mut rw = Rewriter::new(p);
    for (ins, out) in walk(p) {
        let Some(c) = dot_config(&ins.op) else {
            rw.keep(ins, out);
            continue;
        };
        let mut config = c.clone();
        let mut inputs: Vec<usize> = ins.inputs.iter().map(|&i| rw.slot(i)).collect();
        let mut changed = false;
        for (side, lhs) in [(0, true), (1, false)] {
            let folded = match rw.def(inputs[side]).map(|d| (&d.op, &d.inputs)) {
                Some((Op::Transpose(perm), t_in)) => {
                    fold_perm(&config, perm, lhs).map(|c| (c, t_in[0]))
                }
                _ => None,
            };
            if let Some((c, z)) = folded {
                config = c;
                inputs[side] = z;
                changed = true;
            }
        }
        if changed {
            rw.rewrites += 1;
        }
        rw.emit(with_config(&ins.op, config), inputs, out);
    }
    rw.finish()
}

// ---------------------------------------------------------------------------------------------
// 5: conj folding into dot_general.

/// A `conj` of a complex value feeding an operand of `dot_general`/`dot_general_with_conj`
/// becomes that operand's conjugation flag (toggled), reading the value before `conj`; the
/// `conj` is left to dead-code elimination. Only operands whose dtype is known complex fold
/// (conjugating after promotion would flip the sign of a real operand's zero imaginary part).
/// With `transposes` (transpose folding on), a transpose the removed `conj` hid
/// (`conj(transpose(z))`, which pass 4 could not see) is then folded as in pass 4.
/// One forward walk; each step costs its operands' ranks.
fn fold_conj(p: &Program, metas: &Metas<'_>, transposes: bool) -> Result<Rewritten> {
    let mut rw = Rewriter::new(p);
    for (ins, out) in walk(p) {
        let Some(c) = dot_config(&ins.op) else {
            rw.keep(ins, out);
            continue;
        };
        let mut config = c.clone();
        let mut flags = match &ins.op {
            Op::DotGeneralWithConj {
                lhs_conj, rhs_conj, ..
            } => [*lhs_conj, *rhs_conj],
            _ => [false, false],
        };
        let mut inputs: Vec<usize> = ins.inputs.iter().map(|&i| rw.slot(i)).collect();
        let mut changed = false;
        for (side, flag) in flags.iter_mut().enumerate() {
            let z = match rw.def(inputs[side]).map(|d| (&d.op, &d.inputs)) {
                Some((Op::Unary(UnaryOp::Conj), t_in)) => t_in[0],
                _ => continue,
            };
            if !metas.get(rw.origin[z]).dtype.is_some_and(DType::is_complex) {
                continue;
            }
            *flag = !*flag;
            inputs[side] = z;
            changed = true;
            if !transposes {
                continue;
            }
            let folded = match rw.def(z).map(|d| (&d.op, &d.inputs)) {
                Some((Op::Transpose(perm), t_in)) => {
                    fold_perm(&config, perm, side == 0).map(|c| (c, t_in[0]))
                }
                _ => None,
            };
            if let Some((c, t)) = folded {
                config = c;
                inputs[side] = t;
            }
        }
        if !changed {
            rw.emit(ins.op.clone(), inputs, out);
            continue;
        }
        rw.rewrites += 1;
        let op = if flags == [false, false] {
            Op::DotGeneral(config)
        } else {
            Op::DotGeneralWithConj {
                config,
                lhs_conj: flags[0],
                rhs_conj: flags[1],
            }
        };
        rw.emit(op, inputs, out);
    }
    rw.finish()
}

// ---------------------------------------------------------------------------------------------
// Constant folding (prepare time).

/// Execute on `engine` (through [`crate::apply_multi`]) every instruction whose operands are
/// all constants (or outputs of such instructions), once, and make its outputs constants of
/// the returned program; constants nothing reads any more are dropped. An instruction whose
/// execution fails (a value-dependent error such as integer division by zero) is kept, so the
/// error is raised when the program runs, with the eager class and message. Inputs and outputs
/// keep their number and order. One forward walk plus the folded steps' execution.
///
/// # Errors
/// `Internal` when the rebuilt program is malformed (a bug).
pub fn fold_constants(program: &Program, engine: &dyn Engine) -> Result<Program> {
    let n_in = program.n_inputs();
    let mut consts: Vec<Tensor> = program.consts().to_vec();
    // Old slot → Ok(constant index) or Err(new instruction-output slot offset from the
    // instruction outputs' base).
    let mut map: Vec<std::result::Result<usize, usize>> = (0..n_in).map(Err).collect();
    map.extend((0..consts.len()).map(Ok));
    let mut kept: Vec<(Op, Vec<std::result::Result<usize, usize>>)> = Vec::new();
    let mut n_out = 0usize;
    for (ins, _) in walk(program) {
        let n = ins.op.num_outputs();
        let args: Option<Vec<&Tensor>> = ins
            .inputs
            .iter()
            .map(|&i| map[i].ok().map(|c| &consts[c]))
            .collect();
        let values = args.and_then(|a| crate::apply_multi(engine, &ins.op, &a).ok());
        match values {
            Some(vs) if vs.len() == n => {
                for v in vs {
                    map.push(Ok(consts.len()));
                    consts.push(v);
                }
            }
            _ => {
                kept.push((ins.op.clone(), ins.inputs.iter().map(|&i| map[i]).collect()));
                map.extend((n_out..n_out + n).map(|s| Err(n_in + s)));
                n_out += n;
            }
        }
    }
    // Slots: inputs, all constants, then the kept instructions' outputs; `dce` drops the
    // constants nothing reads.
    let base = n_in + consts.len();
    let resolve = |r: std::result::Result<usize, usize>| match r {
        Ok(c) => n_in + c,
        Err(s) if s < n_in => s,
        Err(s) => base + (s - n_in),
    };
    let instrs = kept
        .into_iter()
        .map(|(op, inputs)| Instr {
            op,
            inputs: inputs.into_iter().map(resolve).collect(),
        })
        .collect();
    let outputs = program.outputs().iter().map(|&o| resolve(map[o])).collect();
    Ok(dce(&Program::new(n_in, consts, instrs, outputs)?)?.0)
}

/// Whether `t` is a real floating-point tensor whose every element is exactly `1.0` (tensors
/// of more than a million elements are not looked at).
fn all_ones(t: &Tensor) -> bool {
    if t.numel() > 1 << 20 {
        return false;
    }
    match t.dtype() {
        DType::F64 => t.to_vec::<f64>().iter().all(|&v| v == 1.0),
        DType::F32 => t.to_vec::<f32>().iter().all(|&v| v == 1.0),
        _ => false,
    }
}

/// Prepare-time identity folding (`graph-mode.md`, "Passes": the prepare-time folds): an
/// elementwise multiplication `c * y` or `y * c` by a constant `c` of exact ones, in a real
/// floating-point dtype, whose output has `y`'s dtype and shape, is `y` — `y * 1.0 == y` bit for
/// bit in IEEE arithmetic, quiet NaNs, infinities and signed zeros included (only a signalling
/// NaN, which a multiplication would quiet, passes unchanged). Such products come from the
/// seeds of reverse mode (a cotangent of ones times a local derivative). Complex products are
/// never folded (`(a + bi)(1 + 0i)` turns an infinite part into NaN). `inputs` are the
/// program inputs' dtypes and shapes; the constants nothing reads any more are dropped. One
/// forward walk.
///
/// # Errors
/// `Internal` when the rebuilt program is malformed (a bug).
pub fn fold_unit_factors(program: &Program, inputs: &[(DType, Vec<usize>)]) -> Result<Program> {
    let n_in = program.n_inputs();
    let consts = program.consts();
    let is_const = |s: usize| s >= n_in && s < n_in + consts.len();
    let ones: Vec<bool> = consts.iter().map(all_ones).collect();
    if !ones.contains(&true) || inputs.len() != n_in {
        return Ok(program.clone());
    }
    let metas = infer_metas(program, Some(inputs));
    let mut rw = Rewriter::new(program);
    for (ins, out) in walk(program) {
        let unit = |s: usize| is_const(s) && ones[s - n_in];
        let other = match (&ins.op, ins.inputs.as_slice()) {
            (Op::Binary(tenferro_ops::BinaryOp::Mul), &[a, b]) if unit(a) && !is_const(b) => {
                Some(b)
            }
            (Op::Binary(tenferro_ops::BinaryOp::Mul), &[a, b]) if unit(b) && !is_const(a) => {
                Some(a)
            }
            _ => None,
        };
        let same = |y: usize| {
            let (m, o) = (&metas[y], &metas[out]);
            matches!(o.dtype, Some(DType::F64 | DType::F32))
                && m.dtype.is_some()
                && m.dtype == o.dtype
                && m.shape.is_some()
                && m.shape == o.shape
        };
        match other {
            Some(y) if same(y) => {
                let to = rw.slot(y);
                rw.alias(out, to, 1);
            }
            _ => rw.keep(ins, out),
        }
    }
    if rw.rewrites == 0 {
        return Ok(program.clone());
    }
    Ok(dce(&rw.finish()?.0)?.0)
}
