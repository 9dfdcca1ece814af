//! Graph mode's binding (`graph-mode.md`): `_Trace` (a program being recorded: symbolic input
//! tensors, the mode state that routes ops on them into the trace) and `_Graph` (a finished
//! program: printable, run from one call). `tenferro.jit` builds `tf.jit` on these.

use crate::apply::operands;
use crate::classes::{PyRuntime, PyTensor};
use crate::convert::dtype_from_py;
use crate::defaults::runtime_arg;
use crate::errors::PyResultExt;
use crate::host::PyHost;
use crate::mode::{current_state, set_state};
use pyo3::prelude::*;
use pyo3::types::PyModule;
use std::sync::Arc;
use tenferro_ad::Emitter;
use tenferro_eager::{scalar_tensor, EagerTensor, Operand, Runtime, Value, IMPLICIT};
use tenferro_runtime::{optimize_for, PassConfig, Program};
use tenferro_tensor::{dtype::scalar_default_dtype, DType, Error, Tensor};

/// A trace being recorded: ops on its symbolic tensors are appended to a program instead of
/// executed, while its mode state is set (``enter``).
#[pyclass(name = "_Trace", module = "tenferro._tenferro", frozen)]
pub struct PyTrace {
    emitter: Arc<Emitter>,
    runtime: Arc<Runtime>,
    /// Dtype and shape of each input, in order (the passes infer every slot from them).
    inputs: std::sync::Mutex<Vec<(DType, Vec<usize>)>>,
}

#[pymethods]
impl PyTrace {
    /// A new, empty trace recording on ``runtime`` (default: the default runtime).
    #[new]
    #[pyo3(signature = (runtime=None))]
    fn new(py: Python<'_>, runtime: Option<&Bound<'_, PyRuntime>>) -> PyResult<Self> {
        Ok(PyTrace {
            emitter: Arc::new(Emitter::new()),
            runtime: runtime_arg(py, runtime)?,
            inputs: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// A new program input: a traced tensor of ``dtype`` and ``shape`` (no data).
    fn input(
        &self,
        py: Python<'_>,
        dtype: &Bound<'_, PyAny>,
        shape: Vec<usize>,
    ) -> PyResult<PyTensor> {
        let d = dtype_from_py(py, "jit", dtype)?;
        let v = self.emitter.input_value(d, &shape);
        self.inputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((d, shape));
        Ok(EagerTensor::new(v, self.runtime.clone(), None).into())
    }

    /// A new program input for a weakly typed Python scalar of ``dtype`` (``float64`` for a
    /// ``float``, ``complex128`` for a ``complex``): a rank-0 traced tensor that takes the
    /// dtype of the tensors it meets, as the Python number would in eager code.
    fn weak_input(&self, py: Python<'_>, dtype: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let d = dtype_from_py(py, "jit", dtype)?;
        let v = self.emitter.weak_input_value(d);
        self.inputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((d, Vec::new()));
        Ok(EagerTensor::new(v, self.runtime.clone(), None).into())
    }

    /// Route ops on this trace's tensors into it in the calling context; returns the
    /// ``ContextVar`` token that ends the routing (``_state_var().reset(token)``).
    fn enter(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let state = current_state(py)?;
        let st = state.get();
        let mut core = st.core.clone();
        core.trace = Some(self.emitter.clone());
        let sessions = st.sessions.iter().map(|s| s.clone_ref(py)).collect();
        set_state(py, crate::classes::ModeState { core, sessions })
    }

    /// End the trace without a program (the traced function raised): its tensors are leaked
    /// tracers afterwards. Idempotent; ``finish`` ends it too.
    fn end(&self) {
        self.emitter.end();
    }

    /// End the trace: the program returning ``outputs`` (traced tensors of this trace, or
    /// tensors with data, returned as constants). Its tensors are leaked tracers afterwards.
    fn finish(&self, py: Python<'_>, outputs: Vec<Bound<'_, PyTensor>>) -> PyResult<PyGraph> {
        let values: Vec<&Value> = outputs.iter().map(|t| &t.get().value).collect();
        let program = self.emitter.finish_values(&values).py(py)?;
        let inputs = self
            .inputs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        Ok(PyGraph {
            program: Arc::new(program),
            inputs,
        })
    }
}

/// A finished program of primitives (``tf.jit``'s traced and compiled graphs hold one).
#[pyclass(name = "_Graph", module = "tenferro._tenferro", frozen)]
pub struct PyGraph {
    program: Arc<Program>,
    /// Dtype and shape of each input.
    inputs: Vec<(DType, Vec<usize>)>,
}

#[pymethods]
impl PyGraph {
    /// Number of inputs.
    #[getter]
    fn n_inputs(&self) -> usize {
        self.program.n_inputs()
    }

    /// Number of outputs.
    #[getter]
    fn n_outputs(&self) -> usize {
        self.program.outputs().len()
    }

    /// Number of instructions (primitive applications).
    fn __len__(&self) -> usize {
        self.program.instrs().len()
    }

    /// Approximate retained bytes (instructions and constants).
    #[getter]
    fn nbytes(&self) -> usize {
        self.program.bytes()
    }

    /// One line per instruction: output slot, op and parameters, input slots.
    fn __str__(&self) -> String {
        let p = &self.program;
        let mut out = format!(
            "program: {} inputs (%0..%{}), {} constants, {} instructions\n",
            p.n_inputs(),
            p.n_inputs().saturating_sub(1),
            p.consts().len(),
            p.instrs().len()
        );
        for (i, c) in p.consts().iter().enumerate() {
            out.push_str(&format!(
                "  %{} = constant {}{:?}\n",
                p.n_inputs() + i,
                c.dtype(),
                c.shape()
            ));
        }
        let mut slot = p.n_inputs() + p.consts().len();
        for ins in p.instrs() {
            let n = ins.op.num_outputs();
            let outs: Vec<String> = (slot..slot + n).map(|s| format!("%{s}")).collect();
            let ins_s: Vec<String> = ins.inputs.iter().map(|s| format!("%{s}")).collect();
            out.push_str(&format!(
                "  {} = {:?}({})\n",
                outs.join(", "),
                ins.op,
                ins_s.join(", ")
            ));
            slot += n;
        }
        let outs: Vec<String> = p.outputs().iter().map(|s| format!("%{s}")).collect();
        out.push_str(&format!("  return {}\n", outs.join(", ")));
        out
    }

    /// The program after the optimisation passes of ``graph-mode.md`` (each switchable), and the
    /// report: one ``(pass, ran, instructions after, rewrites)`` per pass, in order.
    #[pyo3(signature = (dce=true, cse=true, layout=true, fold_transpose=true, fold_conj=true, final_dce=true))]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn optimize(
        &self,
        py: Python<'_>,
        dce: bool,
        cse: bool,
        layout: bool,
        fold_transpose: bool,
        fold_conj: bool,
        final_dce: bool,
    ) -> PyResult<(PyGraph, Vec<(&'static str, bool, usize, usize)>)> {
        let config = PassConfig {
            dce,
            cse,
            layout,
            fold_transpose,
            fold_conj,
            final_dce,
        };
        let (program, report) = optimize_for(&self.program, &self.inputs, &config).py(py)?;
        let rows = report
            .steps
            .iter()
            .map(|s| (s.pass.name(), s.ran, s.instrs, s.rewrites))
            .collect();
        Ok((
            PyGraph {
                program: Arc::new(program),
                inputs: self.inputs.clone(),
            },
            rows,
        ))
    }

    /// Run the program on ``inputs`` (tensors or array-likes, in input order) on the engine an
    /// eager op on them would use (innermost active session, the owning context's, or the
    /// default); one tensor per output, of that runtime. Inputs are only read.
    fn run(&self, py: Python<'_>, inputs: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<PyTensor>> {
        let refs: Vec<&Bound<'_, PyAny>> = inputs.iter().collect();
        let ops = operands(py, &refs)?;
        let state = current_state(py)?;
        self.run_operands(py, &ops, &state.get().core)
    }
}

impl PyGraph {
    /// Run the program on converted inputs under `mode` (the one run path: `_Graph.run` and
    /// `tf.jit`'s replay cache). Python scalars are weakly typed inputs at their default dtype.
    pub(crate) fn run_operands(
        &self,
        py: Python<'_>,
        ops: &[Operand<'_>],
        mode: &tenferro_eager::ModeState,
    ) -> PyResult<Vec<PyTensor>> {
        let data = ops
            .iter()
            .map(|o| match o {
                Operand::Tensor(t) => t.data("jit").cloned(),
                Operand::Array(t) => Ok(t.clone()),
                // A weakly typed input: the Python number at its default dtype (the trace
                // converts it to the dtype it meets, as eager code would).
                Operand::Scalar(s) => scalar_tensor("jit", *s, scalar_default_dtype(s.kind())),
            })
            .collect::<Result<Vec<Tensor>, Error>>()
            .py(py)?;
        let host = PyHost::new(py);
        let exec = host.finish(IMPLICIT.prepare("jit", ops, mode, &host))?;
        let outs = host.finish(exec.run_compiled("jit", &self.program, data, &host))?;
        let rt = exec.runtime().clone();
        Ok(outs
            .into_iter()
            .map(|t| EagerTensor::of_data(t, rt.clone(), None).into())
            .collect())
    }
}

/// Register the classes of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTrace>()?;
    m.add_class::<PyGraph>()?;
    Ok(())
}
