//! The `Program` IR (`architecture.md`, "One op table, one rule table, one IR"): a straight-line
//! list of primitive applications over numbered slots — the inputs first, then the constants,
//! then the outputs of each instruction in order (one slot per output of its op) — with the last
//! use of every slot, so a runner can free intermediates as soon as nothing reads them.
//!
//! Programs are made two ways: lowered directly (einsum plans), or built op by op with a
//! [`ProgramBuilder`] from [`Symbol`]s, values that have a shape and a dtype but no data (the
//! emitting context of the derivative rules, and graph mode's traces). [`Program::run`] runs one
//! on any [`Engine`]; [`Program::run_with`] is the one slot-management loop, shared with runners
//! that execute steps their own way (the eager core's, which records for AD).

use crate::Engine;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use tenferro_ops::{infer_outputs, Op};
use tenferro_tensor::{DType, Error, Result, Tensor};

/// One step: `slots.extend(op(slots[inputs]...))` (one new slot per output of `op`).
#[derive(Clone, Debug)]
pub struct Instr {
    /// The primitive and its parameters.
    pub op: Op,
    /// Slots read, in operand order.
    pub inputs: Vec<usize>,
}

/// A straight-line program over slots (see the module docs).
#[derive(Clone, Debug)]
pub struct Program {
    n_inputs: usize,
    consts: Vec<Tensor>,
    instrs: Vec<Instr>,
    outputs: Vec<usize>,
    /// Per slot, the index of the last instruction reading it (`usize::MAX`: none, or an
    /// output, which is never freed).
    last_use: Vec<usize>,
}

impl Program {
    /// A program of `n_inputs` inputs, `consts` (slots `n_inputs..n_inputs + consts.len()`) and
    /// `instrs`, returning the slots `outputs` (in order; a slot may be returned twice, and an
    /// input or a constant may be returned).
    ///
    /// # Errors
    /// `Internal` when an instruction reads a slot that is not defined before it or an output
    /// is not a slot: a lowering bug, reported instead of run.
    pub fn new(
        n_inputs: usize,
        consts: Vec<Tensor>,
        instrs: Vec<Instr>,
        outputs: Vec<usize>,
    ) -> Result<Program> {
        let mut defined = n_inputs + consts.len();
        let mut last_use = vec![usize::MAX; defined];
        for (k, ins) in instrs.iter().enumerate() {
            for &i in &ins.inputs {
                if i >= defined {
                    return Err(Error::internal(
                        ins.op.name(),
                        format!("program step {k} reads slot {i}, defined only later"),
                    ));
                }
                last_use[i] = k;
            }
            defined += ins.op.num_outputs();
            last_use.resize(defined, usize::MAX);
        }
        for &o in &outputs {
            if o >= defined {
                return Err(Error::internal(
                    "program",
                    format!("output slot {o} of a program with {defined} slots"),
                ));
            }
            last_use[o] = usize::MAX;
        }
        Ok(Program {
            n_inputs,
            consts,
            instrs,
            outputs,
            last_use,
        })
    }

    /// Number of inputs.
    pub fn n_inputs(&self) -> usize {
        self.n_inputs
    }

    /// The constants (slots after the inputs).
    pub fn consts(&self) -> &[Tensor] {
        &self.consts
    }

    /// The instructions, in execution order.
    pub fn instrs(&self) -> &[Instr] {
        &self.instrs
    }

    /// The slots returned, in order.
    pub fn outputs(&self) -> &[usize] {
        &self.outputs
    }

    /// Number of slots (inputs, constants and every instruction output).
    pub fn n_slots(&self) -> usize {
        self.last_use.len()
    }

    /// Whether instruction `k` is the last reader of `slot` (then the slot can be freed).
    pub fn is_last_use(&self, slot: usize, k: usize) -> bool {
        self.last_use.get(slot) == Some(&k)
    }

    /// Approximate heap bytes (for the plan cache's byte budget).
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self
                .instrs
                .iter()
                .map(|i| 96 + 8 * i.inputs.len())
                .sum::<usize>()
            + 8 * (self.last_use.len() + self.outputs.len())
            + self
                .consts
                .iter()
                .map(|t| t.numel() * t.dtype().itemsize())
                .sum::<usize>()
    }

    /// Run the program with values of any type `V`: the one slot loop (a slot is dropped after
    /// its last read; inputs are only read). `constant` makes a value of a constant, `step`
    /// executes instruction `k` on its operands and returns one value per output of its op.
    ///
    /// # Errors
    /// `Internal` when `inputs` has the wrong length or `step` returns the wrong number of
    /// values; every error of `step`.
    pub fn run_with<V: Clone>(
        &self,
        name: &str,
        inputs: Vec<V>,
        constant: impl Fn(&Tensor) -> V,
        mut step: impl FnMut(usize, &Instr, &[&V]) -> Result<Vec<V>>,
    ) -> Result<Vec<V>> {
        if inputs.len() != self.n_inputs {
            return Err(Error::internal(
                name,
                format!("a program of {} inputs got {}", self.n_inputs, inputs.len()),
            ));
        }
        let mut slots: Vec<Option<V>> = Vec::with_capacity(self.n_slots());
        slots.extend(inputs.into_iter().map(Some));
        slots.extend(self.consts.iter().map(|t| Some(constant(t))));
        for (k, ins) in self.instrs.iter().enumerate() {
            let outs = {
                let args: Vec<&V> = ins
                    .inputs
                    .iter()
                    .map(|&i| slots.get(i).and_then(Option::as_ref))
                    .collect::<Option<_>>()
                    .ok_or_else(|| Error::internal(name, "the program reads a freed slot"))?;
                step(k, ins, &args)?
            };
            if outs.len() != ins.op.num_outputs() {
                return Err(Error::internal(
                    ins.op.name(),
                    format!(
                        "a program step gave {} outputs, its op has {}",
                        outs.len(),
                        ins.op.num_outputs()
                    ),
                ));
            }
            slots.extend(outs.into_iter().map(Some));
            for &i in &ins.inputs {
                if self.is_last_use(i, k) {
                    slots[i] = None;
                }
            }
        }
        self.outputs
            .iter()
            .map(|&o| {
                slots
                    .get(o)
                    .and_then(Option::clone)
                    .ok_or_else(|| Error::internal(name, "a program output is missing"))
            })
            .collect()
    }

    /// Run the program on `engine` (each step through [`crate::apply_multi`]: validation,
    /// promotion, panic containment), freeing every intermediate after its last read. The
    /// inputs and the constants are never written.
    ///
    /// # Errors
    /// Validation and kernel errors of the steps; `Internal` for a wrong number of inputs.
    pub fn run(&self, engine: &dyn Engine, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        self.run_with("program", inputs.to_vec(), Tensor::clone, |_, ins, args| {
            crate::apply_multi(engine, &ins.op, args)
        })
    }
}

static NEXT_TRACE: AtomicU64 = AtomicU64::new(1);

/// A value of a program being built: shape and dtype, no data, and the slot that will hold it.
#[derive(Clone, Debug, PartialEq)]
pub struct Symbol {
    /// The builder (trace) it belongs to; a symbol is meaningless in any other.
    pub trace: u64,
    /// Its slot in the builder (renumbered by [`ProgramBuilder::finish`]).
    pub slot: usize,
    /// Element type.
    pub dtype: DType,
    /// Shape.
    pub shape: Vec<usize>,
    /// What made it: `"input"`, `"constant"`, or the name of the op whose output it is (named
    /// by errors about the value).
    pub origin: &'static str,
    /// A weakly typed Python scalar (a `float`/`complex` argument of a jitted function, or
    /// Python arithmetic on one): like a Python scalar operand of an eager op, it takes the
    /// dtype of the tensors it meets (`ops.md`, "Python scalars"). Only tracing reads it.
    pub weak: bool,
    /// Set when its trace ended (shared by the trace's symbols: a leaked tracer is one load).
    pub ended: TraceEnded,
}

impl Symbol {
    /// Whether its trace has ended (the symbol is a leaked tracer).
    #[inline]
    pub fn trace_ended(&self) -> bool {
        self.ended.0.load(Ordering::Acquire)
    }
}

/// The end flag of one trace, shared by its builder and every symbol it made. Symbols compare
/// equal on it when they share it.
#[derive(Clone, Debug, Default)]
pub struct TraceEnded(Arc<AtomicBool>);

impl PartialEq for TraceEnded {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// What defines a slot of a program under construction.
#[derive(Clone, Copy, Debug)]
enum Def {
    Input,
    Const(usize),
    Output,
}

/// Builds a [`Program`] op by op on [`Symbol`]s: every step is validated and its outputs'
/// shapes and dtypes inferred by the catalog (so shape and dtype errors surface while
/// building, with the eager class and message), nothing is executed.
#[derive(Debug)]
pub struct ProgramBuilder {
    trace: u64,
    ended: TraceEnded,
    defs: Vec<Def>,
    consts: Vec<Tensor>,
    /// The slot of each constant by the view it is (storage, offset, dtype, shape, strides): a
    /// tensor used twice (a cotangent a rule reads twice) is one constant, so common
    /// subexpression elimination sees one slot. The builder holds the storage, so an address
    /// cannot be reused while it lives.
    const_slots: std::collections::HashMap<ConstKey, usize>,
    instrs: Vec<Instr>,
}

type ConstKey = (usize, usize, DType, Vec<usize>, Vec<isize>);

impl Default for ProgramBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ProgramBuilder {
    /// An empty builder with a process-unique trace id.
    pub fn new() -> ProgramBuilder {
        ProgramBuilder {
            trace: NEXT_TRACE.fetch_add(1, Ordering::Relaxed),
            ended: TraceEnded::default(),
            defs: Vec::new(),
            consts: Vec::new(),
            const_slots: std::collections::HashMap::new(),
            instrs: Vec::new(),
        }
    }

    /// The trace id its symbols carry.
    pub fn trace(&self) -> u64 {
        self.trace
    }

    fn symbol(
        &mut self,
        def: Def,
        dtype: DType,
        shape: Vec<usize>,
        origin: &'static str,
    ) -> Symbol {
        self.defs.push(def);
        Symbol {
            trace: self.trace,
            slot: self.defs.len() - 1,
            dtype,
            shape,
            origin,
            weak: false,
            ended: self.ended.clone(),
        }
    }

    /// End the trace without a program (an aborted trace): its symbols are leaked tracers from
    /// now on ([`Symbol::trace_ended`]). [`ProgramBuilder::finish`] ends it too.
    pub fn end(&self) {
        self.ended.0.store(true, Ordering::Release);
    }

    /// A new program input (inputs are numbered in the order they are declared).
    pub fn input(&mut self, dtype: DType, shape: &[usize]) -> Symbol {
        self.symbol(Def::Input, dtype, shape.to_vec(), "input")
    }

    /// A new rank-0 program input holding a weakly typed Python scalar of `dtype` (`float64`
    /// for `float`, `complex128` for `complex`; see [`Symbol::weak`]).
    pub fn weak_input(&mut self, dtype: DType) -> Symbol {
        Symbol {
            weak: true,
            ..self.input(dtype, &[])
        }
    }

    /// A constant of the program (kept by it; never written by a runner).
    /// The same view of the same storage given twice is one constant.
    pub fn constant(&mut self, value: Tensor) -> Symbol {
        let (dtype, shape) = (value.dtype(), value.shape().to_vec());
        let key: ConstKey = (
            Arc::as_ptr(value.storage()) as *const () as usize,
            value.offset(),
            dtype,
            shape.clone(),
            value.strides().to_vec(),
        );
        if let Some(&slot) = self.const_slots.get(&key) {
            return Symbol {
                trace: self.trace,
                slot,
                dtype,
                shape,
                origin: "constant",
                weak: false,
                ended: self.ended.clone(),
            };
        }
        self.consts.push(value);
        let s = self.symbol(Def::Const(self.consts.len() - 1), dtype, shape, "constant");
        self.const_slots.insert(key, s.slot);
        s
    }

    fn check(&self, op: &str, s: &Symbol) -> Result<()> {
        if s.trace != self.trace || s.slot >= self.defs.len() {
            return Err(Error::tracer_leak(
                op,
                format!(
                    "a traced tensor (shape {:?}, dtype {}, made by {}) is used outside the trace \
                     that made it (it belongs to trace {}; this is trace {}); return it from the \
                     traced function instead of keeping it",
                    s.shape, s.dtype, s.origin, s.trace, self.trace
                ),
            ));
        }
        Ok(())
    }

    /// Append `op(inputs)`: validated and shape-inferred by the catalog; one symbol per output.
    ///
    /// # Errors
    /// The validation errors of `op` (as eager execution would raise them); `Internal` for a
    /// symbol of another builder.
    pub fn push(&mut self, op: Op, inputs: &[&Symbol]) -> Result<Vec<Symbol>> {
        for s in inputs {
            self.check(op.name(), s)?;
        }
        let metas: Vec<(DType, &[usize])> = inputs
            .iter()
            .map(|s| (s.dtype, s.shape.as_slice()))
            .collect();
        let outs = infer_outputs(&op, &metas)?;
        let name = op.name();
        self.instrs.push(Instr {
            op,
            inputs: inputs.iter().map(|s| s.slot).collect(),
        });
        Ok(outs
            .into_iter()
            .map(|m| self.symbol(Def::Output, m.dtype, m.shape, name))
            .collect())
    }

    /// The program returning `outputs`: slots renumbered into the [`Program`] layout (inputs,
    /// constants, instruction outputs).
    ///
    /// # Errors
    /// `Internal` for a symbol of another builder.
    pub fn finish(self, outputs: &[&Symbol]) -> Result<Program> {
        self.end();
        for s in outputs {
            self.check("program", s)?;
        }
        let n_inputs = self.defs.iter().filter(|d| matches!(d, Def::Input)).count();
        let n_consts = self.consts.len();
        let mut map = vec![0usize; self.defs.len()];
        let (mut next_input, mut next_out) = (0, n_inputs + n_consts);
        for (slot, def) in self.defs.iter().enumerate() {
            map[slot] = match *def {
                Def::Input => {
                    next_input += 1;
                    next_input - 1
                }
                Def::Const(k) => n_inputs + k,
                Def::Output => {
                    next_out += 1;
                    next_out - 1
                }
            };
        }
        let instrs = self
            .instrs
            .into_iter()
            .map(|ins| Instr {
                inputs: ins.inputs.iter().map(|&i| map[i]).collect(),
                op: ins.op,
            })
            .collect();
        Program::new(
            n_inputs,
            self.consts,
            instrs,
            outputs.iter().map(|s| map[s.slot]).collect(),
        )
    }
}
