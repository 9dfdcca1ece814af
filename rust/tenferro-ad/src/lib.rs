//! Eager automatic differentiation for tenferro (`autodiff.md`).
//!
//! * **Recording** under the active-edge rule: [`record`] makes a [`Node`] only when an input is
//!   tracked (or `capture_trace` asks for it); untracked code costs nothing extra.
//! * **The derivative-rule table** ([`rules::rule`]): one JVP and one VJP per primitive, side by
//!   side, keyed by [`OpKind`](tenferro_ops::OpKind), written with differentiable primitives
//!   through [`Ctx::apply`], so derivatives of any order come from the same rules.
//! * **Reverse mode** ([`vjp_graph`]) and **forward mode along the recorded path**
//!   ([`jvp_graph`]); traversal and teardown are iterative (deep chains never overflow).
//!
//! * **Several outputs** (the decompositions of `linalg`: `svd` → `U, S, Vh`, …): one
//!   [`NodeKind::Multi`] node holds the op, its inputs and all outputs; each output reaches the
//!   user as its own [`Var`] whose node is a [`NodeKind::Output`] projection (index + parent), made
//!   on demand by [`project`] (the parent never points to its projections: no cycles). Reverse
//!   mode collects the cotangents of every projection of a parent (`None`: zero) and calls the
//!   op's VJP once with all of them; forward mode calls the op's JVP once, for the outputs some
//!   projection on the path asks for, and hands each projection its tangent. Rules receive the
//!   outputs as projections, so derivatives of derivatives flow through them.
//!
//! Complex numbers follow tenferro's Hermitian convention: a VJP is the adjoint under
//! `<a, b> = Re Σ conj(a)·b`, so for holomorphic `f` the VJP is `ȳ·conj(f'(z))`.

// Matches over op kinds (and every other enum) are exhaustive: a new variant must be routed
// by hand, never caught by a plausible default (issue 17).
#![deny(clippy::wildcard_enum_match_arm)]

mod compiled;
mod emit;
pub mod rules;

pub use compiled::{AdCaches, CompiledCall, CompiledCallRule, Derivation, SuppliedDerivatives};

/// Default limits of the derivative caches (tenferro-rs).
pub mod compiled_defaults {
    pub use crate::compiled::{DEFAULT_CACHE_BYTES, DEFAULT_CACHE_ENTRIES};
}
pub use emit::Emitter;

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tenferro_ops::Op;
use tenferro_runtime::Symbol;
use tenferro_tensor::{DType, Error, Result, Tensor};

static NEXT_NODE: AtomicU64 = AtomicU64::new(1);
static LIVE_NODES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Number of recorded nodes alive in the process (leaks show up here; `tf._testing`).
pub fn live_nodes() -> usize {
    LIVE_NODES.load(Ordering::Relaxed)
}

/// A primal value: concrete data (eager execution), or a [`Symbol`] of a program being emitted
/// (shape and dtype only). Derivative rules read only [`Value::dtype`] and [`Value::shape`], so
/// the same rule body runs on either.
#[derive(Clone, Debug)]
pub enum Value {
    /// Data.
    Tensor(Tensor),
    /// A slot of a program under construction ([`Emitter`]).
    Symbol(Symbol),
}

impl Value {
    /// Element type.
    pub fn dtype(&self) -> DType {
        match self {
            Value::Tensor(t) => t.dtype(),
            Value::Symbol(s) => s.dtype,
        }
    }

    /// Shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            Value::Tensor(t) => t.shape(),
            Value::Symbol(s) => &s.shape,
        }
    }

    /// Rank.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether this is a weakly typed traced Python scalar ([`Symbol::weak`]).
    pub fn is_weak(&self) -> bool {
        matches!(self, Value::Symbol(s) if s.weak)
    }

    /// The same value with weak typing set to `weak` (a symbol; data is always strongly typed).
    pub fn with_weak(self, weak: bool) -> Value {
        match self {
            Value::Symbol(s) => Value::Symbol(Symbol { weak, ..s }),
            t => t,
        }
    }

    /// The data, for an executing context.
    ///
    /// # Errors
    /// `Internal` (naming `op`) for a symbol: a traced value reached an engine.
    pub fn tensor(&self, op: &str) -> Result<&Tensor> {
        match self {
            Value::Tensor(t) => Ok(t),
            Value::Symbol(s) => Err(symbolic(op, s)),
        }
    }

    /// The data, by value (see [`Value::tensor`]).
    ///
    /// # Errors
    /// `Internal` for a symbol.
    pub fn into_tensor(self, op: &str) -> Result<Tensor> {
        match self {
            Value::Tensor(t) => Ok(t),
            Value::Symbol(s) => Err(symbolic(op, &s)),
        }
    }
}

fn symbolic(op: &str, s: &Symbol) -> Error {
    Error::internal(
        op,
        format!(
            "a traced value (trace {}, shape {:?}, dtype {}) has no data here",
            s.trace, s.shape, s.dtype
        ),
    )
}

impl From<Tensor> for Value {
    fn from(t: Tensor) -> Value {
        Value::Tensor(t)
    }
}

/// A value as AD sees it: the primal and, when it was recorded, its node.
#[derive(Clone, Debug)]
pub struct Var {
    /// The primal value.
    pub value: Value,
    /// The recorded producer (or leaf), if any.
    pub node: Option<Arc<Node>>,
}

impl Var {
    /// An untracked constant.
    pub fn constant(value: Tensor) -> Var {
        Var {
            value: Value::Tensor(value),
            node: None,
        }
    }

    /// An untracked value (data or symbol).
    pub fn untracked(value: Value) -> Var {
        Var { value, node: None }
    }

    /// Whether the value depends on a tracked leaf.
    pub fn is_tracked(&self) -> bool {
        self.node.as_ref().is_some_and(|n| n.tracked)
    }
}

/// What a node is.
#[derive(Debug)]
pub enum NodeKind {
    /// A tracked leaf (`rt.variable`) with its gradient slot.
    Leaf {
        /// The leaf's value (its shape and dtype give zero gradients; the runtime hands the
        /// leaf back to the user from it). Shares storage with the user's tensor.
        value: Value,
        /// Accumulated gradient (`None` until a backward pass reaches the leaf); tracked when
        /// it was computed with `create_graph=True`.
        slot: Mutex<Option<Var>>,
        /// An opaque handle the host attaches to the leaf (the Python binding: a weak reference
        /// to the user's tensor object, so a backward pass hands back the user's own objects).
        host: OnceLock<Box<dyn Any + Send + Sync>>,
    },
    /// A recorded primitive application.
    Op {
        /// The primitive and its parameters.
        op: Op,
        /// Inputs as they were at the call (values and producers).
        inputs: Vec<Var>,
        /// The output value.
        output: Value,
    },
    /// A recorded op with several outputs (see the module docs).
    Multi {
        /// The op and its parameters.
        op: Op,
        /// Inputs as they were at the call.
        inputs: Vec<Var>,
        /// Every output value.
        outputs: Vec<Value>,
    },
    /// An op whose derivative rules are supplied rather than looked up in the rule table
    /// (`graph-mode.md`, "Custom derivative rules"): a compiled program called on tracked inputs
    /// (`CompiledCall`), or a function with `tf.custom_vjp` / `tf.custom_jvp` rules. Its outputs
    /// reach the user through [`NodeKind::Output`] projections, as those of a
    /// [`NodeKind::Multi`] node.
    Custom {
        /// The rules (and whatever the node keeps for them: residuals).
        rule: Arc<dyn CustomRule>,
        /// Inputs as they were at the call.
        inputs: Vec<Var>,
        /// Every output value.
        outputs: Vec<Value>,
    },
    /// Output `index` of a [`NodeKind::Multi`] or [`NodeKind::Custom`] node; `parent` holds one
    /// `Var` whose node is that node (and whose value is this output).
    Output {
        /// Which output.
        index: usize,
        /// The producer, as a one-element input list.
        parent: Vec<Var>,
    },
}

/// A node of the recorded graph.
#[derive(Debug)]
pub struct Node {
    /// Process-unique id.
    pub id: u64,
    /// True when the node depends on a tracked leaf (its output requires grad); false for
    /// nodes recorded only because `capture_trace` was active.
    pub tracked: bool,
    /// Leaf or op.
    pub kind: NodeKind,
}

impl Node {
    /// A new tracked leaf.
    pub fn leaf(value: &Value) -> Arc<Node> {
        LIVE_NODES.fetch_add(1, Ordering::Relaxed);
        Arc::new(Node {
            id: NEXT_NODE.fetch_add(1, Ordering::Relaxed),
            tracked: true,
            kind: NodeKind::Leaf {
                value: value.clone(),
                slot: Mutex::new(None),
                host: OnceLock::new(),
            },
        })
    }

    /// Shape and dtype of a leaf's value.
    pub fn leaf_meta(&self) -> Option<(tenferro_tensor::DType, &[usize])> {
        let value = self.leaf_value()?;
        Some((value.dtype(), value.shape()))
    }

    /// The host handle slot of a leaf (see [`NodeKind::Leaf`]).
    pub fn leaf_host(&self) -> Option<&OnceLock<Box<dyn Any + Send + Sync>>> {
        let NodeKind::Leaf { host, .. } = &self.kind else {
            return None;
        };
        Some(host)
    }

    /// The value of a leaf.
    pub fn leaf_value(&self) -> Option<&Value> {
        let NodeKind::Leaf { value, .. } = &self.kind else {
            return None;
        };
        Some(value)
    }

    /// An untracked leaf: gives a constant made under `capture_trace` an identity that the
    /// functional transforms can differentiate with respect to (its outputs stay untracked).
    pub fn captured_leaf(value: &Value) -> Arc<Node> {
        LIVE_NODES.fetch_add(1, Ordering::Relaxed);
        Arc::new(Node {
            id: NEXT_NODE.fetch_add(1, Ordering::Relaxed),
            tracked: false,
            kind: NodeKind::Leaf {
                value: value.clone(),
                slot: Mutex::new(None),
                host: OnceLock::new(),
            },
        })
    }

    /// The gradient slot of a leaf.
    pub fn slot(&self) -> Option<&Mutex<Option<Var>>> {
        let NodeKind::Leaf { slot, .. } = &self.kind else {
            return None;
        };
        Some(slot)
    }

    fn inputs(&self) -> &[Var] {
        match &self.kind {
            NodeKind::Op { inputs, .. }
            | NodeKind::Multi { inputs, .. }
            | NodeKind::Custom { inputs, .. } => inputs,
            NodeKind::Output { parent, .. } => parent,
            NodeKind::Leaf { .. } => &[],
        }
    }

    fn drain_inputs(&mut self, into: &mut Vec<Arc<Node>>) {
        match &mut self.kind {
            NodeKind::Op { inputs, .. }
            | NodeKind::Multi { inputs, .. }
            | NodeKind::Custom { inputs, .. }
            | NodeKind::Output { parent: inputs, .. } => {
                into.extend(inputs.drain(..).filter_map(|v| v.node))
            }
            NodeKind::Leaf { .. } => {}
        }
    }
}

impl Drop for Node {
    /// Iterative teardown: a 10⁶-node chain must not recurse 10⁶ frames deep.
    fn drop(&mut self) {
        LIVE_NODES.fetch_sub(1, Ordering::Relaxed);
        let mut stack: Vec<Arc<Node>> = Vec::new();
        self.drain_inputs(&mut stack);
        while let Some(n) = stack.pop() {
            if let Ok(mut inner) = Arc::try_unwrap(n) {
                inner.drain_inputs(&mut stack);
            }
        }
    }
}

/// Record `op(inputs) = output` when the active-edge rule asks for it: some input is tracked
/// (then the output is tracked), or `capture` is on (then a node is kept for functional
/// transforms but the output stays untracked). Graph-cutting ops and non-differentiable
/// outputs (integer/bool) record nothing.
pub fn record(op: &Op, inputs: Vec<Var>, output: Value, capture: bool) -> Var {
    let prof = tenferro_runtime::profile::profiler();
    if prof.enabled() {
        let t0 = std::time::Instant::now();
        let v = record_inner(op, inputs, output, capture);
        prof.add(
            op.name(),
            tenferro_runtime::profile::Phase::Recording,
            t0.elapsed(),
        );
        return v;
    }
    record_inner(op, inputs, output, capture)
}

fn record_inner(op: &Op, inputs: Vec<Var>, output: Value, capture: bool) -> Var {
    let tracked = inputs.iter().any(Var::is_tracked);
    if (!tracked && !capture) || !output.dtype().is_inexact() || rules::cuts_graph(op) {
        return Var::untracked(output);
    }
    LIVE_NODES.fetch_add(1, Ordering::Relaxed);
    let node = Arc::new(Node {
        id: NEXT_NODE.fetch_add(1, Ordering::Relaxed),
        tracked,
        kind: NodeKind::Op {
            op: op.clone(),
            inputs,
            output: output.clone(),
        },
    });
    Var {
        value: output,
        node: Some(node),
    }
}

/// Record `op(inputs) = outputs` for an op with several outputs (same active-edge rule as
/// [`record`]): one [`NodeKind::Multi`] node and one projection per output.
pub fn record_multi(op: &Op, inputs: Vec<Var>, outputs: Vec<Value>, capture: bool) -> Vec<Var> {
    let tracked = inputs.iter().any(Var::is_tracked);
    if !tracked && !capture {
        return outputs.into_iter().map(Var::untracked).collect();
    }
    LIVE_NODES.fetch_add(1, Ordering::Relaxed);
    let values = outputs.clone();
    let node = Arc::new(Node {
        id: NEXT_NODE.fetch_add(1, Ordering::Relaxed),
        tracked,
        kind: NodeKind::Multi {
            op: op.clone(),
            inputs,
            outputs,
        },
    });
    values
        .into_iter()
        .enumerate()
        .map(|(i, t)| project(&node, i, t))
        .collect()
}

/// Record a call of an op with supplied rules ([`NodeKind::Custom`]), under the active-edge rule
/// of [`record`]: one node and one projection per output when an input is tracked or `capture`
/// is on; untracked outputs otherwise.
pub fn record_custom(
    rule: Arc<dyn CustomRule>,
    inputs: Vec<Var>,
    outputs: Vec<Value>,
    capture: bool,
) -> Vec<Var> {
    let tracked = inputs.iter().any(Var::is_tracked);
    if !tracked && !capture {
        return outputs.into_iter().map(Var::untracked).collect();
    }
    LIVE_NODES.fetch_add(1, Ordering::Relaxed);
    let values = outputs.clone();
    let node = Arc::new(Node {
        id: NEXT_NODE.fetch_add(1, Ordering::Relaxed),
        tracked,
        kind: NodeKind::Custom {
            rule,
            inputs,
            outputs,
        },
    });
    // Integer and bool outputs carry no derivative (as `record`): untracked, zero cotangent.
    values
        .into_iter()
        .enumerate()
        .map(|(i, t)| match t.dtype().is_inexact() {
            true => project(&node, i, t),
            false => Var::untracked(t),
        })
        .collect()
}

/// The derivative rules of an op whose rules are supplied ([`NodeKind::Custom`]): a compiled
/// program's derived VJP/JVP programs ([`CompiledCallRule`]) or a user's `custom_vjp` /
/// `custom_jvp` functions. Each recorded call has its own rule object, which keeps what the
/// rules need (residuals). Rules run their bodies through `ctx` like table rules, so with
/// `ctx.record` their work is recorded too (derivatives of any order).
pub trait CustomRule: Send + Sync + std::fmt::Debug {
    /// The name errors and profiles use (the user's function, or `CompiledCall`).
    fn name(&self) -> &str;

    /// Cotangents of the inputs (`None`: zero or not differentiable) given the cotangents of
    /// the outputs (`None`: zero). `outputs` are projections of the node when `ctx.record`.
    ///
    /// # Errors
    /// The rule's errors (`TypeError` for forward-only rules, shape/dtype errors of a user's
    /// rule naming the function).
    fn vjp(
        &self,
        ctx: &Ctx<'_>,
        inputs: &[Var],
        outputs: &[Var],
        cts: &[Option<Var>],
    ) -> Result<Vec<Option<Var>>>;

    /// Tangents of the outputs `wanted` (`None`: zero) given the tangents of the inputs
    /// (`None`: zero; at least one is given).
    ///
    /// # Errors
    /// The rule's errors (a `custom_vjp` function has no forward mode: `TypeError`).
    fn jvp(
        &self,
        ctx: &Ctx<'_>,
        inputs: &[Var],
        outputs: &[Var],
        tangents: &[Option<Var>],
        wanted: &[bool],
    ) -> Result<Vec<Option<Var>>>;
}

/// Output `index` (value `value`) of the [`NodeKind::Multi`] node `node`, as a [`Var`] with a
/// fresh projection node.
fn project(node: &Arc<Node>, index: usize, value: Value) -> Var {
    LIVE_NODES.fetch_add(1, Ordering::Relaxed);
    let out = Arc::new(Node {
        id: NEXT_NODE.fetch_add(1, Ordering::Relaxed),
        tracked: node.tracked,
        kind: NodeKind::Output {
            index,
            parent: vec![Var {
                value: value.clone(),
                node: Some(node.clone()),
            }],
        },
    });
    Var {
        value,
        node: Some(out),
    }
}

/// The outputs of a multi node as rule arguments: projections when the rule body is recorded
/// (so higher derivatives flow through them), constants otherwise.
fn outputs_of(ctx: &Ctx<'_>, node: &Arc<Node>, outputs: &[Value]) -> Vec<Var> {
    outputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if ctx.record {
                project(node, i, t.clone())
            } else {
                Var::untracked(t.clone())
            }
        })
        .collect()
}

/// The one way a derivative rule runs a primitive: the eager core's `Session::apply` path
/// (engine execution plus the recording decision) implements it, and so will graph mode's
/// emitting context. `record` asks for the application to be recorded when an input has a node
/// (derivatives of derivatives).
pub trait Apply {
    /// Apply `op` to `inputs`; one [`Var`] per output of the op.
    ///
    /// # Errors
    /// Validation and kernel errors of the op.
    fn apply_vars(&self, op: &Op, inputs: &[&Var], record: bool) -> Result<Vec<Var>>;

    /// Run the compiled program `call` on `inputs`; one [`Var`] per program output. The default
    /// inlines it: one [`Apply::apply_vars`] per instruction (an emitting context appends the
    /// program to its own). The eager core runs it as one prepared program and records one
    /// `CompiledCall` node when `record` and an input has a node.
    ///
    /// # Errors
    /// The steps' validation and kernel errors; `Internal` for a wrong number of inputs.
    fn apply_call(
        &self,
        call: &Arc<CompiledCall>,
        inputs: &[&Var],
        record: bool,
    ) -> Result<Vec<Var>> {
        call.inline(self, inputs, record)
    }
}

/// Evaluation context of derivative rules: where the rule bodies run and whether the derivative
/// computation is itself recorded (`create_graph`, higher order).
pub struct Ctx<'e> {
    /// Runs the rule bodies (the eager core's session path).
    pub exec: &'e dyn Apply,
    /// Record the rule bodies (needed for derivatives of derivatives).
    pub record: bool,
}

impl Ctx<'_> {
    /// Apply a primitive to `inputs`, recording it when `self.record` and an input has a node.
    ///
    /// # Errors
    /// Validation and kernel errors of the primitive.
    pub fn apply(&self, op: Op, inputs: &[&Var]) -> Result<Var> {
        let mut outs = self.exec.apply_vars(&op, inputs, self.record)?;
        match (outs.pop(), outs.is_empty()) {
            (Some(v), true) => Ok(v),
            _ => Err(Error::internal(
                op.name(),
                "Ctx::apply used on an op that has several outputs",
            )),
        }
    }

    /// Apply an op with several outputs, recording it when `self.record` and an input has a
    /// node.
    ///
    /// # Errors
    /// Validation and kernel errors of the op.
    pub fn apply_multi(&self, op: Op, inputs: &[&Var]) -> Result<Vec<Var>> {
        self.exec.apply_vars(&op, inputs, self.record)
    }
}

/// The rules of a node with several outputs: the table's for a [`NodeKind::Multi`] node's op,
/// the supplied ones of a [`NodeKind::Custom`] node (checked to return one value per input,
/// resp. output).
enum SeveralRules<'a> {
    Table(&'a Op),
    Supplied(&'a Arc<dyn CustomRule>),
}

impl SeveralRules<'_> {
    /// The profile's row: the op, or one row for every supplied rule.
    fn profile_name(&self) -> &'static str {
        match self {
            SeveralRules::Table(op) => op.name(),
            SeveralRules::Supplied(_) => "custom_rule",
        }
    }

    fn vjp(
        &self,
        ctx: &Ctx<'_>,
        inputs: &[Var],
        outputs: &[Var],
        cts: &[Option<Var>],
    ) -> Result<Vec<Option<Var>>> {
        match self {
            SeveralRules::Table(op) => rules::vjp_multi(ctx, op, inputs, outputs, cts),
            SeveralRules::Supplied(r) => {
                let grads = r.vjp(ctx, inputs, outputs, cts)?;
                check_count(r.name(), "cotangents", grads.len(), "inputs", inputs.len())?;
                Ok(grads)
            }
        }
    }

    fn jvp(
        &self,
        ctx: &Ctx<'_>,
        inputs: &[Var],
        outputs: &[Var],
        tangents: &[Option<Var>],
        wanted: &[bool],
    ) -> Result<Vec<Option<Var>>> {
        match self {
            SeveralRules::Table(op) => rules::jvp_multi(ctx, op, inputs, outputs, tangents, wanted),
            SeveralRules::Supplied(r) => {
                let ts = r.jvp(ctx, inputs, outputs, tangents, wanted)?;
                check_count(r.name(), "tangents", ts.len(), "outputs", outputs.len())?;
                Ok(ts)
            }
        }
    }
}

/// `Internal` unless a supplied rule returned `got` values for `want` of them.
fn check_count(name: &str, what: &str, got: usize, of: &str, want: usize) -> Result<()> {
    if got == want {
        return Ok(());
    }
    Err(Error::internal(
        name,
        format!("a custom rule returned {got} {what} for {want} {of}"),
    ))
}

/// The rules, inputs and outputs of a node with several outputs.
///
/// # Errors
/// `Internal` for any other node (a walk routed it wrongly).
fn several(node: &Node) -> Result<(SeveralRules<'_>, &[Var], &[Value])> {
    match &node.kind {
        NodeKind::Multi {
            op,
            inputs,
            outputs,
        } => Ok((SeveralRules::Table(op), inputs, outputs)),
        NodeKind::Custom {
            rule,
            inputs,
            outputs,
        } => Ok((SeveralRules::Supplied(rule), inputs, outputs)),
        NodeKind::Leaf { .. } | NodeKind::Op { .. } | NodeKind::Output { .. } => {
            Err(Error::internal(
                "autodiff",
                "a node with one output walked as one with several",
            ))
        }
    }
}

/// Nodes reachable from `root`, inputs before users (iterative post-order DFS).
fn topo_order(root: &Arc<Node>) -> Vec<Arc<Node>> {
    topo_order_all(std::slice::from_ref(root))
}

/// Nodes reachable from any of `roots`, inputs before users (iterative post-order DFS, one
/// root after the other; a root reached from an earlier one is ordered there).
fn topo_order_all(roots: &[Arc<Node>]) -> Vec<Arc<Node>> {
    let mut order = Vec::new();
    let mut seen: HashSet<u64> = HashSet::new();
    let mut stack: Vec<(Arc<Node>, usize)> = Vec::new();
    for root in roots {
        if !seen.insert(root.id) {
            continue;
        }
        stack.push((root.clone(), 0));
        while let Some((node, i)) = stack.pop() {
            let inputs = node.inputs();
            if i < inputs.len() {
                let next = inputs[i].node.clone();
                stack.push((node, i + 1));
                if let Some(n) = next {
                    if seen.insert(n.id) {
                        stack.push((n, 0));
                    }
                }
            } else {
                order.push(node);
            }
        }
    }
    order
}

/// Reverse mode: cotangents of `output` (seeded with `seed`) propagated to every node of the
/// recorded graph; returns the cotangent of each node in `targets` that the propagation
/// reached (`None`: unreachable or only through symbolically zero derivatives).
///
/// # Errors
/// Rule errors, including [`UnsupportedAdRule`](tenferro_tensor::Error::Unsupported) for
/// primitives without a VJP.
pub fn vjp_graph(
    ctx: &Ctx<'_>,
    output: &Var,
    seed: Var,
    targets: &[Arc<Node>],
) -> Result<Vec<Option<Var>>> {
    vjp_graph_all(ctx, &[(output.clone(), seed)], targets)
}

/// Reverse mode from several outputs at once, each seeded with its cotangent (`(output,
/// seed)` pairs; an output given twice gets the sum): one pass, each rule called once.
///
/// # Errors
/// As [`vjp_graph`].
pub fn vjp_graph_all(
    ctx: &Ctx<'_>,
    seeds: &[(Var, Var)],
    targets: &[Arc<Node>],
) -> Result<Vec<Option<Var>>> {
    let roots: Vec<Arc<Node>> = seeds.iter().filter_map(|(o, _)| o.node.clone()).collect();
    if roots.is_empty() {
        return Ok(vec![None; targets.len()]);
    }
    let order = topo_order_all(&roots);
    // A node may be wanted several times (a repeated `wrt` entry): each gets the full cotangent.
    let mut want: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, n) in targets.iter().enumerate() {
        want.entry(n.id).or_default().push(i);
    }
    let mut result: Vec<Option<Var>> = vec![None; targets.len()];
    let put = |result: &mut Vec<Option<Var>>, id: u64, ct: &Var| {
        for &i in want.get(&id).map_or(&[][..], Vec::as_slice) {
            result[i] = Some(ct.clone());
        }
    };
    let mut cts: HashMap<u64, Var> = HashMap::new();
    let mut multi_cts: HashMap<u64, Vec<Option<Var>>> = HashMap::new();
    for (o, seed) in seeds {
        let Some(n) = &o.node else { continue };
        let acc = match cts.remove(&n.id) {
            Some(prev) => rules::ops::add(ctx, &prev, seed)?,
            None => seed.clone(),
        };
        cts.insert(n.id, acc);
    }
    for node in order.iter().rev() {
        let (inputs, grads): (&[Var], _) = match &node.kind {
            NodeKind::Leaf { .. } => {
                if let Some(ct) = cts.remove(&node.id) {
                    put(&mut result, node.id, &ct);
                }
                continue;
            }
            NodeKind::Output { index, parent } => {
                let (Some(ct), Some(p)) = (cts.remove(&node.id), &parent[0].node) else {
                    continue;
                };
                put(&mut result, node.id, &ct);
                let n = match &p.kind {
                    NodeKind::Multi { outputs, .. } | NodeKind::Custom { outputs, .. } => {
                        outputs.len()
                    }
                    NodeKind::Leaf { .. } | NodeKind::Op { .. } | NodeKind::Output { .. } => {
                        return Err(Error::internal(
                            "backward",
                            "an output node whose parent is not a several-output node",
                        ))
                    }
                };
                let slots = multi_cts.entry(p.id).or_insert_with(|| vec![None; n]);
                if let Some(slot) = slots.get_mut(*index) {
                    *slot = rules::ops::add_opt(ctx, slot.take(), Some(ct))?;
                }
                continue;
            }
            NodeKind::Multi { .. } | NodeKind::Custom { .. } => {
                let (rules, inputs, outputs) = several(node)?;
                let Some(out_cts) = multi_cts.remove(&node.id) else {
                    continue;
                };
                let outs = outputs_of(ctx, node, outputs);
                let prof = tenferro_runtime::profile::profiler();
                let t0 = prof.enabled().then(std::time::Instant::now);
                let grads = rules.vjp(ctx, inputs, &outs, &out_cts)?;
                if let Some(t0) = t0 {
                    prof.add(
                        rules.profile_name(),
                        tenferro_runtime::profile::Phase::Backward,
                        t0.elapsed(),
                    );
                }
                (inputs, grads)
            }
            NodeKind::Op { op, inputs, output } => {
                let Some(ct) = cts.remove(&node.id) else {
                    continue;
                };
                put(&mut result, node.id, &ct);
                let out_var = Var {
                    value: output.clone(),
                    node: Some(node.clone()),
                };
                let prof = tenferro_runtime::profile::profiler();
                let t0 = prof.enabled().then(std::time::Instant::now);
                let grads = rules::vjp(ctx, op, inputs, &out_var, &ct)?;
                if let Some(t0) = t0 {
                    prof.add(
                        op.name(),
                        tenferro_runtime::profile::Phase::Backward,
                        t0.elapsed(),
                    );
                }
                (inputs, grads)
            }
        };
        for (input, g) in inputs.iter().zip(grads) {
            let (Some(n), Some(g)) = (&input.node, g) else {
                continue;
            };
            let acc = match cts.remove(&n.id) {
                Some(prev) => rules::ops::add(ctx, &prev, &g)?,
                None => g,
            };
            cts.insert(n.id, acc);
        }
    }
    Ok(result)
}

/// Forward mode along the recorded path: the tangent of `output` given tangents of the
/// `sources` nodes (`None` when `output` does not depend on them through a differentiable path).
///
/// # Errors
/// Rule errors, including unsupported JVPs.
pub fn jvp_graph(ctx: &Ctx<'_>, output: &Var, sources: &[(Arc<Node>, Var)]) -> Result<Option<Var>> {
    Ok(jvp_graph_all(ctx, std::slice::from_ref(output), sources)?
        .pop()
        .flatten())
}

/// Forward mode to several outputs at once (one pass): the tangent of each of `outputs`.
///
/// # Errors
/// As [`jvp_graph`].
pub fn jvp_graph_all(
    ctx: &Ctx<'_>,
    outputs: &[Var],
    sources: &[(Arc<Node>, Var)],
) -> Result<Vec<Option<Var>>> {
    let roots: Vec<Arc<Node>> = outputs.iter().filter_map(|o| o.node.clone()).collect();
    // A source given several times (a repeated `wrt` entry) carries the sum of its tangents.
    let mut tangents: HashMap<u64, Var> = HashMap::new();
    for (n, t) in sources {
        let acc = match tangents.remove(&n.id) {
            Some(prev) => rules::ops::add(ctx, &prev, t)?,
            None => t.clone(),
        };
        tangents.insert(n.id, acc);
    }
    let order = topo_order_all(&roots);
    // Which outputs of each several-output node the path uses (its projections in the order).
    let mut wanted: HashMap<u64, Vec<bool>> = HashMap::new();
    for node in &order {
        if let NodeKind::Output { index, parent } = &node.kind {
            if let Some(p) = &parent[0].node {
                if let NodeKind::Multi { outputs, .. } | NodeKind::Custom { outputs, .. } = &p.kind
                {
                    let w = wanted
                        .entry(p.id)
                        .or_insert_with(|| vec![false; outputs.len()]);
                    w[*index] = true;
                }
            }
        }
    }
    let mut multi_tangents: HashMap<u64, Vec<Option<Var>>> = HashMap::new();
    for node in order {
        if tangents.contains_key(&node.id) {
            continue;
        }
        match &node.kind {
            NodeKind::Leaf { .. } => {}
            NodeKind::Output { index, parent } => {
                let t = parent[0]
                    .node
                    .as_ref()
                    .and_then(|p| multi_tangents.get(&p.id))
                    .and_then(|ts| ts.get(*index).cloned().flatten());
                if let Some(t) = t {
                    tangents.insert(node.id, t);
                }
            }
            NodeKind::Multi { .. } | NodeKind::Custom { .. } => {
                let (rules, inputs, outputs) = several(&node)?;
                let ts = input_tangents(inputs, &tangents);
                if ts.iter().all(Option::is_none) {
                    continue;
                }
                let outs = outputs_of(ctx, &node, outputs);
                let all = vec![true; outputs.len()];
                let w = wanted.get(&node.id).unwrap_or(&all);
                let res = rules.jvp(ctx, inputs, &outs, &ts, w)?;
                multi_tangents.insert(node.id, res);
            }
            NodeKind::Op { op, inputs, output } => {
                let ts = input_tangents(inputs, &tangents);
                if ts.iter().all(Option::is_none) {
                    continue;
                }
                let out_var = Var {
                    value: output.clone(),
                    node: Some(node.clone()),
                };
                if let Some(t) = rules::jvp(ctx, op, inputs, &out_var, &ts)? {
                    tangents.insert(node.id, t);
                }
            }
        }
    }
    Ok(outputs
        .iter()
        .map(|o| o.node.as_ref().and_then(|n| tangents.get(&n.id).cloned()))
        .collect())
}

/// The tangents of `inputs` known so far (`None`: zero).
fn input_tangents(inputs: &[Var], tangents: &HashMap<u64, Var>) -> Vec<Option<Var>> {
    inputs
        .iter()
        .map(|v| v.node.as_ref().and_then(|n| tangents.get(&n.id).cloned()))
        .collect()
}

/// Leaves reachable from `output` (in the order the reverse pass meets them).
pub fn reachable_leaves(output: &Var) -> Vec<Arc<Node>> {
    let Some(root) = &output.node else {
        return Vec::new();
    };
    topo_order(root)
        .into_iter()
        .rev()
        .filter(|n| matches!(n.kind, NodeKind::Leaf { .. }))
        .collect()
}
