//! Sessions and [`Session::apply`], the one path of every eager op (`architecture.md`, "Data
//! flow of one eager op"): resolve the runtime and the engine, check that every operand belongs
//! to the runtime, promote weak scalars, execute on the engine, and record a node when the mode
//! state asks for it.

use crate::runtime::{default_runtime, Runtime};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tenferro_ad::{
    record, record_custom, record_multi, Apply, CompiledCall, CompiledCallRule, Emitter, Node,
    Value, Var,
};
use tenferro_ops::Op;
use tenferro_runtime::{
    apply, apply_multi, apply_prepared, Borrow, Engine, PreparedGraph, Program, StepOutputs,
};
use tenferro_tensor::dtype::scalar_default_dtype;
use tenferro_tensor::{
    promote, promote_weak, Complex32, Complex64, DType, Error, Result, Scalar, ScalarKind,
};
use tenferro_tensor::{Element, Tensor};

/// A tensor as the eager core holds it: the value, the runtime it belongs to and, when it was
/// recorded (or captured by a functional transform), its node.
#[derive(Debug)]
pub struct EagerTensor {
    /// The value: data, or a symbol of the trace being recorded (graph mode).
    pub value: Value,
    /// The runtime the tensor belongs to.
    pub runtime: Arc<Runtime>,
    /// Recorded producer or leaf, if any. Set once: at creation, or lazily when an op consumes
    /// the tensor under `capture_trace` (it then becomes an untracked leaf that functional
    /// transforms can differentiate with respect to).
    node: OnceLock<Arc<Node>>,
}

impl EagerTensor {
    /// A tensor of `runtime` with an optional node.
    pub fn new(value: Value, runtime: Arc<Runtime>, node: Option<Arc<Node>>) -> EagerTensor {
        let cell = OnceLock::new();
        if let Some(n) = node {
            let _ = cell.set(n);
        }
        EagerTensor {
            value,
            runtime,
            node: cell,
        }
    }

    /// The tensor of `var` in `runtime`.
    ///
    /// # Errors
    /// `Internal` for a symbolic value (a traced value has no data to hold).
    pub fn from_var(var: Var, runtime: Arc<Runtime>) -> EagerTensor {
        EagerTensor::new(var.value, runtime, var.node)
    }

    /// A tensor of `runtime` holding data.
    pub fn of_data(value: Tensor, runtime: Arc<Runtime>, node: Option<Arc<Node>>) -> EagerTensor {
        EagerTensor::new(Value::Tensor(value), runtime, node)
    }

    /// The data.
    ///
    /// # Errors
    /// `Concretization` naming `op` for a traced tensor (it has a shape and a dtype, no data).
    #[inline]
    pub fn data(&self, op: &str) -> Result<&Tensor> {
        match &self.value {
            Value::Tensor(t) => Ok(t),
            Value::Symbol(s) => Err(concretization(op, s)),
        }
    }

    /// The same tensor (value, runtime, node) with weak typing set to `weak`: Python
    /// arithmetic on weakly typed traced scalars gives weakly typed results, as it gives Python
    /// numbers in eager code ([`tenferro_runtime::Symbol::weak`]).
    pub fn with_weak(&self, weak: bool) -> EagerTensor {
        EagerTensor {
            value: self.value.clone().with_weak(weak),
            runtime: self.runtime.clone(),
            node: self.node.clone(),
        }
    }

    /// The recorded node, if any.
    #[inline]
    pub fn node(&self) -> Option<&Arc<Node>> {
        self.node.get()
    }

    /// Whether the value depends on a tracked leaf (`requires_grad`).
    pub fn is_tracked(&self) -> bool {
        self.node().is_some_and(|n| n.tracked)
    }

    /// The AD view of this tensor.
    pub fn var(&self) -> Var {
        Var {
            value: self.value.clone(),
            node: self.node().cloned(),
        }
    }

    /// The AD view of this tensor as an op input: under `capture_trace` every consumed tensor
    /// becomes an identifiable (untracked) leaf.
    pub fn input_var(&self, capture: bool) -> Var {
        let node = if capture {
            Some(
                self.node
                    .get_or_init(|| Node::captured_leaf(&self.value))
                    .clone(),
            )
        } else {
            self.node().cloned()
        };
        Var {
            value: self.value.clone(),
            node,
        }
    }
}

/// The tensors of an op's weak scalar operands ([`promote_weak_scalars`]; `None` for the other
/// operands), inline for up to two operands (`x * 2.0`: no vector allocated).
pub type WeakScalars = smallvec::SmallVec<[Option<Tensor>; 2]>;

/// An operand of [`Session::apply`].
pub enum Operand<'a> {
    /// A tensor (must belong to the op's runtime).
    Tensor(&'a EagerTensor),
    /// A host array adopted as an untracked constant (NumPy arrays, nested lists).
    Array(Tensor),
    /// A weak Python scalar: takes the dtype of the tensor operands it is combined with.
    Scalar(Scalar),
}

/// Grad mode flags and the stack of active sessions of the calling context (the binding keeps
/// one per Python context in a `ContextVar`). Immutable: a change makes a new state.
#[derive(Clone)]
pub struct ModeState {
    /// Record ops whose inputs are tracked (`tf.no_grad()` turns it off).
    pub grad_enabled: bool,
    /// A functional transform is capturing the trace: every op is recorded.
    pub capture_trace: bool,
    /// Active sessions, innermost last.
    pub sessions: Vec<Arc<Session>>,
    /// The trace being recorded (graph mode): ops on its symbolic tensors are emitted into it
    /// instead of executed.
    pub trace: Option<Arc<Emitter>>,
}

impl Default for ModeState {
    fn default() -> Self {
        ModeState {
            grad_enabled: true,
            capture_trace: false,
            sessions: Vec::new(),
            trace: None,
        }
    }
}

impl ModeState {
    /// The recording decision (`autodiff.md`, active-edge rule): in grad mode, when an operand
    /// has a node or a functional transform captures the trace.
    #[inline]
    pub fn records(&self, any_node: bool) -> bool {
        self.grad_enabled && (any_node || self.capture_trace)
    }

    /// Whether an op on `operands` would be recorded here (`s._records(x)`).
    pub fn would_record(&self, operands: &[Operand<'_>]) -> bool {
        self.records(any_node(operands))
    }

    /// Under `capture_trace` (and grad mode), a new constant gets an untracked leaf node so that
    /// functional transforms can differentiate with respect to it.
    pub fn captured_node(&self, value: &Value) -> Option<Arc<Node>> {
        (self.capture_trace && self.grad_enabled).then(|| Node::captured_leaf(value))
    }
}

/// What the eager core needs from its host (the Python binding, or a Rust caller): how to run
/// an engine job (the binding releases the GIL and serves Ctrl-C), how to wait for an engine
/// another thread holds, a check between the steps of a program, and the default engine.
pub trait Host {
    /// Run `job` (one op on an engine, which stores its outputs itself; `inputs` are its
    /// operands, for sizing).
    ///
    /// # Errors
    /// `job`'s error, or `Interrupted` when the host stopped it.
    fn run(
        &self,
        op: &Op,
        inputs: &[&Tensor],
        job: &mut (dyn FnMut() -> Result<()> + Send),
    ) -> Result<()> {
        let _ = (op, inputs);
        job()
    }

    /// Borrow `engine`, which another thread may hold, waiting up to `timeout` (`None`:
    /// forever).
    ///
    /// # Errors
    /// `Reentered` (`reentry_is_error`), `EngineBusy` after `timeout`, `Interrupted`.
    fn wait_for_engine(
        &self,
        engine: &dyn Engine,
        op: &str,
        timeout: Option<Duration>,
        reentry_is_error: bool,
    ) -> Result<Borrow> {
        engine.lending().acquire(op, timeout, reentry_is_error)
    }

    /// Called between the steps of a program.
    ///
    /// # Errors
    /// `Interrupted` to stop the program.
    fn checkpoint(&self, op: &str) -> Result<()> {
        let _ = op;
        Ok(())
    }

    /// The engine of implicit ops whose runtime has no live owning context.
    ///
    /// # Errors
    /// When no default engine can be built.
    fn default_engine(&self) -> Result<Arc<dyn Engine>>;
}

/// A [`Host`] that runs everything on the calling thread with a fixed default engine (Rust
/// callers and tests; the binding brings its own).
pub struct DirectHost {
    /// The engine of implicit ops.
    pub engine: Arc<dyn Engine>,
}

impl Host for DirectHost {
    fn default_engine(&self) -> Result<Arc<dyn Engine>> {
        Ok(self.engine.clone())
    }
}

/// A runtime paired with an engine for a block of work (`rt.session(engine)`), or the implicit
/// session (`tf.prim`, operators, NumPy-named functions): innermost active session, else the
/// engine of the context owning the tensors' runtime, else the default engine, borrowed per op.
pub struct Session {
    target: Option<(Arc<Runtime>, Arc<dyn Engine>)>,
    timeout: Option<Duration>,
    active: AtomicBool,
}

/// The implicit session.
pub static IMPLICIT: Session = Session::implicit();

impl Session {
    /// The implicit session (see the type docs).
    pub const fn implicit() -> Session {
        Session {
            target: None,
            timeout: None,
            active: AtomicBool::new(true),
        }
    }

    /// A session lending `engine` to `runtime`; [`Session::enter`] waits up to `timeout` for an
    /// engine another thread holds (`None`: forever).
    pub fn explicit(
        runtime: Arc<Runtime>,
        engine: Arc<dyn Engine>,
        timeout: Option<Duration>,
    ) -> Session {
        Session {
            target: Some((runtime, engine)),
            timeout,
            active: AtomicBool::new(false),
        }
    }

    /// Runtime and engine of an explicit session (`None`: implicit).
    pub fn target(&self) -> Option<(&Arc<Runtime>, &Arc<dyn Engine>)> {
        self.target.as_ref().map(|(r, e)| (r, e))
    }

    /// Whether the session is usable (entered and not exited; the implicit one always is).
    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Borrow the engine for this thread and mark the session active.
    ///
    /// # Errors
    /// `Unsupported` for the implicit session; `Reentered` when this session is active or this
    /// thread already holds the engine; `EngineBusy` after the timeout; the host's
    /// `Interrupted`.
    pub fn enter(&self, host: &dyn Host) -> Result<()> {
        let Some((_, engine)) = &self.target else {
            return Err(Error::unsupported(
                "session",
                "the implicit session cannot be entered",
            ));
        };
        if self.is_active() {
            return Err(Error::reentered(
                "Session.__enter__",
                "this session is already active",
            ));
        }
        match engine
            .lending()
            .acquire("session", Some(Duration::ZERO), true)
        {
            Ok(_) => {}
            Err(e @ Error::Reentered { .. }) => return Err(e),
            Err(_) => {
                host.wait_for_engine(engine.as_ref(), "session", self.timeout, true)?;
            }
        }
        self.active.store(true, Ordering::Release);
        Ok(())
    }

    /// The error of an exit from a thread or Python context that did not enter the session
    /// (`ContextMismatch`): that context still runs on it, so it stays active.
    pub fn foreign_exit_error() -> Error {
        Error::context_mismatch(
            "Session.__exit__",
            "this session was entered in another thread or context; exit it there (it stays active)",
        )
    }

    /// Give the engine back (idempotent).
    pub fn exit(&self) {
        if let Some((_, engine)) = &self.target {
            if self.active.swap(false, Ordering::AcqRel) {
                engine.lending().release();
            }
        }
    }

    /// Resolve the runtime and engine an op named `op` runs on, given the runtime of its first
    /// tensor operand. The implicit session borrows the engine for the op (released when the
    /// returned [`Exec`] drops).
    ///
    /// # Errors
    /// `SessionInactive` for an explicit session outside its `with` block; the host's errors
    /// while waiting for a busy engine.
    pub fn resolve(
        &self,
        op: &str,
        first_rt: Option<&Arc<Runtime>>,
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<Exec> {
        if let Some((rt, engine)) = &self.target {
            if !self.is_active() {
                return Err(Error::SessionInactive { op: op.to_string() });
            }
            return Ok(Exec {
                runtime: rt.clone(),
                engine: engine.clone(),
                release: false,
                trace: mode.trace.clone(),
            });
        }
        // The innermost *active* session (a session exited out of order stays in outer
        // snapshots of the stack but is skipped).
        if let Some(s) = mode.sessions.iter().rev().find(|s| s.is_active()) {
            return s.resolve(op, first_rt, mode, host);
        }
        let runtime = first_rt.unwrap_or_else(|| default_runtime()).clone();
        let owned = first_rt.and_then(|r| r.owner_engine());
        let engine = match owned {
            Some(e) => e,
            None => host.default_engine()?,
        };
        let borrow = match engine.lending().acquire(op, Some(Duration::ZERO), false) {
            Ok(b) => b,
            Err(_) => host.wait_for_engine(engine.as_ref(), op, None, false)?,
        };
        Ok(Exec {
            runtime,
            engine,
            release: borrow == Borrow::Acquired,
            trace: mode.trace.clone(),
        })
    }

    /// Run `op` on `operands`: the one path of every eager op (see the module docs); one
    /// tensor per output of the op.
    ///
    /// # Errors
    /// `ContextMismatch` when a tensor operand belongs to another runtime than the op's; the
    /// validation errors of the catalog; kernel errors; the host's errors.
    pub fn apply(
        &self,
        op: &Op,
        operands: &[Operand<'_>],
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<Vec<EagerTensor>> {
        let (runtime, outs) = self.apply_outs(op, operands, mode, host)?;
        Ok(match outs {
            Outs::One(v) => vec![EagerTensor::from_var(v, runtime)],
            Outs::Many(vs) => vs
                .into_iter()
                .map(|v| EagerTensor::from_var(v, runtime.clone()))
                .collect(),
        })
    }

    /// [`Session::apply`] for an op with one output (every op but the decompositions), without
    /// collecting the output in a vector: the path of operators and NumPy-named functions.
    ///
    /// # Errors
    /// As [`Session::apply`]; `Internal` for an op with several outputs.
    pub fn apply1(
        &self,
        op: &Op,
        operands: &[Operand<'_>],
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<EagerTensor> {
        match self.apply_outs(op, operands, mode, host)? {
            (runtime, Outs::One(v)) => Ok(EagerTensor::from_var(v, runtime)),
            (_, Outs::Many(_)) => Err(Error::internal(
                op.name(),
                "apply1 used on an op with several outputs",
            )),
        }
    }

    /// The body of [`Session::apply`]: resolve, check membership, promote weak scalars, execute,
    /// record; the outputs' runtime and values.
    fn apply_outs(
        &self,
        op: &Op,
        operands: &[Operand<'_>],
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<(Arc<Runtime>, Outs<Var>)> {
        let name = op.name();
        let first_rt = first_runtime(operands);
        if any_symbol(operands) {
            return self.trace_outs(op, operands, first_rt, mode);
        }
        let exec = self.resolve(name, first_rt, mode, host)?;
        exec.check_members(name, operands)?;
        // Checked here so that an op without weak scalars moves no (empty) vector out of a call.
        let scalars = if operands.iter().any(|o| matches!(o, Operand::Scalar(_))) {
            promote_weak_scalars(op, operands)?
        } else {
            WeakScalars::new()
        };
        // Inline up to 4 operands: a tiny op allocates nothing here.
        let refs: smallvec::SmallVec<[&Tensor; 4]> = operands
            .iter()
            .enumerate()
            .map(|(i, o)| match o {
                Operand::Tensor(t) => t.data(name).ok(),
                Operand::Array(t) => Some(t),
                Operand::Scalar(_) => scalars.get(i).and_then(Option::as_ref),
            })
            .collect::<Option<_>>()
            .ok_or_else(|| Error::internal(name, "a weak scalar operand was not converted"))?;
        let any_node = any_node(operands);
        if !mode.records(any_node) {
            let outs = exec.execute(op, &refs, host)?.map(Var::constant);
            return Ok((exec.runtime.clone(), outs));
        }
        let inputs: Vec<Var> = operands
            .iter()
            .zip(&refs)
            .map(|(o, t)| match o {
                Operand::Tensor(pt) => pt.input_var(mode.capture_trace),
                Operand::Array(_) | Operand::Scalar(_) => Var::constant((*t).clone()),
            })
            .collect();
        let outs = exec.execute(op, &refs, host)?.map(Value::Tensor);
        Ok((
            exec.runtime.clone(),
            record_outs(op, inputs, outs, mode.capture_trace),
        ))
    }

    /// [`Session::apply_outs`] of an op with a traced (symbolic) operand: emitted into the
    /// mode's trace (graph mode), recorded under the same rule as an eager op; no engine is
    /// borrowed. Concrete operands become constants of the program.
    fn trace_outs(
        &self,
        op: &Op,
        operands: &[Operand<'_>],
        first_rt: Option<&Arc<Runtime>>,
        mode: &ModeState,
    ) -> Result<(Arc<Runtime>, Outs<Var>)> {
        let name = op.name();
        let trace = mode.trace.as_ref().ok_or_else(|| {
            operands
                .iter()
                .find_map(|o| match o {
                    Operand::Tensor(t) => symbol_of(&t.value),
                    Operand::Array(_) | Operand::Scalar(_) => None,
                })
                .map_or_else(|| leaked(name), |s| leaked_symbol(name, s))
        })?;
        // A tensor with data that requires grad, met by a traced op, would become a constant
        // of the program and lose its derivative: refuse instead of answering wrong.
        if operands.iter().any(
            |o| matches!(o, Operand::Tensor(t) if matches!(t.value, Value::Tensor(_)) && t.is_tracked()),
        ) {
            return Err(tracked_capture(name));
        }
        let runtime = self.runtime_for(first_rt, mode);
        check_members_of(name, operands, &runtime)?;
        let scalars = promote_weak_scalars(op, operands)?;
        let (data_from, common) = strong_common(op, operands);
        let inputs: Vec<Var> = operands
            .iter()
            .enumerate()
            .map(|(i, o)| match o {
                Operand::Tensor(t) if t.value.is_weak() => {
                    let to = weak_operand_dtype(i, data_from, common, t.value.dtype());
                    let v = t.input_var(mode.capture_trace);
                    if to == t.value.dtype() {
                        return Ok(v);
                    }
                    // A weak scalar takes the tensors' dtype, as `scalar_tensor` converts a
                    // Python scalar (`as` casts): one `cast` in the program.
                    let cast = Op::Cast(to);
                    let out = Outs::of(&cast, trace.emit(&cast, &[&v.value])?)?;
                    let out = if mode.records(v.node.is_some()) {
                        record_outs(&cast, vec![v], out, mode.capture_trace)
                    } else {
                        out.map(Var::untracked)
                    };
                    out.into_vec()
                        .pop()
                        .ok_or_else(|| Error::internal(name, "cast gave no output"))
                }
                Operand::Tensor(t) => Ok(t.input_var(mode.capture_trace)),
                Operand::Array(t) => Ok(Var::constant(t.clone())),
                Operand::Scalar(_) => scalars
                    .get(i)
                    .and_then(Option::clone)
                    .map(Var::constant)
                    .ok_or_else(|| {
                        Error::internal(name, "a weak scalar operand was not converted")
                    }),
            })
            .collect::<Result<_>>()?;
        let values: Vec<&Value> = inputs.iter().map(|v| &v.value).collect();
        let outs = Outs::of(op, trace.emit(op, &values)?)?;
        if !mode.records(any_node(operands)) {
            return Ok((runtime, outs.map(Var::untracked)));
        }
        Ok((runtime, record_outs(op, inputs, outs, mode.capture_trace)))
    }

    /// Resolve the runtime and engine of a program over `operands` and check that every tensor
    /// belongs to the runtime, before the program is built (einsum looks its plan up in the
    /// engine's cache).
    ///
    /// # Errors
    /// As [`Session::resolve`]; `ContextMismatch`.
    pub fn prepare(
        &self,
        op: &str,
        operands: &[Operand<'_>],
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<Exec> {
        let first_rt = first_runtime(operands);
        let exec = self.resolve(op, first_rt, mode, host)?;
        exec.check_members(op, operands)?;
        Ok(exec)
    }

    /// Run `program` on `operands` (tensors or adopted arrays; einsum's lowered plans): one
    /// [`Exec::apply_vars`] per instruction, intermediates freed after their last use, the host
    /// checked between steps.
    ///
    /// # Errors
    /// As [`Session::apply`], for `op` (the name reported by the membership check).
    pub fn run_program(
        &self,
        op: &str,
        exec: &Exec,
        program: &Program,
        operands: &[Operand<'_>],
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<EagerTensor> {
        exec.check_members(op, operands)?;
        let inputs = operands
            .iter()
            .map(|o| match o {
                Operand::Tensor(t) => Ok(t.input_var(mode.capture_trace)),
                Operand::Array(t) => Ok(Var::constant(t.clone())),
                Operand::Scalar(_) => Err(Error::internal(op, "a program takes no weak scalars")),
            })
            .collect::<Result<Vec<Var>>>()?;
        let out = exec.run_program(op, program, inputs, mode, host)?;
        // A program whose output is one of its inputs (einsum "i->i") runs no op; under
        // `no_grad` its result must still be untracked, as every op's is.
        let node = if mode.grad_enabled { out.node } else { None };
        Ok(EagerTensor::new(out.value, exec.runtime.clone(), node))
    }

    /// The runtime an op on tensors of `first_rt` would run on, borrowing no engine: the
    /// session's own; for the implicit session the innermost active session's, else
    /// `first_rt`, else the default runtime (the one resolution rule, also behind
    /// [`Session::resolve`]).
    pub fn runtime_for(&self, first_rt: Option<&Arc<Runtime>>, mode: &ModeState) -> Arc<Runtime> {
        if let Some((rt, _)) = &self.target {
            return rt.clone();
        }
        match mode.sessions.iter().rev().find(|s| s.is_active()) {
            Some(s) => s.runtime_for(first_rt, mode),
            None => first_rt.unwrap_or_else(|| default_runtime()).clone(),
        }
    }

    /// An untracked tensor of the session's runtime holding `value` (factories,
    /// `s.constant`); under `capture_trace` it gets an identifiable leaf.
    ///
    /// # Errors
    /// `SessionInactive` for an explicit session outside its `with` block.
    pub fn constant(&self, value: Tensor, mode: &ModeState) -> Result<EagerTensor> {
        if self.target.is_some() && !self.is_active() {
            return Err(Error::SessionInactive {
                op: "constant".to_string(),
            });
        }
        let runtime = self.runtime_for(None, mode);
        let value = Value::Tensor(value);
        let node = mode.captured_node(&value);
        Ok(EagerTensor::new(value, runtime, node))
    }
}

/// Runtime and engine resolved for one op or one backward pass; an implicit borrow of the
/// engine is given back when this drops.
pub struct Exec {
    runtime: Arc<Runtime>,
    engine: Arc<dyn Engine>,
    release: bool,
    /// The trace that symbolic values are emitted into (graph mode).
    trace: Option<Arc<Emitter>>,
}

impl Drop for Exec {
    fn drop(&mut self) {
        if self.release {
            self.engine.lending().release();
        }
    }
}

impl Exec {
    /// The runtime the op's outputs belong to.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// The engine the op runs on.
    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    /// Every tensor operand must belong to the op's runtime.
    ///
    /// # Errors
    /// `ContextMismatch` naming the operand and both runtimes.
    pub fn check_members(&self, op: &str, operands: &[Operand<'_>]) -> Result<()> {
        check_members_of(op, operands, &self.runtime)
    }

    /// Execute `op` on the engine through the host (validation, promotion, panic containment
    /// in [`tenferro_runtime::apply`]).
    fn execute(&self, op: &Op, inputs: &[&Tensor], host: &dyn Host) -> Result<Outs<Tensor>> {
        let engine: &dyn Engine = self.engine.as_ref();
        let mut out: Option<Outs<Tensor>> = None;
        if op.num_outputs() == 1 {
            host.run(op, inputs, &mut || {
                out = Some(Outs::One(apply(engine, op, inputs)?));
                Ok(())
            })?;
        } else {
            host.run(op, inputs, &mut || {
                out = Some(Outs::Many(apply_multi(engine, op, inputs)?));
                Ok(())
            })?;
        }
        out.ok_or_else(|| Error::internal(op.name(), "the engine job stored no output"))
    }

    /// Apply `op` to AD values (the path of derivative rules and program steps): execute, then
    /// record when `mode` asks for it.
    ///
    /// # Errors
    /// Validation and kernel errors of `op`; the host's errors.
    pub fn apply_vars(
        &self,
        op: &Op,
        inputs: &[&Var],
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<Vec<Var>> {
        // One pass: the data of every input, or `None` when one is traced (then the op is
        // emitted into the trace); the op's name is looked up only on the error path.
        let data: Option<Vec<&Tensor>> = inputs
            .iter()
            .map(|v| match &v.value {
                Value::Tensor(t) => Some(t),
                Value::Symbol(_) => None,
            })
            .collect();
        let outs = match data {
            Some(vals) => self.execute(op, &vals, host)?.map(Value::Tensor),
            None => {
                let trace = self.trace.as_ref().ok_or_else(|| {
                    inputs
                        .iter()
                        .find_map(|v| symbol_of(&v.value))
                        .map_or_else(|| leaked(op.name()), |s| leaked_symbol(op.name(), s))
                })?;
                let values: Vec<&Value> = inputs.iter().map(|v| &v.value).collect();
                Outs::of(op, trace.emit(op, &values)?)?
            }
        };
        let vars = if mode.records(inputs.iter().any(|v| v.node.is_some())) {
            let owned: Vec<Var> = inputs.iter().map(|v| (*v).clone()).collect();
            record_outs(op, owned, outs, mode.capture_trace)
        } else {
            outs.map(Var::untracked)
        };
        Ok(vars.into_vec())
    }

    /// Run `program` on AD values (see [`Session::run_program`]).
    ///
    /// # Errors
    /// As [`Exec::apply_vars`]; `Internal` for a malformed program.
    pub fn run_program(
        &self,
        op: &str,
        program: &Program,
        inputs: Vec<Var>,
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<Var> {
        let mut outs = program.run_with(
            op,
            inputs,
            |t| Var::constant(t.clone()),
            |k, ins, args| {
                if k > 0 {
                    host.checkpoint(op)?;
                }
                self.apply_vars(&ins.op, args, mode, host)
            },
        )?;
        match (outs.pop(), outs.is_empty()) {
            (Some(out), true) => Ok(out),
            _ => Err(Error::internal(op, "a tensor program returns one value")),
        }
    }

    /// Run a compiled program (graph mode) on data: one engine job per step through the
    /// host, intermediates freed after their last read, the host checked between steps; the
    /// inputs are only read. Nothing is recorded.
    ///
    /// # Errors
    /// Validation and kernel errors of the steps; the host's errors; `Internal` for a wrong
    /// number of inputs.
    pub fn run_compiled(
        &self,
        op: &str,
        plan: &PreparedGraph,
        inputs: Vec<Tensor>,
        host: &dyn Host,
    ) -> Result<Vec<Tensor>> {
        let engine: &dyn Engine = self.engine.as_ref();
        plan.run(op, inputs, |k, ins, args, metas| {
            if k > 0 {
                host.checkpoint(op)?;
            }
            let mut out: Option<StepOutputs> = None;
            host.run(&ins.op, args, &mut || {
                out = Some(apply_prepared(engine, &ins.op, args, metas)?);
                Ok(())
            })?;
            out.ok_or_else(|| Error::internal(ins.op.name(), "the engine job stored no output"))
        })
    }

    /// Call the compiled program `call` on AD values (`graph-mode.md`, grad of jit): on data,
    /// its prepared plan runs as one program; when `mode` records and an input has a node, the
    /// forward part of its reverse-mode split runs instead and one `CompiledCall` node keeps the
    /// residuals its backward part reads. Traced inputs inline the program into the trace (each
    /// step recorded as `mode` says).
    ///
    /// # Errors
    /// `Shape`/`DType` for inputs unlike the compiled ones; the steps' errors; rule errors of
    /// the derivation (`UnsupportedAdRule`).
    pub fn call_compiled(
        &self,
        call: &Arc<CompiledCall>,
        inputs: &[&Var],
        mode: &ModeState,
        host: &dyn Host,
    ) -> Result<Vec<Var>> {
        let data: Option<Vec<Tensor>> = inputs
            .iter()
            .map(|v| match &v.value {
                Value::Tensor(t) => Some(t.clone()),
                Value::Symbol(_) => None,
            })
            .collect();
        let Some(data) = data else {
            let step = ModeExec {
                exec: self,
                mode,
                host,
            };
            return call.inline(&step, inputs, true);
        };
        let values: Vec<&Value> = inputs.iter().map(|v| &v.value).collect();
        call.check_inputs(&values)?;
        let caches = self.runtime.ad_caches();
        let engine = self.engine.as_ref();
        let any_node = inputs.iter().any(|v| v.node.is_some());
        // The active-edge rule of `record_custom`: a node when an input is tracked, or under a
        // functional transform's capture.
        let node = mode.grad_enabled
            && (inputs.iter().any(|v| v.is_tracked()) || (mode.capture_trace && any_node));
        let mask: Vec<bool> = inputs.iter().map(|v| v.node.is_some()).collect();
        // A program with a step that has no reverse rule (eig eigenvectors; the next order of a
        // derivative program that has one) is recorded without residuals: as in eager mode, the
        // error comes only if that derivative is asked for (the recomputing VJP derives it).
        let split = match node.then(|| caches.split(call, &mask)) {
            Some(Ok(split)) => Some(split),
            None | Some(Err(Error::UnsupportedAdRule { .. })) => None,
            Some(Err(e)) => return Err(e),
        };
        let Some(split) = split else {
            let plan = caches.prepared(call, engine)?;
            let outs = self.run_compiled(call.name(), &plan, data, host)?;
            let outs: Vec<Value> = outs.into_iter().map(Value::Tensor).collect();
            if node {
                let rule = CompiledCallRule::new(call.clone(), caches.clone(), mask, None);
                let owned: Vec<Var> = inputs.iter().map(|v| (*v).clone()).collect();
                return Ok(record_custom(
                    Arc::new(rule),
                    owned,
                    outs,
                    mode.capture_trace,
                ));
            }
            return Ok(outs.into_iter().map(Var::untracked).collect());
        };
        let plan = caches.prepared(&split.fwd, engine)?;
        let outs = self.run_compiled(call.name(), &plan, data, host)?;
        let n = split.n_outputs;
        let rule = CompiledCallRule::new(call.clone(), caches.clone(), mask, Some(n));
        let owned: Vec<Var> = inputs.iter().map(|v| (*v).clone()).collect();
        let mut vars = record_custom(
            Arc::new(rule),
            owned,
            outs.into_iter().map(Value::Tensor).collect(),
            mode.capture_trace,
        );
        // The residuals stay with the node; the caller gets the program's outputs.
        vars.truncate(n);
        Ok(vars)
    }

    /// The rule context of a backward or forward pass on this runtime and engine: rule bodies
    /// run through [`Exec::apply_vars`] and are recorded when `record` (`create_graph`).
    pub fn rules<'a>(&'a self, host: &'a dyn Host) -> RuleExec<'a> {
        RuleExec { exec: self, host }
    }
}

/// Derivative rules run through [`Exec::apply_vars`] ([`tenferro_ad::Apply`]).
pub struct RuleExec<'a> {
    exec: &'a Exec,
    host: &'a dyn Host,
}

impl Apply for RuleExec<'_> {
    fn apply_vars(&self, op: &Op, inputs: &[&Var], record: bool) -> Result<Vec<Var>> {
        self.exec
            .apply_vars(op, inputs, &self.mode(record), self.host)
    }

    fn apply_call(
        &self,
        call: &Arc<CompiledCall>,
        inputs: &[&Var],
        record: bool,
    ) -> Result<Vec<Var>> {
        self.exec
            .call_compiled(call, inputs, &self.mode(record), self.host)
    }
}

impl RuleExec<'_> {
    fn mode(&self, record: bool) -> ModeState {
        ModeState {
            grad_enabled: record,
            capture_trace: false,
            sessions: Vec::new(),
            trace: self.exec.trace.clone(),
        }
    }
}

/// Program steps run through [`Exec::apply_vars`] under a given mode (a compiled call inlined
/// into a trace).
struct ModeExec<'a> {
    exec: &'a Exec,
    mode: &'a ModeState,
    host: &'a dyn Host,
}

impl Apply for ModeExec<'_> {
    fn apply_vars(&self, op: &Op, inputs: &[&Var], _record: bool) -> Result<Vec<Var>> {
        self.exec.apply_vars(op, inputs, self.mode, self.host)
    }
}

/// The runtime of the first tensor operand (the one implicit ops resolve from).
fn first_runtime<'a>(operands: &'a [Operand<'_>]) -> Option<&'a Arc<Runtime>> {
    operands.iter().find_map(|o| match o {
        Operand::Tensor(t) => Some(&t.runtime),
        Operand::Array(_) | Operand::Scalar(_) => None,
    })
}

/// Whether a tensor operand is traced (symbolic).
#[inline]
fn any_symbol(operands: &[Operand<'_>]) -> bool {
    operands
        .iter()
        .any(|o| matches!(o, Operand::Tensor(t) if matches!(t.value, Value::Symbol(_))))
}

/// The error of a value request on a traced tensor (graph-mode.md, "Values Python asks for");
/// `TracerLeak` when the tensor's trace has ended.
pub fn concretization(op: &str, s: &tenferro_runtime::Symbol) -> Error {
    concretization_because(op, s, None)
}

/// [`concretization`] with the reason in place of the default one ("it has no values while the
/// function is traced. Use tf.where ..."): a library function names why it needs values and
/// what traces instead.
pub fn concretization_because(op: &str, s: &tenferro_runtime::Symbol, why: Option<&str>) -> Error {
    if s.trace_ended() {
        return leaked_symbol(op, s);
    }
    let made_by = made_by(s);
    let why = why.unwrap_or(
        "it has no values while the function is traced. Use tf.where instead of Python control \
         flow on values, mark the argument static (static_argnames), or run the function \
         without tf.jit",
    );
    Error::concretization(
        op,
        format!(
            "the tensor is traced by tf.jit (made by {made_by}, shape {:?}, dtype {}): {why}",
            s.shape, s.dtype
        ),
    )
}

/// What made a symbol, for messages.
fn made_by(s: &tenferro_runtime::Symbol) -> String {
    match s.origin {
        "input" if s.weak => "a Python float/complex argument of the traced function, traced \
                              as a weakly typed scalar so that a new value does not retrace"
            .to_string(),
        _ if s.weak => format!(
            "op {} on a Python float/complex argument traced as a weakly typed scalar",
            s.origin
        ),
        "input" => "an argument of the traced function".to_string(),
        "constant" => "a constant".to_string(),
        o => format!("op {o}"),
    }
}

/// The symbol of a traced value.
fn symbol_of(v: &Value) -> Option<&tenferro_runtime::Symbol> {
    match v {
        Value::Symbol(s) => Some(s),
        Value::Tensor(_) => None,
    }
}

/// The error of a traced tensor used after its trace ended (or outside it), naming it.
fn leaked_symbol(op: &str, s: &tenferro_runtime::Symbol) -> Error {
    Error::tracer_leak(
        op,
        format!(
            "a traced tensor (made by {}, shape {:?}, dtype {}) is used after its tf.jit trace \
             ended (kept outside the traced function: a global, a list, a closure, or a value \
             carried out of a trace); return it from the traced function instead",
            made_by(s),
            s.shape,
            s.dtype
        ),
    )
}

/// The error of a tensor that requires grad captured by a traced function (graph mode cannot
/// differentiate through a constant of the program).
pub fn tracked_capture(op: &str) -> Error {
    Error::trace(
        op,
        "jit: a tensor that requires grad (a variable, or a tensor under tf.func) is used inside \
         the traced function without being one of its arguments; its derivative would be lost. \
         Pass it as an argument of the jitted function",
    )
}

/// The error of a traced tensor reaching an op outside its trace.
fn leaked(op: &str) -> Error {
    Error::tracer_leak(
        op,
        "a traced tensor is used after its trace ended (a tensor of a tf.jit trace kept outside \
         the traced function); return it from the function instead",
    )
}

/// Whether a tensor operand has a node (the input half of the recording decision).
fn any_node(operands: &[Operand<'_>]) -> bool {
    operands
        .iter()
        .any(|o| matches!(o, Operand::Tensor(t) if t.node().is_some()))
}

/// The outputs of one op: one value (every op but the decompositions) without a vector, or
/// several.
enum Outs<T> {
    One(T),
    Many(Vec<T>),
}

impl<T> Outs<T> {
    /// The outputs of `op` from a vector.
    fn of(op: &Op, mut v: Vec<T>) -> Result<Outs<T>> {
        if op.num_outputs() != 1 {
            return Ok(Outs::Many(v));
        }
        match (v.pop(), v.is_empty()) {
            (Some(t), true) => Ok(Outs::One(t)),
            _ => Err(Error::internal(op.name(), "expected one output")),
        }
    }

    fn map<U>(self, f: impl Fn(T) -> U) -> Outs<U> {
        match self {
            Outs::One(t) => Outs::One(f(t)),
            Outs::Many(ts) => Outs::Many(ts.into_iter().map(f).collect()),
        }
    }

    fn into_vec(self) -> Vec<T> {
        match self {
            Outs::One(t) => vec![t],
            Outs::Many(ts) => ts,
        }
    }
}

/// Record `op(inputs) = outs` (one node; a multi-output node with its projections) under the
/// active-edge rule.
fn record_outs(op: &Op, inputs: Vec<Var>, outs: Outs<Value>, capture: bool) -> Outs<Var> {
    match outs {
        Outs::One(t) => Outs::One(record(op, inputs, t, capture)),
        Outs::Many(ts) => Outs::Many(record_multi(op, inputs, ts, capture)),
    }
}

/// A compact copy of `value` in fresh storage, made by the engine that runs the implicit ops of
/// `runtime` (default: the innermost active session's, else the default runtime's) — host arrays
/// adopted with a copy, factories, DLPack exports that must copy.
///
/// # Errors
/// As [`Session::resolve`]; allocation failure; the host's `Interrupted`.
pub fn copy_for(
    op: &str,
    runtime: Option<&Arc<Runtime>>,
    value: &Tensor,
    mode: &ModeState,
    host: &dyn Host,
) -> Result<Tensor> {
    let exec = IMPLICIT.resolve(op, runtime, mode, host)?;
    let engine: &dyn Engine = exec.engine.as_ref();
    let mut out = None;
    host.run(&Op::Convert(value.dtype()), &[value], &mut || {
        out = Some(engine.contiguous_copy(value)?);
        Ok(())
    })?;
    out.ok_or_else(|| Error::internal(op, "the engine returned no copy"))
}

/// Weak scalars adopt the dtype of the tensor operands they are combined with (`ops.md`,
/// "Python scalars"); `select`'s predicate takes no part. Alone, a scalar takes its default
/// dtype (bool, int64, float64, complex128). One entry per operand (`Some` for a scalar), or
/// none at all when no operand is a scalar (no allocation on that common path).
///
/// # Errors
/// `Overflow` for an integer that does not fit the adopted integer dtype.
pub fn promote_weak_scalars(op: &Op, operands: &[Operand<'_>]) -> Result<WeakScalars> {
    if !operands.iter().any(|o| matches!(o, Operand::Scalar(_))) {
        return Ok(WeakScalars::new());
    }
    let (data_from, common) = strong_common(op, operands);
    operands
        .iter()
        .enumerate()
        .map(|(i, o)| match o {
            Operand::Scalar(s) => {
                let d = match (i >= data_from, common) {
                    (true, Some(c)) => promote_weak(c, s.kind()),
                    _ => scalar_default_dtype(s.kind()),
                };
                // NumPy 2 compares an int32 tensor with a Python int outside int32's range
                // exactly (`x == 2**40` is False) instead of overflowing: the comparison runs
                // in int64. Arithmetic still overflows, as in NumPy.
                let d = match (op, s, d) {
                    (Op::Compare(_), Scalar::Int(v), DType::I32) if i32::try_from(*v).is_err() => {
                        DType::I64
                    }
                    _ => d,
                };
                scalar_tensor(op.name(), *s, d).map(Some)
            }
            Operand::Tensor(_) | Operand::Array(_) => Ok(None),
        })
        .collect()
}

/// The operands weak scalars adapt to: from which operand on (`select`'s predicate takes no
/// part), and the promoted dtype of the strongly typed ones (tensors, arrays; not weakly typed
/// traced scalars), if any.
fn strong_common(op: &Op, operands: &[Operand<'_>]) -> (usize, Option<DType>) {
    let data_from = usize::from(matches!(op, Op::Select));
    let common = operands
        .iter()
        .skip(data_from)
        .filter_map(|o| match o {
            Operand::Tensor(t) if t.value.is_weak() => None,
            Operand::Tensor(t) => Some(t.value.dtype()),
            Operand::Array(t) => Some(t.dtype()),
            Operand::Scalar(_) => None,
        })
        .reduce(promote);
    (data_from, common)
}

/// The dtype a weakly typed traced scalar of `dtype` takes as operand `i` of `op` (as a Python
/// scalar of its kind would: [`promote_weak_scalars`]).
fn weak_operand_dtype(i: usize, data_from: usize, common: Option<DType>, dtype: DType) -> DType {
    match (i >= data_from, common) {
        (true, Some(c)) => promote_weak(c, kind_of(dtype)),
        _ => dtype,
    }
}

fn kind_of(d: DType) -> ScalarKind {
    if d.is_bool() {
        ScalarKind::Bool
    } else if d.is_int() {
        ScalarKind::Int
    } else if d.is_complex() {
        ScalarKind::Complex
    } else {
        ScalarKind::Float
    }
}

/// A rank-0 tensor of `dtype` holding the Python scalar `s` (complex to real keeps the real
/// part, float to integer truncates, as NumPy's `astype`).
///
/// # Errors
/// `Overflow` when an integer does not fit `int32`.
pub fn scalar_tensor(op: &str, s: Scalar, dtype: DType) -> Result<Tensor> {
    let (re, im, int) = match s {
        Scalar::Bool(b) => (f64::from(u8::from(b)), 0.0, i64::from(b)),
        Scalar::Int(i) => (i as f64, 0.0, i),
        Scalar::Float(f) => (f, 0.0, f as i64),
        Scalar::Complex(c) => (c.re, c.im, c.re as i64),
    };
    match dtype {
        DType::Bool => scalar_of(re != 0.0 || im != 0.0),
        DType::I32 => {
            let v = i32::try_from(int).map_err(|_| {
                Error::overflow(op, format!("Python integer {int} out of bounds for int32"))
            })?;
            scalar_of(v)
        }
        DType::I64 => scalar_of(int),
        DType::F32 => scalar_of(re as f32),
        DType::F64 => scalar_of(re),
        DType::C32 => scalar_of(Complex32::new(re as f32, im as f32)),
        DType::C64 => scalar_of(Complex64::new(re, im)),
    }
}

/// A 0-d tensor holding `value`, written in place (no temporary vector).
fn scalar_of<T: Element>(value: T) -> Result<Tensor> {
    let t = Tensor::empty("scalar", T::DTYPE, &[], None, false)?;
    // SAFETY: freshly allocated, compact, one element of type `T`, not yet shared.
    unsafe { t.fresh_slice_mut::<T>()[0] = value };
    Ok(t)
}

/// `ContextMismatch` when a tensor operand belongs to another runtime than `runtime`.
fn check_members_of(op: &str, operands: &[Operand<'_>], runtime: &Arc<Runtime>) -> Result<()> {
    for (i, o) in operands.iter().enumerate() {
        if let Operand::Tensor(t) = o {
            if !Arc::ptr_eq(&t.runtime, runtime) {
                return Err(Error::context_mismatch(
                    op,
                    format!(
                        "operand {i} belongs to runtime {} but the op runs on runtime {}",
                        t.runtime.id(),
                        runtime.id()
                    ),
                ));
            }
        }
    }
    Ok(())
}
