//! Compiled calls (`graph-mode.md`, "Automatic differentiation", grad of jit): a compiled
//! program run on tracked inputs records one [`NodeKind::Custom`](crate::NodeKind::Custom) node
//! whose rules are programs *derived* from the compiled program by the rule table — the program
//! is replayed on symbols with recording, and the table's rules emit its VJP or JVP into a new
//! program ([`Emitter`]). The derived programs are optimised by the same passes, kept in the
//! runtime's **AD-transform cache** and prepared per engine in its **prepared-derivative
//! cache** ([`AdCaches`], the tenferro-rs names), keyed by the program's fingerprint, the
//! runtime's epoch, the mask of active inputs (and, through the fingerprint, the inputs' shapes
//! and dtypes) and, for prepared plans, the engine kind.
//!
//! Three derivations per (program, active mask):
//!
//! * **split** (first-order reverse mode): the joint forward-and-backward program, optimised as
//!   one (CSE shares their work), cut in two: `fwd: x → (y, r)` and `bwd: (r, ȳ) → x̄`. The
//!   residuals `r` are exactly the forward values the backward part reads — decided by the
//!   derivative program, nothing else is kept. A tracked call runs `fwd` and keeps `r`.
//! * **vjp** `(x, ȳ) → x̄` (recomputes the forward part): used when the backward pass is itself
//!   recorded (`create_graph`), so its node depends on `x` directly and any order composes.
//! * **jvp** `(x, ẋ) → ẏ` for forward mode.
//!
//! Every derived program is itself a [`CompiledCall`]: run through [`crate::Apply::apply_call`],
//! it records its own node when its inputs are tracked, so `grad(grad(jit f))` and
//! `jvp(grad(jit f))` derive from the derived programs in turn.

use crate::{jvp_graph_all, Emitter};
use crate::{record, record_multi, rules, vjp_graph_all, Apply, Ctx, CustomRule, Node, Value, Var};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tenferro_runtime::{
    fingerprint, optimize_for, prepared_key, CacheStats, Engine, Instr, PassConfig, PlanCache,
    PreparedGraph, Program,
};
use tenferro_tensor::{DType, Error, Result};

/// Plan-cache key tag of derived programs (the AD-transform cache).
const TRANSFORM_TAG: i64 = -0x4144_5452; // "ADTR"
/// Plan-cache key tag of prepared derived programs (the prepared-derivative cache).
const PREPARED_DERIVATIVE_TAG: i64 = -0x4144_5052; // "ADPR"

/// Default entry limit of each derivative cache (tenferro-rs).
pub const DEFAULT_CACHE_ENTRIES: usize = 128;
/// Default retained-bytes limit of each derivative cache (tenferro-rs): 64 MiB.
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// Derivative programs of a compiled program supplied by its maker instead of derived by
/// replaying it: a traced function that called `tf.custom_vjp` / `tf.custom_jvp` functions,
/// whose rules are not primitives of the program. Graph mode traces the function again under
/// `tf.func` (the custom rules' own bodies are emitted) to supply them.
pub trait SuppliedDerivatives: Send + Sync + std::fmt::Debug {
    /// A process-unique id (part of the fingerprint of the programs it serves).
    fn id(&self) -> u64;

    /// The joint program `(x, ȳ) → (y, x̄_active)` for the active inputs `mask`, where the
    /// outputs `y` have the dtypes and shapes `outputs` (the layout of [`CompiledCall`]'s own
    /// derivation).
    ///
    /// # Errors
    /// The trace's errors.
    fn joint_vjp(&self, mask: &[bool], outputs: &[(DType, Vec<usize>)]) -> Result<Program>;

    /// The JVP program `(x, ẋ_active) → ẏ`.
    ///
    /// # Errors
    /// The trace's errors (`TypeError` for a `custom_vjp` function).
    fn jvp(&self, mask: &[bool]) -> Result<Program>;

    /// The rules that run the function itself under the transforms (its custom rules as
    /// recorded nodes), for derivatives that are recorded in turn (higher order): the derived
    /// programs are made of primitives, which do not know the custom rules.
    fn recorded_rule(&self, n_inputs: usize, n_outputs: usize) -> Arc<dyn CustomRule>;
}

/// A compiled program that can be called on AD values: the optimised program, its inputs'
/// dtypes and shapes, and its fingerprint (the derivative caches' key).
#[derive(Debug)]
pub struct CompiledCall {
    name: String,
    program: Arc<Program>,
    inputs: Vec<(DType, Vec<usize>)>,
    fingerprint: u64,
    supplied: Option<Arc<dyn SuppliedDerivatives>>,
    /// Dtype and shape of each output (inferred on first use).
    outputs: std::sync::OnceLock<Vec<(DType, Vec<usize>)>>,
}

impl CompiledCall {
    /// `program` (already optimised) over inputs of these dtypes and shapes, named `name` in
    /// errors.
    ///
    /// # Errors
    /// `Internal` when `inputs` does not have one entry per program input.
    pub fn new(
        name: &str,
        program: Arc<Program>,
        inputs: Vec<(DType, Vec<usize>)>,
    ) -> Result<Arc<CompiledCall>> {
        Ok(Arc::new(CompiledCall::build(name, program, inputs)?))
    }

    fn build(
        name: &str,
        program: Arc<Program>,
        inputs: Vec<(DType, Vec<usize>)>,
    ) -> Result<CompiledCall> {
        if inputs.len() != program.n_inputs() {
            return Err(Error::internal(
                name,
                format!(
                    "a program of {} inputs described by {} input types",
                    program.n_inputs(),
                    inputs.len()
                ),
            ));
        }
        let fingerprint = fingerprint(&program, &inputs);
        Ok(CompiledCall {
            name: name.to_string(),
            program,
            inputs,
            fingerprint,
            supplied: None,
            outputs: std::sync::OnceLock::new(),
        })
    }

    /// [`CompiledCall::new`] whose first-order derivative programs come from `supplied`.
    ///
    /// # Errors
    /// As [`CompiledCall::new`].
    pub fn with_supplied(
        name: &str,
        program: Arc<Program>,
        inputs: Vec<(DType, Vec<usize>)>,
        supplied: Arc<dyn SuppliedDerivatives>,
    ) -> Result<Arc<CompiledCall>> {
        let mut c = CompiledCall::build(name, program, inputs)?;
        c.fingerprint =
            c.fingerprint.rotate_left(17) ^ supplied.id().wrapping_mul(0x9e37_79b9_7f4a_7c15);
        c.supplied = Some(supplied);
        Ok(Arc::new(c))
    }

    /// The name errors use.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The program.
    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    /// Dtype and shape of each input.
    pub fn inputs(&self) -> &[(DType, Vec<usize>)] {
        &self.inputs
    }

    /// The fingerprint (see [`tenferro_runtime::fingerprint`]).
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Approximate retained bytes.
    pub fn bytes(&self) -> usize {
        self.program.bytes() + 64 * self.inputs.len()
    }

    /// `Shape`/`DType`/`Value` unless `values` match the inputs in count, dtype and shape.
    ///
    /// # Errors
    /// As described, naming this call.
    pub fn check_inputs(&self, values: &[&Value]) -> Result<()> {
        if values.len() != self.inputs.len() {
            return Err(Error::value(
                &self.name,
                format!(
                    "the compiled graph takes {} inputs, got {}",
                    self.inputs.len(),
                    values.len()
                ),
            ));
        }
        for (i, (v, (dtype, shape))) in values.iter().zip(&self.inputs).enumerate() {
            if v.dtype() != *dtype {
                return Err(Error::dtype(
                    &self.name,
                    format!(
                        "input {i} has dtype {}, the graph was compiled for {dtype}",
                        v.dtype()
                    ),
                ));
            }
            if v.shape() != shape.as_slice() {
                return Err(Error::shape(
                    &self.name,
                    format!(
                        "input {i} has shape {:?}, the graph was compiled for {shape:?}",
                        v.shape()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Run the program instruction by instruction through `exec` (an emitting context appends
    /// it to its own program; an executing one records each step when `record`).
    ///
    /// # Errors
    /// The steps' errors; as [`CompiledCall::check_inputs`].
    pub fn inline<A: Apply + ?Sized>(
        &self,
        exec: &A,
        inputs: &[&Var],
        record: bool,
    ) -> Result<Vec<Var>> {
        let values: Vec<&Value> = inputs.iter().map(|v| &v.value).collect();
        self.check_inputs(&values)?;
        let owned: Vec<Var> = inputs.iter().map(|v| (*v).clone()).collect();
        self.program.run_with(
            &self.name,
            owned,
            |t| Var::constant(t.clone()),
            |_, ins, args| exec.apply_vars(&ins.op, args, record),
        )
    }

    /// Replay the program on `xs` in `em`, recording every step on the values that have nodes.
    fn replay(&self, em: &Emitter, xs: Vec<Var>) -> Result<Vec<Var>> {
        let rec = Recorder(em);
        self.program.run_with(
            &self.name,
            xs,
            |t| Var::untracked(em.constant_value(t.clone())),
            |_, ins, args| rec.apply_vars(&ins.op, args, true),
        )
    }

    /// The program's inputs in a new emitter: tracked leaves where `mask` is set.
    fn leaves(&self, em: &Emitter, mask: &[bool]) -> Vec<Var> {
        self.inputs
            .iter()
            .zip(mask)
            .map(|((d, s), &active)| {
                let value = em.input_value(*d, s);
                let node = active.then(|| Node::leaf(&value));
                Var { value, node }
            })
            .collect()
    }

    /// The joint program `(x, ȳ) → (y, x̄_active)` and the counts `(n_x, n_y, n_active)`
    /// (supplied, or derived by replaying the program).
    fn joint_vjp(&self, mask: &[bool]) -> Result<(Program, usize, usize, usize)> {
        let Some(s) = &self.supplied else {
            return self.replayed_joint_vjp(mask);
        };
        let outs = self.output_metas()?;
        let p = s.joint_vjp(mask, &outs)?;
        let (n_x, n_y) = (self.inputs.len(), outs.len());
        let n_active = mask.iter().filter(|&&m| m).count();
        if p.n_inputs() != n_x + n_y || p.outputs().len() != n_y + n_active {
            return Err(Error::internal(
                &self.name,
                format!(
                    "a supplied VJP program takes {} inputs and returns {} values, expected {} \
                     and {}",
                    p.n_inputs(),
                    p.outputs().len(),
                    n_x + n_y,
                    n_y + n_active
                ),
            ));
        }
        Ok((p, n_x, n_y, n_active))
    }

    /// [`CompiledCall::joint_vjp`] by replaying the program with recording.
    fn replayed_joint_vjp(&self, mask: &[bool]) -> Result<(Program, usize, usize, usize)> {
        let em = Emitter::new();
        let xs = self.leaves(&em, mask);
        let ys = self.replay(&em, xs.clone())?;
        let cts: Vec<Var> = ys
            .iter()
            .map(|y| em.input(y.value.dtype(), y.value.shape()))
            .collect();
        let ctx = Ctx {
            exec: &em,
            record: false,
        };
        let seeds: Vec<(Var, Var)> = ys
            .iter()
            .zip(&cts)
            .filter(|(y, _)| y.value.dtype().is_inexact())
            .map(|(y, c)| (y.clone(), c.clone()))
            .collect();
        let targets: Vec<Arc<Node>> = xs.iter().filter_map(|x| x.node.clone()).collect();
        let gs = vjp_graph_all(&ctx, &seeds, &targets)?;
        let mut outs: Vec<Var> = ys.clone();
        for (g, x) in gs.into_iter().zip(xs.iter().filter(|x| x.node.is_some())) {
            outs.push(match g {
                Some(g) => g,
                None => rules::ops::full(&ctx, 0.0, x.value.dtype(), x.value.shape())?,
            });
        }
        let refs: Vec<&Var> = outs.iter().collect();
        let n_active = targets.len();
        Ok((em.finish(&refs)?, xs.len(), ys.len(), n_active))
    }

    /// The metadata of `(x, ȳ)`: this call's inputs and its outputs' dtypes and shapes.
    fn x_and_outputs(&self) -> Result<Vec<(DType, Vec<usize>)>> {
        let mut metas = self.inputs.clone();
        metas.extend(self.output_metas()?);
        Ok(metas)
    }

    /// Dtype and shape of each output (inferred by the catalog once).
    ///
    /// # Errors
    /// Validation errors of the steps (a malformed program).
    pub fn output_metas(&self) -> Result<Vec<(DType, Vec<usize>)>> {
        if let Some(m) = self.outputs.get() {
            return Ok(m.clone());
        }
        let m = self.infer_output_metas()?;
        Ok(self.outputs.get_or_init(|| m).clone())
    }

    fn infer_output_metas(&self) -> Result<Vec<(DType, Vec<usize>)>> {
        let em = Emitter::new();
        let xs: Vec<Var> = self.inputs.iter().map(|(d, s)| em.input(*d, s)).collect();
        let refs: Vec<&Var> = xs.iter().collect();
        let ys = self.inline(&em, &refs, false)?;
        em.end();
        Ok(ys
            .iter()
            .map(|y| (y.value.dtype(), y.value.shape().to_vec()))
            .collect())
    }

    /// The joint program `(x, ȳ) → (y, x̄_active)`, optimised (the one derivation the split and
    /// the recomputing VJP are cut from).
    fn derive_joint(&self, mask: &[bool]) -> Result<CompiledCall> {
        let (joint, ..) = self.joint_vjp(mask)?;
        let metas = self.x_and_outputs()?;
        let (p, _) = optimize_for(&joint, &metas, &PassConfig::default())?;
        CompiledCall::build(&format!("{}.value_and_vjp", self.name), Arc::new(p), metas)
    }

    /// The reverse-mode split of the joint program `joint` of this call (see the module docs).
    fn derive_split(&self, joint: &CompiledCall) -> Result<Derivation> {
        let (n_x, n_y) = (self.inputs.len(), joint.inputs.len() - self.inputs.len());
        let metas = &joint.inputs;
        let joint = joint.program.as_ref();
        // Slots that depend on a cotangent input (slots n_x..n_x + n_y) are the backward part.
        let n_in = joint.n_inputs();
        let n_c = joint.consts().len();
        let mut dep = vec![false; joint.n_slots()];
        for d in dep.iter_mut().take(n_in).skip(n_x) {
            *d = true;
        }
        let mut slot = n_in + n_c;
        let mut backward = Vec::with_capacity(joint.instrs().len());
        for ins in joint.instrs() {
            let b = ins.inputs.iter().any(|&i| dep[i]);
            let n = ins.op.num_outputs();
            for d in dep.iter_mut().skip(slot).take(n) {
                *d = b;
            }
            backward.push(b);
            slot += n;
        }
        // Residuals: forward slots (inputs or instruction outputs, not constants) the backward
        // part reads or returns, in slot order.
        let is_const = |i: usize| i >= n_in && i < n_in + n_c;
        let grads = &joint.outputs()[n_y..];
        let mut res_flag = vec![false; joint.n_slots()];
        for (ins, &b) in joint.instrs().iter().zip(&backward) {
            if b {
                for &i in &ins.inputs {
                    if !dep[i] && !is_const(i) {
                        res_flag[i] = true;
                    }
                }
            }
        }
        for &g in grads {
            if !dep[g] && !is_const(g) {
                res_flag[g] = true;
            }
        }
        let residuals: Vec<usize> = (0..joint.n_slots()).filter(|&i| res_flag[i]).collect();
        let xs: Vec<usize> = (0..n_x).collect();
        let cts: Vec<usize> = (n_x..n_x + n_y).collect();
        let forward: Vec<bool> = backward.iter().map(|b| !b).collect();
        let mut fwd_outs: Vec<usize> = joint.outputs()[..n_y].to_vec();
        fwd_outs.extend(&residuals);
        let fwd = extract(joint, &xs, &forward, &fwd_outs)?;
        let mut bwd_in = residuals.clone();
        bwd_in.extend(&cts);
        let bwd = extract(joint, &bwd_in, &backward, grads)?;
        let slot_metas = slot_metas(joint, metas)?;
        let fwd_metas: Vec<(DType, Vec<usize>)> = metas[..n_x].to_vec();
        let bwd_metas: Vec<(DType, Vec<usize>)> =
            bwd_in.iter().map(|&i| slot_metas[i].clone()).collect();
        let (fwd, _) = optimize_for(&fwd, &fwd_metas, &PassConfig::default())?;
        let (bwd, _) = optimize_for(&bwd, &bwd_metas, &PassConfig::default())?;
        Ok(Derivation {
            fwd: CompiledCall::new(&format!("{}.forward", self.name), Arc::new(fwd), fwd_metas)?,
            bwd: CompiledCall::new(&format!("{}.vjp", self.name), Arc::new(bwd), bwd_metas)?,
            n_outputs: n_y,
        })
    }

    /// The recomputing VJP `(x, ȳ) → x̄_active`: the joint program `joint` without its `y`.
    fn derive_vjp(&self, joint: &CompiledCall) -> Result<CompiledCall> {
        let n_y = joint.inputs.len() - self.inputs.len();
        let p = joint.program.as_ref();
        let all: Vec<usize> = (0..p.n_inputs()).collect();
        let keep = vec![true; p.instrs().len()];
        let grads = extract(p, &all, &keep, &p.outputs()[n_y..])?;
        let (grads, _) = optimize_for(&grads, &joint.inputs, &PassConfig::default())?;
        CompiledCall::build(
            &format!("{}.vjp", self.name),
            Arc::new(grads),
            joint.inputs.clone(),
        )
    }

    fn derive_jvp(&self, mask: &[bool]) -> Result<CompiledCall> {
        if let Some(s) = &self.supplied {
            let mut metas = self.inputs.clone();
            metas.extend(
                self.inputs
                    .iter()
                    .zip(mask)
                    .filter(|(_, &m)| m)
                    .map(|(x, _)| x.clone()),
            );
            let p = s.jvp(mask)?;
            if p.n_inputs() != metas.len() {
                return Err(Error::internal(
                    &self.name,
                    "a supplied JVP program takes the wrong number of inputs",
                ));
            }
            let (p, _) = optimize_for(&p, &metas, &PassConfig::default())?;
            return CompiledCall::build(&format!("{}.jvp", self.name), Arc::new(p), metas);
        }
        let em = Emitter::new();
        let xs = self.leaves(&em, mask);
        let ys = self.replay(&em, xs.clone())?;
        let mut metas = self.inputs.clone();
        let mut sources: Vec<(Arc<Node>, Var)> = Vec::new();
        for x in &xs {
            if let Some(n) = &x.node {
                let t = em.input(x.value.dtype(), x.value.shape());
                metas.push((x.value.dtype(), x.value.shape().to_vec()));
                sources.push((n.clone(), t));
            }
        }
        let ctx = Ctx {
            exec: &em,
            record: false,
        };
        let ts = jvp_graph_all(&ctx, &ys, &sources)?;
        let mut outs = Vec::with_capacity(ys.len());
        for (t, y) in ts.into_iter().zip(&ys) {
            outs.push(match t {
                Some(t) => t,
                None => rules::ops::full(&ctx, 0.0, y.value.dtype(), y.value.shape())?,
            });
        }
        let refs: Vec<&Var> = outs.iter().collect();
        let p = em.finish(&refs)?;
        let (p, _) = optimize_for(&p, &metas, &PassConfig::default())?;
        CompiledCall::build(&format!("{}.jvp", self.name), Arc::new(p), metas)
    }
}

/// The dtype and shape of every slot of `p` whose inputs are `inputs`.
fn slot_metas(p: &Program, inputs: &[(DType, Vec<usize>)]) -> Result<Vec<(DType, Vec<usize>)>> {
    let mut metas: Vec<(DType, Vec<usize>)> = inputs.to_vec();
    metas.extend(p.consts().iter().map(|c| (c.dtype(), c.shape().to_vec())));
    for ins in p.instrs() {
        let ms: Vec<(DType, &[usize])> = ins
            .inputs
            .iter()
            .map(|&i| (metas[i].0, metas[i].1.as_slice()))
            .collect();
        let outs = tenferro_ops::infer_outputs(&ins.op, &ms)?;
        metas.extend(outs.into_iter().map(|m| (m.dtype, m.shape)));
    }
    Ok(metas)
}

/// The sub-program of `p` taking the slots `inputs` as its inputs, running the instructions
/// `keep` marks, and returning the slots `outputs`; `p`'s constants are kept (dead code
/// elimination drops the unused ones).
///
/// # Errors
/// `Internal` when a kept instruction or an output reads a slot that is neither an input, a
/// constant nor the output of a kept instruction (a split that cut a dependency).
fn extract(p: &Program, inputs: &[usize], keep: &[bool], outputs: &[usize]) -> Result<Program> {
    const NONE: usize = usize::MAX;
    let mut map = vec![NONE; p.n_slots()];
    for (k, &i) in inputs.iter().enumerate() {
        map[i] = k;
    }
    let n_in = inputs.len();
    for c in 0..p.consts().len() {
        map[p.n_inputs() + c] = n_in + c;
    }
    let mut next = n_in + p.consts().len();
    let mut slot = p.n_inputs() + p.consts().len();
    let mut instrs = Vec::new();
    let lookup = |map: &[usize], i: usize| -> Result<usize> {
        match map[i] {
            NONE => Err(Error::internal(
                "CompiledCall",
                format!("a derived program part reads slot {i}, which it does not have"),
            )),
            m => Ok(m),
        }
    };
    for (ins, &k) in p.instrs().iter().zip(keep) {
        let n = ins.op.num_outputs();
        if k {
            let ins2 = Instr {
                op: ins.op.clone(),
                inputs: ins
                    .inputs
                    .iter()
                    .map(|&i| lookup(&map, i))
                    .collect::<Result<_>>()?,
            };
            instrs.push(ins2);
            for (j, m) in map.iter_mut().skip(slot).take(n).enumerate() {
                if *m == NONE {
                    *m = next + j;
                }
            }
            next += n;
        }
        slot += n;
    }
    let outs = outputs
        .iter()
        .map(|&o| lookup(&map, o))
        .collect::<Result<Vec<_>>>()?;
    Program::new(n_in, p.consts().to_vec(), instrs, outs)
}

/// Records every emitted step on the values that have nodes (the replay of a program that a
/// derivative is taken of).
struct Recorder<'a>(&'a Emitter);

impl Apply for Recorder<'_> {
    fn apply_vars(&self, op: &tenferro_ops::Op, inputs: &[&Var], _: bool) -> Result<Vec<Var>> {
        let values: Vec<&Value> = inputs.iter().map(|v| &v.value).collect();
        let mut outs = self.0.emit(op, &values)?;
        let owned: Vec<Var> = inputs.iter().map(|v| (*v).clone()).collect();
        if op.num_outputs() == 1 {
            let out = outs
                .pop()
                .ok_or_else(|| Error::internal(op.name(), "an op emitted no output"))?;
            Ok(vec![record(op, owned, out, false)])
        } else {
            Ok(record_multi(op, owned, outs, false))
        }
    }
}

/// The first-order reverse-mode split of a compiled program (see the module docs).
#[derive(Debug)]
pub struct Derivation {
    /// `x → (y, r)`: the outputs, then the residuals.
    pub fwd: Arc<CompiledCall>,
    /// `(r, ȳ) → x̄` for each active input, in input order.
    pub bwd: Arc<CompiledCall>,
    /// Number of outputs `y` (the residuals follow them in `fwd`'s outputs).
    pub n_outputs: usize,
}

impl Derivation {
    fn bytes(&self) -> usize {
        self.fwd.bytes() + self.bwd.bytes()
    }
}

/// The runtime's derivative caches (`graph-mode.md`, "Caches on the Runtime"): derived
/// programs (the AD-transform cache) and their prepared plans per engine (the
/// prepared-derivative cache), each bounded in entries and retained bytes (least recently used
/// evicted), and the epoch that [`AdCaches::clear`] advances.
pub struct AdCaches {
    transforms: PlanCache,
    prepared: PlanCache,
    epoch: AtomicU64,
}

impl std::fmt::Debug for AdCaches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdCaches")
            .field("epoch", &self.epoch())
            .field("ad_transforms", &self.transforms.stats())
            .field("prepared_derivatives", &self.prepared.stats())
            .finish()
    }
}

impl Default for AdCaches {
    fn default() -> Self {
        AdCaches::new()
    }
}

impl AdCaches {
    /// Empty caches with the default limits (128 entries, 64 MiB each).
    pub fn new() -> AdCaches {
        AdCaches {
            transforms: PlanCache::with_limits(DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_BYTES),
            prepared: PlanCache::with_limits(DEFAULT_CACHE_ENTRIES, DEFAULT_CACHE_BYTES),
            epoch: AtomicU64::new(0),
        }
    }

    /// The epoch (advanced by every [`AdCaches::clear`]; part of every key).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Drop every derived program and prepared plan and advance the epoch.
    pub fn clear(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        self.transforms.clear();
        self.prepared.clear();
    }

    /// Statistics of the AD-transform cache.
    pub fn transform_stats(&self) -> CacheStats {
        self.transforms.stats()
    }

    /// Statistics of the prepared-derivative cache.
    pub fn prepared_stats(&self) -> CacheStats {
        self.prepared.stats()
    }

    /// `(max_entries, max_retained_bytes)` of the AD-transform cache.
    pub fn transform_limits(&self) -> (usize, usize) {
        self.transforms.limits()
    }

    /// `(max_entries, max_retained_bytes)` of the prepared-derivative cache.
    pub fn prepared_limits(&self) -> (usize, usize) {
        self.prepared.limits()
    }

    /// Limit the AD-transform cache (evicting least recently used entries now).
    pub fn set_transform_limits(&self, max_entries: usize, max_bytes: usize) {
        self.transforms.set_limits(max_entries, max_bytes);
    }

    /// Limit the prepared-derivative cache (evicting least recently used entries now).
    pub fn set_prepared_limits(&self, max_entries: usize, max_bytes: usize) {
        self.prepared.set_limits(max_entries, max_bytes);
    }

    fn key(&self, kind: i64, call: &CompiledCall, mask: &[bool]) -> Vec<i64> {
        let mut k = vec![
            TRANSFORM_TAG,
            kind,
            call.fingerprint as i64,
            self.epoch() as i64,
        ];
        k.extend(mask.iter().map(|&m| i64::from(m)));
        k
    }

    /// The reverse-mode split of `call` for the active inputs `mask` (derived on first use).
    ///
    /// # Errors
    /// Rule errors (`UnsupportedAdRule` for a primitive without a VJP).
    pub fn split(&self, call: &CompiledCall, mask: &[bool]) -> Result<Arc<Derivation>> {
        self.transforms
            .try_get_or_build(self.key(0, call, mask), Derivation::bytes, || {
                call.derive_split(self.joint(call, mask)?.as_ref())
            })
    }

    /// The VJP program `(x, ȳ) → x̄_active` of `call` (derived on first use).
    ///
    /// # Errors
    /// Rule errors.
    pub fn vjp(&self, call: &CompiledCall, mask: &[bool]) -> Result<Arc<CompiledCall>> {
        self.transforms
            .try_get_or_build(self.key(1, call, mask), CompiledCall::bytes, || {
                call.derive_vjp(self.joint(call, mask)?.as_ref())
            })
    }

    /// The joint program `(x, ȳ) → (y, x̄_active)` of `call`, forward and backward in one
    /// (derived on first use): `value_and_grad` of a compiled function runs it once.
    ///
    /// # Errors
    /// Rule errors.
    pub fn joint(&self, call: &CompiledCall, mask: &[bool]) -> Result<Arc<CompiledCall>> {
        self.transforms
            .try_get_or_build(self.key(3, call, mask), CompiledCall::bytes, || {
                call.derive_joint(mask)
            })
    }

    /// The JVP program `(x, ẋ_active) → ẏ` of `call` (derived on first use).
    ///
    /// # Errors
    /// Rule errors.
    pub fn jvp(&self, call: &CompiledCall, mask: &[bool]) -> Result<Arc<CompiledCall>> {
        self.transforms
            .try_get_or_build(self.key(2, call, mask), CompiledCall::bytes, || {
                call.derive_jvp(mask)
            })
    }

    /// The plan of the derived program `call` on `engine` (constant subgraphs folded), from the
    /// prepared-derivative cache.
    ///
    /// # Errors
    /// As [`PreparedGraph::prepare`].
    pub fn prepared(&self, call: &CompiledCall, engine: &dyn Engine) -> Result<Arc<PreparedGraph>> {
        let mut key = prepared_key(call.fingerprint, engine).to_vec();
        key[0] = PREPARED_DERIVATIVE_TAG;
        key.push(self.epoch() as i64);
        self.prepared
            .try_get_or_build(key, PreparedGraph::bytes, || {
                PreparedGraph::prepare(&call.program, &call.inputs, engine)
            })
    }
}

/// The rules of a recorded compiled call (one per call). The node's outputs are those of the
/// forward part of the program's reverse-mode split: the program's outputs `y`, then the
/// residuals `r` (the user sees only `y`; the rules get every output, as projections of the node
/// when their work is recorded, so a recorded backward program depends on `x` through `r`).
#[derive(Debug)]
pub struct CompiledCallRule {
    call: Arc<CompiledCall>,
    caches: Arc<AdCaches>,
    mask: Vec<bool>,
    /// Number of the program's own outputs among the node's, when the split's forward part
    /// ran (the residuals follow them); `None` when the plain program ran (the split could not
    /// be derived: a step without a reverse rule), then the rules recompute.
    n_outputs: Option<usize>,
}

impl CompiledCallRule {
    /// The rules of `call` on inputs whose active ones `mask` marks, recorded with the outputs
    /// of its split's forward program, of which the first `n_outputs` are the program's own
    /// (`None`: recorded with the plain program's outputs).
    pub fn new(
        call: Arc<CompiledCall>,
        caches: Arc<AdCaches>,
        mask: Vec<bool>,
        n_outputs: Option<usize>,
    ) -> CompiledCallRule {
        CompiledCallRule {
            call,
            caches,
            mask,
            n_outputs,
        }
    }

    /// The derived values for the active inputs, spread over every input (`None` elsewhere).
    fn spread(&self, outs: Vec<Var>) -> Result<Vec<Option<Var>>> {
        let mut it = outs.into_iter();
        let r: Vec<Option<Var>> = self
            .mask
            .iter()
            .map(|&m| if m { it.next() } else { None })
            .collect();
        if it.next().is_some() || r.iter().zip(&self.mask).any(|(v, &m)| m && v.is_none()) {
            return Err(Error::internal(
                &self.call.name,
                "a derived program returned the wrong number of values",
            ));
        }
        Ok(r)
    }
}

/// `given`, with zeros of the dtype and shape of `like` where a value is missing.
fn or_zeros(ctx: &Ctx<'_>, given: &[Option<Var>], like: &[&Var]) -> Result<Vec<Var>> {
    given
        .iter()
        .zip(like)
        .map(|(g, l)| match g {
            Some(g) => Ok(g.clone()),
            None => rules::ops::full(ctx, 0.0, l.value.dtype(), l.value.shape()),
        })
        .collect()
}

impl CustomRule for CompiledCallRule {
    fn name(&self) -> &str {
        &self.call.name
    }

    fn vjp(
        &self,
        ctx: &Ctx<'_>,
        inputs: &[Var],
        outputs: &[Var],
        cts: &[Option<Var>],
    ) -> Result<Vec<Option<Var>>> {
        if cts.iter().all(Option::is_none) {
            return Ok(vec![None; inputs.len()]);
        }
        if let (true, Some(s)) = (ctx.record, &self.call.supplied) {
            // Recorded (higher order) with custom rules inside: the function itself under
            // `tf.func.vjp`, so the custom rules stay nodes of the recorded derivative.
            let n = self.n_outputs.unwrap_or(outputs.len()).min(outputs.len());
            if cts[n..].iter().any(Option::is_some) {
                return Err(Error::internal(
                    &self.call.name,
                    "a cotangent for a residual of a call recorded with custom rules",
                ));
            }
            let rule = s.recorded_rule(inputs.len(), n);
            return rule.vjp(ctx, inputs, &outputs[..n], &cts[..n]);
        }
        let Some(n) = self.n_outputs.map(|n| n.min(outputs.len())) else {
            // No residuals: the VJP program recomputes the forward part.
            let vjp = self.caches.vjp(&self.call, &self.mask)?;
            let all: Vec<&Var> = outputs.iter().collect();
            let mut args: Vec<Var> = inputs.to_vec();
            args.extend(or_zeros(ctx, cts, &all)?);
            let refs: Vec<&Var> = args.iter().collect();
            return self.spread(ctx.exec.apply_call(&vjp, &refs, ctx.record)?);
        };
        let split = self.caches.split(&self.call, &self.mask)?;
        let outs = if cts[n..].iter().all(Option::is_none) {
            // The backward part on the residuals (recorded when `ctx.record`: its node reads
            // the residuals as outputs of this node, so higher derivatives reach `x`).
            let ys: Vec<&Var> = outputs[..n].iter().collect();
            let mut args: Vec<Var> = outputs[n..].to_vec();
            args.extend(or_zeros(ctx, &cts[..n], &ys)?);
            let refs: Vec<&Var> = args.iter().collect();
            ctx.exec.apply_call(&split.bwd, &refs, ctx.record)?
        } else {
            // Cotangents of residuals (a derivative of a recorded backward program): the VJP
            // of the forward part with respect to all its outputs.
            let vjp = self.caches.vjp(&split.fwd, &self.mask)?;
            let all: Vec<&Var> = outputs.iter().collect();
            let mut args: Vec<Var> = inputs.to_vec();
            args.extend(or_zeros(ctx, cts, &all)?);
            let refs: Vec<&Var> = args.iter().collect();
            ctx.exec.apply_call(&vjp, &refs, ctx.record)?
        };
        self.spread(outs)
    }

    fn jvp(
        &self,
        ctx: &Ctx<'_>,
        inputs: &[Var],
        outputs: &[Var],
        tangents: &[Option<Var>],
        wanted: &[bool],
    ) -> Result<Vec<Option<Var>>> {
        let n = self.n_outputs.unwrap_or(wanted.len()).min(wanted.len());
        if let (true, Some(s)) = (ctx.record, &self.call.supplied) {
            // Recorded (higher order) with custom rules inside: as in `vjp`.
            let rule = s.recorded_rule(inputs.len(), n);
            let mut ts = rule.jvp(ctx, inputs, &outputs[..n], tangents, &wanted[..n])?;
            ts.resize(wanted.len(), None);
            return Ok(ts);
        }
        // The program's own JVP gives its outputs' tangents (supplied rules included); the
        // residuals' tangents (wanted only by a recorded backward program's node) come from
        // the JVP of the split's forward part.
        let own_only = !wanted[n..].iter().any(|&w| w);
        let jvp = if own_only {
            self.caches.jvp(&self.call, &self.mask)?
        } else {
            let split = self.caches.split(&self.call, &self.mask)?;
            self.caches.jvp(&split.fwd, &self.mask)?
        };
        let (active, like): (Vec<Option<Var>>, Vec<&Var>) = tangents
            .iter()
            .zip(inputs)
            .zip(&self.mask)
            .filter(|(_, &m)| m)
            .map(|((t, x), _)| (t.clone(), x))
            .unzip();
        let mut args: Vec<Var> = inputs.to_vec();
        args.extend(or_zeros(ctx, &active, &like)?);
        let refs: Vec<&Var> = args.iter().collect();
        let mut outs = ctx.exec.apply_call(&jvp, &refs, ctx.record)?.into_iter();
        Ok(wanted.iter().map(|&w| outs.next().filter(|_| w)).collect())
    }
}
