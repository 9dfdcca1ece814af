//! Graph mode's binding (`graph-mode.md`): `_Trace` (a program being recorded: symbolic input
//! tensors, the mode state that routes ops on them into the trace) and `_Graph` (a finished
//! program: printable, run from one call). `tenferro.jit` builds `tf.jit` on these.
//!
//! Running a `_Graph` on an engine uses its prepared plan for that engine
//! ([`tenferro_runtime::PreparedGraph`]: constant-only subgraphs folded), made on the first run
//! on the engine and cached in the engine's plan cache; [`run_graph_data`] is the one run path.

use crate::apply::operands;
use crate::classes::{PyRuntime, PyTensor};
use crate::convert::dtype_from_py;
use crate::defaults::runtime_arg;
use crate::errors::from_callback;
use crate::errors::PyResultExt;
use crate::host::PyHost;
use crate::mode::{current_state, set_state};
use pyo3::prelude::*;
use pyo3::types::PyModule;
use pyo3::types::PyTuple;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use tenferro_ad::{CompiledCall, CustomRule, Emitter, SuppliedDerivatives, Var};
use tenferro_eager::{scalar_tensor, EagerTensor, Exec, Operand, Runtime, Value, IMPLICIT};
use tenferro_runtime::{
    optimize_for, prepared_key, Engine, PassConfig, PreparedGraph, Program, PREPARED_GRAPH_TAG,
};
use tenferro_tensor::{dtype::scalar_default_dtype, DType, Error, Tensor};

/// Ids of graphs (the prepared-plan key): process-unique, never reused, so a cached plan can
/// only ever serve the program it was prepared from.
static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

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

    /// ``tensor``'s value as a constant of the program, returned as a traced tensor: ops on it
    /// are recorded (constant-only subgraphs, folded when the program is prepared for an
    /// engine) instead of run while tracing.
    fn constant(&self, py: Python<'_>, tensor: &Bound<'_, PyTensor>) -> PyResult<PyTensor> {
        let data = tensor.get().data("jit").cloned().py(py)?;
        let v = self.emitter.constant_value(data);
        Ok(EagerTensor::new(v, self.runtime.clone(), None).into())
    }

    /// Route ops on this trace's tensors into it in the calling context; returns the
    /// ``ContextVar`` token that ends the routing (``_state_var().reset(token)``).
    fn enter(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let state = current_state(py)?;
        let st = state.get();
        let mut core = st.core.clone();
        core.trace = Some(self.emitter.clone());
        // A trace starts clean of the caller's functional-transform capture: the program is
        // the same whoever calls it (a caller's transform differentiates the compiled call).
        core.capture_trace = false;
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
        Ok(PyGraph::new(program, inputs))
    }
}

/// A finished program of primitives (``tf.jit``'s traced and compiled graphs hold one).
#[pyclass(name = "_Graph", module = "tenferro._tenferro", frozen)]
pub struct PyGraph {
    program: Arc<Program>,
    /// Dtype and shape of each input.
    inputs: Vec<(DType, Vec<usize>)>,
    /// Process-unique id (the prepared-plan key).
    id: u64,
    /// The program as a call on AD values (made on the first call on tracked inputs).
    call: OnceLock<Arc<CompiledCall>>,
    /// The supplier of its derivative programs, when the traced function used custom rules.
    supplied: OnceLock<Arc<PySupplied>>,
}

/// Derivative programs supplied by Python (`_jit` traces the function again under `tf.func`,
/// so `tf.custom_vjp` / `tf.custom_jvp` rules inside it are emitted): an object with methods
/// ``joint_vjp(mask, output_metas) -> _Graph`` and ``jvp_program(mask) -> _Graph``, and the
/// bridge methods ``vjp(inputs, cts, record)`` / ``jvp(inputs, tangents, record)`` of the
/// recorded rule (higher order: the function itself under `tf.func`).
#[derive(Debug)]
pub(crate) struct PySupplied {
    obj: Py<PyAny>,
    id: u64,
    /// The runtime the supplier's recorded rules hand tensors over in.
    runtime: Arc<Runtime>,
}

impl PySupplied {
    /// The program of the `_Graph` that `method(*args)` of the supplier returns.
    fn program(
        &self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
    ) -> tenferro_tensor::Result<Program> {
        Python::attach(|py| {
            let r = args(py)
                .and_then(|a| self.obj.bind(py).call_method1(method, a))
                .map_err(|e| from_callback("CompiledCall", e))?;
            let g = r
                .cast::<PyGraph>()
                .map_err(|e| from_callback("CompiledCall", e.into()))?;
            Ok((*g.get().program).clone())
        })
    }
}

impl SuppliedDerivatives for PySupplied {
    fn id(&self) -> u64 {
        self.id
    }

    fn joint_vjp(
        &self,
        mask: &[bool],
        outputs: &[(DType, Vec<usize>)],
    ) -> tenferro_tensor::Result<Program> {
        let metas: Vec<(&'static str, Vec<usize>)> =
            outputs.iter().map(|(d, s)| (d.name(), s.clone())).collect();
        self.program("joint_vjp", |py| (mask.to_vec(), metas).into_pyobject(py))
    }

    fn jvp(&self, mask: &[bool]) -> tenferro_tensor::Result<Program> {
        self.program("jvp_program", |py| (mask.to_vec(),).into_pyobject(py))
    }

    fn recorded_rule(&self, n_inputs: usize, n_outputs: usize) -> Arc<dyn CustomRule> {
        let bridge = Python::attach(|py| self.obj.clone_ref(py));
        Arc::new(crate::custom::PyRule::bridged(
            "CompiledCall",
            bridge,
            self.runtime.clone(),
            n_inputs,
            n_outputs,
        ))
    }
}

impl PyGraph {
    fn new(program: Program, inputs: Vec<(DType, Vec<usize>)>) -> PyGraph {
        PyGraph {
            program: Arc::new(program),
            inputs,
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            call: OnceLock::new(),
            supplied: OnceLock::new(),
        }
    }

    /// The program as a call on AD values (its fingerprint computed once).
    pub(crate) fn call(&self, py: Python<'_>) -> PyResult<Arc<CompiledCall>> {
        if let Some(c) = self.call.get() {
            return Ok(c.clone());
        }
        let c = match self.supplied.get() {
            Some(s) => CompiledCall::with_supplied(
                "CompiledCall",
                self.program.clone(),
                self.inputs.clone(),
                s.clone(),
            ),
            None => CompiledCall::new("CompiledCall", self.program.clone(), self.inputs.clone()),
        }
        .py(py)?;
        Ok(self.call.get_or_init(|| c).clone())
    }

    /// The plan of this graph on `engine`: from the engine's plan cache, prepared (folded) on
    /// the first run on that engine kind and thread setting, with the GIL released.
    ///
    /// # Errors
    /// As [`PreparedGraph::prepare`].
    pub(crate) fn prepared(
        &self,
        py: Python<'_>,
        engine: &dyn Engine,
    ) -> Result<Arc<PreparedGraph>, Error> {
        engine.plan_cache().try_get_or_build(
            prepared_key(self.id, engine),
            PreparedGraph::bytes,
            || py.detach(|| PreparedGraph::prepare(&self.program, &self.inputs, engine)),
        )
    }

    /// `Shape`/`DType` unless `data` has the inputs' count, dtypes and shapes (the passes
    /// specialised the program to them).
    fn check_inputs(&self, data: &[Tensor]) -> Result<(), Error> {
        if data.len() != self.inputs.len() {
            return Err(Error::value(
                "jit",
                format!(
                    "the compiled graph takes {} inputs, got {}",
                    self.inputs.len(),
                    data.len()
                ),
            ));
        }
        for (i, (t, (dtype, shape))) in data.iter().zip(&self.inputs).enumerate() {
            if t.dtype() != *dtype {
                return Err(Error::dtype(
                    "jit",
                    format!(
                        "input {i} has dtype {}, the graph was compiled for {dtype}",
                        t.dtype()
                    ),
                ));
            }
            if t.shape() != shape.as_slice() {
                return Err(Error::shape(
                    "jit",
                    format!(
                        "input {i} has shape {:?}, the graph was compiled for {shape:?}",
                        t.shape()
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl Drop for PyGraph {
    /// Its prepared plans can never be asked for again: free them (and their folded
    /// constants) now instead of when the engines' caches evict them.
    fn drop(&mut self) {
        for e in crate::engine::live_engines() {
            e.plan_cache()
                .remove_prefix(&[PREPARED_GRAPH_TAG, self.id as i64]);
        }
    }
}

/// The data of graph inputs: tensors with data, adopted arrays, and Python scalars (weakly
/// typed inputs) at their default dtype (the trace converts them to the dtype they meet, as
/// eager code would).
fn input_data(py: Python<'_>, ops: &[Operand<'_>]) -> PyResult<Vec<Tensor>> {
    ops.iter()
        .map(|o| match o {
            Operand::Tensor(t) => t.data("jit").cloned(),
            Operand::Array(t) => Ok(t.clone()),
            Operand::Scalar(s) => scalar_tensor("jit", *s, scalar_default_dtype(s.kind())),
        })
        .collect::<Result<Vec<Tensor>, Error>>()
        .py(py)
}

/// Graph inputs as AD values: tensors with their nodes, arrays and Python scalars as constants.
fn input_vars(py: Python<'_>, ops: &[Operand<'_>]) -> PyResult<Vec<Var>> {
    ops.iter()
        .map(|o| match o {
            Operand::Tensor(t) => Ok(t.var()),
            Operand::Array(t) => Ok(Var::constant(t.clone())),
            Operand::Scalar(s) => {
                scalar_tensor("jit", *s, scalar_default_dtype(s.kind())).map(Var::constant)
            }
        })
        .collect::<Result<Vec<Var>, Error>>()
        .py(py)
}

/// Run `graph` on `ops` on `exec`'s engine (resolved and borrowed by the caller), one tensor of
/// `exec`'s runtime per output. On data the prepared plan runs ([`run_graph_data`]); when
/// `mode` records and an input has a node (a tensor that requires grad, or a functional
/// transform's capture), the call records one `CompiledCall` node whose derivatives are derived
/// from the program (`graph-mode.md`, grad of jit; [`Exec::call_compiled`]).
///
/// # Errors
/// As [`run_graph_data`]; rule errors of the derivation.
pub(crate) fn run_graph_operands(
    py: Python<'_>,
    graph: &PyGraph,
    exec: &Exec,
    ops: &[Operand<'_>],
    mode: &tenferro_eager::ModeState,
    host: &PyHost<'_>,
) -> PyResult<Vec<EagerTensor>> {
    let rt = exec.runtime().clone();
    if mode.would_record(ops) {
        let call = graph.call(py)?;
        let vars = input_vars(py, ops)?;
        let refs: Vec<&Var> = vars.iter().collect();
        let outs = host.finish(exec.call_compiled(&call, &refs, mode, host))?;
        return Ok(outs
            .into_iter()
            .map(|v| EagerTensor::from_var(v, rt.clone()))
            .collect());
    }
    let data = input_data(py, ops)?;
    let outs = run_graph_data(py, graph, exec, data, host)?;
    Ok(outs
        .into_iter()
        .map(|t| EagerTensor::of_data(t, rt.clone(), None))
        .collect())
}

/// Run `graph` on `data` (already converted, in input order) on `exec`'s engine, which the
/// caller has resolved and borrowed: the graph's prepared plan for that engine (prepared on
/// first use), run with the GIL released unless it is tiny ([`PyHost::run_program`]). Inputs,
/// constants and exported buffers are only read. One tensor per output.
///
/// # Errors
/// `Shape`/`DType` for inputs unlike the traced ones; the steps' value errors with the eager
/// class and message; `EngineBroken`; the signal handler's exception after Ctrl-C.
fn run_graph_data(
    py: Python<'_>,
    graph: &PyGraph,
    exec: &Exec,
    data: Vec<Tensor>,
    host: &PyHost<'_>,
) -> PyResult<Vec<Tensor>> {
    graph.check_inputs(&data).py(py)?;
    let plan = graph.prepared(py, exec.engine().as_ref()).py(py)?;
    host.finish(
        host.run_program("jit", plan.work(), plan.factorises(), |h| {
            exec.run_compiled("jit", &plan, data, h)
        }),
    )
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
        Ok((PyGraph::new(program, self.inputs.clone()), rows))
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

    /// Supply this graph's first-order derivative programs (``supplier.joint_vjp(mask,
    /// output_metas)`` and ``supplier.jvp_program(mask)``, each returning a ``_Graph``) instead of
    /// deriving them from its instructions: the traced function used custom derivative rules.
    /// Set once, before the graph is first called on tracked inputs.
    #[pyo3(signature = (supplier, runtime=None))]
    fn _supply_derivatives(
        &self,
        py: Python<'_>,
        supplier: Py<PyAny>,
        runtime: Option<&Bound<'_, PyRuntime>>,
    ) -> PyResult<()> {
        static NEXT_SUPPLIER: AtomicU64 = AtomicU64::new(1);
        let s = Arc::new(PySupplied {
            obj: supplier,
            id: NEXT_SUPPLIER.fetch_add(1, Ordering::Relaxed),
            runtime: runtime_arg(py, runtime)?,
        });
        if self.call.get().is_some() || self.supplied.set(s).is_err() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "_supply_derivatives: the graph's derivatives are already fixed",
            ));
        }
        Ok(())
    }

    /// ``(instructions, folded)`` of this graph's prepared plan on ``engine`` (prepared now if
    /// it is not cached): the instructions a run executes, and how many constant folding
    /// removed.
    fn _prepared_len(
        &self,
        py: Python<'_>,
        engine: &Bound<'_, crate::classes::PyCpuEngine>,
    ) -> PyResult<(usize, usize)> {
        let e = engine.get().engine();
        let plan = self.prepared(py, e.as_ref()).py(py)?;
        Ok((plan.program().instrs().len(), plan.folded()))
    }
}

impl PyGraph {
    /// Run the program on converted inputs under `mode` on the engine an eager op would use
    /// (`_Graph.run` and `tf.jit`'s replay cache; [`run_graph_data`] is the one run path).
    /// Python scalars are weakly typed inputs at their default dtype.
    pub(crate) fn run_operands(
        &self,
        py: Python<'_>,
        ops: &[Operand<'_>],
        mode: &tenferro_eager::ModeState,
    ) -> PyResult<Vec<PyTensor>> {
        let host = PyHost::new(py);
        let exec = host.finish(IMPLICIT.prepare("jit", ops, mode, &host))?;
        let outs = run_graph_operands(py, self, &exec, ops, mode, &host)?;
        Ok(outs.into_iter().map(Into::into).collect())
    }
}

/// Register the classes of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTrace>()?;
    m.add_class::<PyGraph>()?;
    Ok(())
}
