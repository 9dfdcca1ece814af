//! The `Program` IR (`architecture.md`, "One op table, one rule table, one IR"): a straight-line
//! list of primitive applications over numbered slots — the inputs first, then the constants,
//! then one slot per instruction output — with the last use of every slot, so a runner can free
//! intermediates as soon as nothing reads them. Einsum plans are programs; graph mode and the
//! derivative programs of the rule table build on the same type.

use tenferro_ops::Op;
use tenferro_tensor::Tensor;

/// One step: `slots.push(op(slots[inputs]...))`.
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
    output: usize,
    /// Per slot, the index of the last instruction reading it (`usize::MAX`: none, or the
    /// output, which is never freed).
    last_use: Vec<usize>,
}

impl Program {
    /// A program of `n_inputs` inputs, `consts` (slots `n_inputs..n_inputs + consts.len()`) and
    /// `instrs`, returning slot `output`.
    ///
    /// # Errors
    /// `Internal` when an instruction reads a slot that is not defined before it or `output`
    /// is not a slot: a lowering bug, reported instead of run.
    pub fn new(
        n_inputs: usize,
        consts: Vec<Tensor>,
        instrs: Vec<Instr>,
        output: usize,
    ) -> tenferro_tensor::Result<Program> {
        let first = n_inputs + consts.len();
        let n_slots = first + instrs.len();
        let mut last_use = vec![usize::MAX; n_slots];
        for (k, ins) in instrs.iter().enumerate() {
            for &i in &ins.inputs {
                if i >= first + k {
                    return Err(tenferro_tensor::Error::internal(
                        ins.op.name(),
                        format!("program step {k} reads slot {i}, defined only later"),
                    ));
                }
                last_use[i] = k;
            }
        }
        if output >= n_slots {
            return Err(tenferro_tensor::Error::internal(
                "program",
                format!("output slot {output} of a program with {n_slots} slots"),
            ));
        }
        last_use[output] = usize::MAX;
        Ok(Program {
            n_inputs,
            consts,
            instrs,
            output,
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

    /// The slot returned.
    pub fn output(&self) -> usize {
        self.output
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
            + 8 * self.last_use.len()
    }
}
