//! The emitting implementation of the rule context (`architecture.md`, "One op table, one rule
//! table, one IR"), and graph mode's trace (`graph-mode.md`): instead of executing, every
//! primitive is appended to a [`Program`] under construction, on [`Symbol`]s (shape and dtype,
//! no data). Because rules read no tensor values, the program emitted for one shape and dtype is
//! valid for every input of that shape and dtype.
//!
//! Constants go through the context: a concrete value that reaches it (a rule's scalar `1`, an
//! index table built from shapes, a tensor a traced function captures) becomes a constant of the
//! program. Emission never records AD nodes by itself: a derivative program is differentiated by
//! emitting its own rules again (the eager core records on symbols when a traced function asks
//! for derivatives).

use crate::{Apply, Value, Var};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use tenferro_ops::Op;
use tenferro_runtime::{Program, ProgramBuilder, Symbol};
use tenferro_tensor::{DType, Error, Result, Tensor};

/// A program under construction that rule bodies and traced ops emit into ([`Apply`]). Use with
/// [`Ctx`](crate::Ctx)`{ exec: &emitter, record: false }`, declare the program inputs with
/// [`Emitter::input`], run the rule bodies, and [`Emitter::finish`] with the values to return.
/// Thread-safe: graph mode keeps one in the mode state of the traced call.
#[derive(Debug, Default)]
pub struct Emitter {
    builder: Mutex<ProgramBuilder>,
    ended: AtomicBool,
}

impl Emitter {
    /// An empty program.
    pub fn new() -> Emitter {
        Emitter::default()
    }

    /// The trace id its symbols carry.
    pub fn trace_id(&self) -> u64 {
        self.lock().trace()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ProgramBuilder> {
        self.builder.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new program input of `dtype` and `shape`.
    pub fn input_value(&self, dtype: DType, shape: &[usize]) -> Value {
        Value::Symbol(self.lock().input(dtype, shape))
    }

    /// A new rank-0 program input for a weakly typed Python scalar of `dtype`.
    pub fn weak_input_value(&self, dtype: DType) -> Value {
        Value::Symbol(self.lock().weak_input(dtype))
    }

    /// A new program input of `dtype` and `shape`, as a value rules can take.
    pub fn input(&self, dtype: DType, shape: &[usize]) -> Var {
        Var::untracked(self.input_value(dtype, shape))
    }

    /// `value` as a constant of the program, as a symbolic value: ops on it are emitted (and
    /// folded when the program is prepared for an engine) instead of run while tracing.
    pub fn constant_value(&self, value: Tensor) -> Value {
        Value::Symbol(self.lock().constant(value))
    }

    /// The symbol of `v` in this program (a concrete value becomes a constant).
    fn symbol(b: &mut ProgramBuilder, v: &Value) -> Symbol {
        match v {
            Value::Symbol(s) => s.clone(),
            Value::Tensor(t) => b.constant(t.clone()),
        }
    }

    fn check_open(&self, op: &str) -> Result<()> {
        if self.ended.load(Ordering::Acquire) {
            return Err(Error::tracer_leak(
                op,
                "the trace has ended: a traced tensor was kept past the end of the traced \
                 function; return it from the function instead",
            ));
        }
        Ok(())
    }

    /// Append `op(inputs)`: validated and shape-inferred by the catalog; one value per output.
    ///
    /// # Errors
    /// The validation errors of `op` (the eager class and message); `TracerLeak` for a symbol
    /// of another trace or after the trace ended.
    pub fn emit(&self, op: &Op, inputs: &[&Value]) -> Result<Vec<Value>> {
        self.check_open(op.name())?;
        let mut b = self.lock();
        let syms: Vec<Symbol> = inputs.iter().map(|v| Self::symbol(&mut b, v)).collect();
        let refs: Vec<&Symbol> = syms.iter().collect();
        Ok(b.push(op.clone(), &refs)?
            .into_iter()
            .map(Value::Symbol)
            .collect())
    }

    /// End the trace: the program returning `outputs` (in order; a concrete value is returned
    /// as a constant). Symbols of this trace are leaked tracers afterwards.
    ///
    /// # Errors
    /// `TracerLeak` for a value of another trace, or when the trace has already ended.
    pub fn finish_values(&self, outputs: &[&Value]) -> Result<Program> {
        self.check_open("trace")?;
        let mut b = self.lock();
        let syms: Vec<Symbol> = outputs.iter().map(|v| Self::symbol(&mut b, v)).collect();
        let refs: Vec<&Symbol> = syms.iter().collect();
        let builder = std::mem::take(&mut *b);
        self.ended.store(true, Ordering::Release);
        builder.finish(&refs)
    }

    /// End the trace without a program (the traced function raised): its symbols are leaked
    /// tracers from now on, and further emission is refused. Idempotent.
    pub fn end(&self) {
        self.ended.store(true, Ordering::Release);
        self.lock().end();
    }

    /// [`Emitter::finish_values`] of AD values.
    ///
    /// # Errors
    /// As [`Emitter::finish_values`].
    pub fn finish(self, outputs: &[&Var]) -> Result<Program> {
        let values: Vec<&Value> = outputs.iter().map(|v| &v.value).collect();
        self.finish_values(&values)
    }
}

impl Apply for Emitter {
    fn apply_vars(&self, op: &Op, inputs: &[&Var], _record: bool) -> Result<Vec<Var>> {
        let values: Vec<&Value> = inputs.iter().map(|v| &v.value).collect();
        Ok(self
            .emit(op, &values)?
            .into_iter()
            .map(Var::untracked)
            .collect())
    }
}
