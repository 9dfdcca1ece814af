//! The emitting implementation of the rule context (`architecture.md`, "One op table, one rule
//! table, one IR"): instead of executing, every primitive a rule body applies is appended to a
//! [`Program`] under construction, on [`Symbol`]s (shape and dtype, no data). Because rules read
//! no tensor values, the program emitted for one shape and dtype is valid for every input of
//! that shape and dtype.
//!
//! Constants go through the context: a concrete value that reaches it (a rule's scalar `1`, an
//! index table built from shapes, a primal a caller passes as data) becomes a constant of the
//! program. Emission never records AD nodes: a derivative program is differentiated by emitting
//! its own rules again.

use crate::{Apply, Value, Var};
use std::cell::RefCell;
use tenferro_ops::Op;
use tenferro_runtime::{Program, ProgramBuilder, Symbol};
use tenferro_tensor::{DType, Result};

/// A rule context ([`Apply`]) that emits instead of executing. Use with
/// [`Ctx`](crate::Ctx)`{ exec: &emitter, record: false }`, declare the program inputs with
/// [`Emitter::input`], run the rule bodies, and [`Emitter::finish`] with the values to return.
#[derive(Debug, Default)]
pub struct Emitter {
    builder: RefCell<ProgramBuilder>,
}

impl Emitter {
    /// An empty program.
    pub fn new() -> Emitter {
        Emitter::default()
    }

    /// A new program input of `dtype` and `shape`, as a value rules can take.
    pub fn input(&self, dtype: DType, shape: &[usize]) -> Var {
        Var {
            value: Value::Symbol(self.builder.borrow_mut().input(dtype, shape)),
            node: None,
        }
    }

    /// The symbol of `v` in this program (a concrete value becomes a constant).
    fn symbol(b: &mut ProgramBuilder, v: &Var) -> Symbol {
        match &v.value {
            Value::Symbol(s) => s.clone(),
            Value::Tensor(t) => b.constant(t.clone()),
        }
    }

    /// The program returning `outputs` (in order; a concrete value is returned as a constant).
    ///
    /// # Errors
    /// `Internal` for a value of another program.
    pub fn finish(self, outputs: &[&Var]) -> Result<Program> {
        let mut b = self.builder.into_inner();
        let syms: Vec<Symbol> = outputs.iter().map(|v| Self::symbol(&mut b, v)).collect();
        let refs: Vec<&Symbol> = syms.iter().collect();
        b.finish(&refs)
    }
}

impl Apply for Emitter {
    fn apply_vars(&self, op: &Op, inputs: &[&Var], _record: bool) -> Result<Vec<Var>> {
        let mut b = self.builder.borrow_mut();
        let syms: Vec<Symbol> = inputs.iter().map(|v| Self::symbol(&mut b, v)).collect();
        let refs: Vec<&Symbol> = syms.iter().collect();
        Ok(b.push(op.clone(), &refs)?
            .into_iter()
            .map(|s| Var {
                value: Value::Symbol(s),
                node: None,
            })
            .collect())
    }
}
