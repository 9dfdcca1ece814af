//! Execution of `tf.einsum`: the contraction is planned and lowered to primitives once per
//! `(subscripts, shapes, dtypes, optimize)` by `tenferro.einsum._lower` (Python), cached as an
//! [`EinsumProgram`] in the executing engine's plan cache, and replayed here in one call.
//!
//! Replaying a cached program costs one Python → Rust crossing instead of one per primitive;
//! each step records like any primitive call (the active-edge rule), steps with large operands
//! run with the GIL released, intermediates are dropped after their last use, and Ctrl-C is
//! checked between steps.

use crate::convert::dtype_from_py;
use crate::errors::{to_pyerr, PyResultExt};
use crate::session::{
    current_state, dot_config, records, tensor_from_object, PyRuntime, PySession,
};
use crate::tensor::PyTensor;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyList, PySequence, PyString, PyTuple};
use tenferro_ad::{record, Var};
use tenferro_cpu::CpuEngine;
use tenferro_ops::{BinaryOp, CompareDir, Op, ReduceOp};
use tenferro_runtime::apply;
use tenferro_tensor::dtype::DType;
use tenferro_tensor::{Scalar, Tensor};

/// Elements or multiply-adds above which a step runs with the GIL released (as `dispatch`).
const DETACH_MIN_WORK: usize = 1 << 14;

/// Plan-cache key tag of einsum programs (GEMM plans use small non-negative leading codes).
const KEY_TAG: i64 = -0x4549_4E53;

/// One primitive step: `slots.push(op(slots[inputs]...))`.
struct Instr {
    op: Op,
    inputs: Vec<usize>,
}

/// A lowered einsum, as cached in the engine's plan cache.
pub(crate) struct EinsumProgram {
    n_inputs: usize,
    /// Constants appended after the inputs (the zero of `compare_ne_zero`).
    consts: Vec<Tensor>,
    instrs: Vec<Instr>,
    output: usize,
    /// Per slot, the last step reading it (`usize::MAX`: none, or the output).
    last_use: Vec<usize>,
}

impl EinsumProgram {
    fn bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self
                .instrs
                .iter()
                .map(|i| 96 + 8 * i.inputs.len())
                .sum::<usize>()
            + 8 * self.last_use.len()
    }

    /// Run on `engine`; `inputs` are the operands as AD values. `record_mode` is
    /// `(grad_enabled, capture_trace)` of the calling context.
    fn run(
        &self,
        py: Python<'_>,
        engine: &CpuEngine,
        inputs: Vec<Var>,
        record_mode: (bool, bool),
    ) -> PyResult<Var> {
        let (grad_enabled, capture) = record_mode;
        let mut slots: Vec<Option<Var>> = Vec::with_capacity(self.last_use.len());
        slots.extend(inputs.into_iter().map(Some));
        slots.extend(self.consts.iter().map(|t| Some(Var::constant(t.clone()))));
        for (k, ins) in self.instrs.iter().enumerate() {
            if k > 0 {
                py.check_signals()?;
            }
            let args: Vec<Var> = ins
                .inputs
                .iter()
                .map(|&i| slots[i].clone())
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    pyo3::exceptions::PyRuntimeError::new_err("einsum: program reads a freed slot")
                })?;
            let vals: Vec<&Tensor> = args.iter().map(|v| &v.value).collect();
            let w = work(&ins.op, &vals);
            let out = if w >= DETACH_MIN_WORK {
                crate::session::run_detached(py, w, || apply(engine, &ins.op, &vals))?
            } else {
                apply(engine, &ins.op, &vals).py(py)?
            };
            let v = if records(grad_enabled, capture, args.iter().any(|a| a.node.is_some())) {
                record(&ins.op, args, out, capture)
            } else {
                Var::constant(out)
            };
            slots.push(Some(v));
            for &i in &ins.inputs {
                if self.last_use[i] == k {
                    slots[i] = None;
                }
            }
        }
        slots[self.output].take().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("einsum: program output missing")
        })
    }
}

/// Elements touched (or multiply-adds, for `dot_general`) by one step.
fn work(op: &Op, vals: &[&Tensor]) -> usize {
    let largest = vals.iter().map(|t| t.numel()).max().unwrap_or(0);
    match (op, vals) {
        (Op::DotGeneral(c), [l, r]) => {
            let shared: usize = c
                .rhs_contracting_dims
                .iter()
                .chain(&c.rhs_batch_dims)
                .map(|&d| r.shape().get(d).copied().unwrap_or(1))
                .product();
            l.numel()
                .saturating_mul(r.numel() / shared.max(1))
                .max(largest)
        }
        _ => largest,
    }
}

fn einsum_fn<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    crate::imports::hook(py, "einsum", cell, name)
}

fn usizes(v: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    v.extract::<Vec<usize>>()
}

/// Build the program of one call through the Python planner (`tenferro.einsum._lower`).
fn lower(
    py: Python<'_>,
    subscripts: &Bound<'_, PyAny>,
    tensors: &[&Tensor],
    optimize: &Bound<'_, PyAny>,
) -> PyResult<EinsumProgram> {
    let shapes = PyList::empty(py);
    let dtypes = PyList::empty(py);
    let c_order = PyList::empty(py);
    for t in tensors {
        shapes.append(PyTuple::new(py, t.shape())?)?;
        dtypes.append(crate::convert::np_dtype(py, t.dtype())?)?;
        c_order.append(row_major_like(t))?;
    }
    let res = einsum_fn(py, &crate::imports::EINSUM_LOWER, "_lower")?
        .call1((subscripts, shapes, dtypes, optimize, c_order))?;
    let (prog, output): (Bound<'_, PyList>, usize) = res.extract()?;
    let n = tensors.len();
    let mut consts: Vec<Tensor> = Vec::new();
    let mut raw: Vec<(Op, Vec<usize>, bool)> = Vec::with_capacity(prog.len());
    for item in prog.iter() {
        let (name, args, ins): (String, Bound<'_, PyTuple>, Vec<usize>) = item.extract()?;
        let arg = |k: usize| args.get_item(k);
        let op = match name.as_str() {
            "reduce_sum" => Op::Reduce {
                op: ReduceOp::Sum,
                axes: usizes(&arg(0)?)?,
            },
            "transpose" => Op::Transpose(usizes(&arg(0)?)?),
            "extract_diag" => Op::ExtractDiag {
                a: arg(0)?.extract()?,
                b: arg(1)?.extract()?,
            },
            "embed_diag" => Op::EmbedDiag {
                a: arg(0)?.extract()?,
                b: arg(1)?.extract()?,
            },
            "broadcast_in_dim" => Op::BroadcastInDim {
                shape: usizes(&arg(0)?)?,
                dims: usizes(&arg(1)?)?,
            },
            "dot_general" => Op::DotGeneral(dot_config(py, "einsum", &arg(0)?)?),
            "convert" => Op::Convert(dtype_from_py(py, "einsum", &arg(0)?)?),
            "mul" => Op::Binary(BinaryOp::Mul),
            "compare_ne_zero" => Op::Compare(CompareDir::Ne),
            other => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "einsum: the planner emitted an unknown step {other:?}"
                )))
            }
        };
        let zero = name == "compare_ne_zero";
        if zero && consts.is_empty() {
            consts.push(crate::convert::scalar_tensor(
                "einsum",
                Scalar::Float(0.0),
                DType::F64,
            )?);
        }
        raw.push((op, ins, zero));
    }
    let base = n + consts.len();
    let remap = |i: usize| if i < n { i } else { i + consts.len() };
    let mut instrs = Vec::with_capacity(raw.len());
    for (op, ins, zero) in raw {
        let mut inputs: Vec<usize> = ins.into_iter().map(remap).collect();
        if zero {
            inputs.push(n);
        }
        instrs.push(Instr { op, inputs });
    }
    let output = remap(output);
    let total = base + instrs.len();
    if output >= total
        || instrs
            .iter()
            .enumerate()
            .any(|(k, i)| i.inputs.iter().any(|&s| s >= base + k))
    {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "einsum: the planner emitted an out-of-order program",
        ));
    }
    let mut last_use = vec![usize::MAX; total];
    for (k, ins) in instrs.iter().enumerate() {
        for &i in &ins.inputs {
            last_use[i] = k;
        }
    }
    last_use[output] = usize::MAX;
    for slot in &mut last_use[n..base] {
        *slot = usize::MAX;
    }
    Ok(EinsumProgram {
        n_inputs: n,
        consts,
        instrs,
        output,
        last_use,
    })
}

/// Whether `t`'s axes (those longer than 1, at least two) have strictly decreasing strides: NumPy's
/// C order read in place. The planner then keeps products in that memory order.
fn row_major_like(t: &Tensor) -> bool {
    let s: Vec<usize> = t
        .shape()
        .iter()
        .zip(t.strides())
        .filter(|(&n, _)| n > 1)
        .map(|(_, &st)| st.unsigned_abs())
        .collect();
    s.len() >= 2 && s.windows(2).all(|w| w[0] > w[1])
}

/// The plan-cache key of a call, or `None` when `optimize` has no integer encoding (the call
/// then plans without the cache, and the planner reports what is wrong with it).
fn plan_key(
    subscripts: &str,
    tensors: &[&Tensor],
    optimize: &Bound<'_, PyAny>,
) -> Option<Vec<i64>> {
    let mut key = vec![KEY_TAG, tensors.len() as i64];
    for t in tensors {
        key.push(t.dtype() as i64);
        key.push(i64::from(row_major_like(t)));
        key.push(t.ndim() as i64);
        key.extend(t.shape().iter().map(|&d| d as i64));
    }
    if optimize.is_none() || optimize.is_instance_of::<PyBool>() {
        key.push(i64::from(optimize.is_truthy().ok()?));
    } else if let Ok(s) = optimize.cast::<PyString>() {
        match s.to_str().ok()? {
            "greedy" => key.push(1),
            "optimal" => key.push(2),
            _ => return None,
        }
    } else {
        let seq = optimize.cast::<PySequence>().ok()?;
        key.push(3);
        for entry in seq.try_iter().ok()? {
            let entry = entry.ok()?;
            if let Ok(s) = entry.cast::<PyString>() {
                if s.to_str().ok()? != "einsum_path" {
                    return None;
                }
                key.push(-1);
                continue;
            }
            // Entries must be sequences of integers; bools and anything else go through the
            // planner uncached, which names what is wrong with them.
            let entry = entry.cast::<PySequence>().ok()?;
            let mut idx: Vec<i64> = Vec::new();
            for k in entry.try_iter().ok()? {
                let k = k.ok()?;
                if k.is_instance_of::<PyBool>() {
                    return None;
                }
                idx.push(k.extract().ok()?);
            }
            key.push(idx.len() as i64);
            key.extend(idx);
        }
    }
    key.push(-2);
    key.extend(subscripts.chars().map(|c| c as i64));
    Some(key)
}

/// An operand: a tensor, or an array-like adopted as a constant.
enum Arg<'py> {
    T(Bound<'py, PyTensor>),
    Adopted(Tensor),
}

impl Arg<'_> {
    fn tensor(&self) -> &Tensor {
        match self {
            Arg::T(t) => &t.get().tensor,
            Arg::Adopted(t) => t,
        }
    }
}

/// `tf.einsum` / `s.einsum` on `session`: `operands` is the positional tuple (subscripts first,
/// or the interleaved form).
#[pyfunction]
pub fn _einsum(
    py: Python<'_>,
    session: &PySession,
    operands: &Bound<'_, PyTuple>,
    optimize: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let split =
        einsum_fn(py, &crate::imports::EINSUM_SPLIT_ARGS, "_split_args")?.call1((operands,))?;
    let (subscripts, raw): (Bound<'_, PyString>, Bound<'_, PyList>) = split.extract()?;
    let mut args: Vec<Arg<'_>> = Vec::with_capacity(raw.len());
    for a in raw.iter() {
        args.push(match a.cast::<PyTensor>() {
            Ok(t) => Arg::T(t.clone()),
            Err(_) => Arg::Adopted(tensor_from_object(py, &a, false)?),
        });
    }
    let first_rt: Option<&Py<PyRuntime>> = args.iter().find_map(|a| match a {
        Arg::T(t) => Some(&t.get().runtime),
        Arg::Adopted(_) => None,
    });
    let state = current_state(py)?;
    let exec = session.resolve(py, "einsum", first_rt, &state)?;
    for (i, a) in args.iter().enumerate() {
        if let Arg::T(t) = a {
            let rt = &t.get().runtime;
            if !rt.is(&exec.runtime) {
                return Err(to_pyerr(
                    py,
                    tenferro_tensor::Error::context_mismatch(
                        "einsum",
                        format!(
                            "operand {i} belongs to runtime {} but the op runs on runtime {}",
                            rt.get().inner.id(),
                            exec.runtime.get().inner.id()
                        ),
                    ),
                ));
            }
        }
    }
    let tensors: Vec<&Tensor> = args.iter().map(Arg::tensor).collect();
    let subs = subscripts.to_str()?;
    let build = || lower(py, subscripts.as_any(), &tensors, optimize);
    let program = match plan_key(subs, &tensors, optimize) {
        Some(key) => exec
            .engine
            .plan_cache()
            .try_get_or_build(key, EinsumProgram::bytes, build)?,
        None => std::sync::Arc::new(build()?),
    };
    debug_assert_eq!(program.n_inputs, tensors.len());
    let st = state.get();
    let record_mode = (st.grad_enabled, st.capture_trace);
    let inputs: Vec<Var> = args
        .iter()
        .map(|a| match a {
            Arg::T(pt) => crate::session::input_var(pt.get(), st.capture_trace),
            Arg::Adopted(t) => Var::constant(t.clone()),
        })
        .collect();
    let out = program.run(py, &exec.engine, inputs, record_mode)?;
    Ok(PyTensor::with_node(
        out.value,
        exec.runtime.clone_ref(py),
        out.node,
    ))
}
