//! Execution of `tf.einsum`: the contraction is planned and lowered to primitives once per
//! `(subscripts, shapes, dtypes, optimize)` by `tenferro.einsum._lower` (Python), cached as an
//! [`Program`] in the executing engine's plan cache, and replayed by the eager core
//! (`Session::run_program`) in one call.
//!
//! Replaying a cached program costs one Python → Rust crossing instead of one per primitive;
//! each step records like any primitive call (the active-edge rule), steps with large operands
//! run with the GIL released, intermediates are dropped after their last use, and Ctrl-C is
//! checked between steps.

use crate::args::dot_config;
use crate::classes::{PySession, PyTensor};
use crate::convert::dtype_from_py;
use crate::errors::PyResultExt;
use crate::host::PyHost;
use crate::imports::{hook, EINSUM_LOWER, EINSUM_SPLIT_ARGS};
use crate::mode::current_state;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PySequence, PyString, PyTuple};
use tenferro_eager::{scalar_tensor, Operand, Value};
use tenferro_ops::{BinaryOp, CompareDir, Op, ReduceOp};
use tenferro_runtime::{Instr, Program};
use tenferro_tensor::dtype::DType;
use tenferro_tensor::{Scalar, Tensor};

/// Plan-cache key tag of einsum programs (GEMM plans use small non-negative leading codes).
const KEY_TAG: i64 = -0x4549_4E53;

fn usizes(v: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    v.extract::<Vec<usize>>()
}

/// Build the program of one call through the Python planner (`tenferro.einsum._lower`).
fn lower(
    py: Python<'_>,
    subscripts: &Bound<'_, PyAny>,
    tensors: &[Meta<'_>],
    optimize: &Bound<'_, PyAny>,
) -> PyResult<Program> {
    let shapes = PyList::empty(py);
    let dtypes = PyList::empty(py);
    let c_order = PyList::empty(py);
    for t in tensors {
        shapes.append(PyTuple::new(py, t.1)?)?;
        dtypes.append(crate::convert::np_dtype(py, t.0)?)?;
        c_order.append(t.2)?;
    }
    let res = hook(py, "einsum", &EINSUM_LOWER, "_lower")?
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
            consts.push(scalar_tensor("einsum", Scalar::Float(0.0), DType::F64).py(py)?);
        }
        raw.push((op, ins, zero));
    }
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
    Program::new(n, consts, instrs, vec![output]).py(py)
}

/// What the planner reads of an operand: dtype, shape, and whether it is stored in C order
/// ([`row_major_like`]; a traced operand has no layout and counts as not).
type Meta<'a> = (DType, &'a [usize], bool);

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
    tensors: &[Meta<'_>],
    optimize: &Bound<'_, PyAny>,
) -> Option<Vec<i64>> {
    let mut key = vec![KEY_TAG, tensors.len() as i64];
    for &(dtype, shape, c_order) in tensors {
        key.push(dtype as i64);
        key.push(i64::from(c_order));
        key.push(shape.len() as i64);
        key.extend(shape.iter().map(|&d| d as i64));
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

/// `tf.einsum` / `s.einsum` on `session`: `operands` is the positional tuple (subscripts first,
/// or the interleaved form).
#[pyfunction]
pub fn _einsum(
    py: Python<'_>,
    session: &PySession,
    operands: &Bound<'_, PyTuple>,
    optimize: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let split = hook(py, "einsum", &EINSUM_SPLIT_ARGS, "_split_args")?.call1((operands,))?;
    let (subscripts, raw): (Bound<'_, PyString>, Bound<'_, PyList>) = split.extract()?;
    let items: Vec<Bound<'_, PyAny>> = raw.iter().collect();
    let refs: Vec<&Bound<'_, PyAny>> = items.iter().collect();
    // Operands are tensors or adopted array-likes (einsum takes no weak scalars: a Python
    // number is adopted as a rank-0 array).
    let ops: Vec<Operand<'_>> = crate::apply::operands(py, &refs)?
        .into_iter()
        .map(|o| match o {
            Operand::Scalar(s) => scalar_tensor(
                "einsum",
                s,
                tenferro_tensor::dtype::scalar_default_dtype(s.kind()),
            )
            .map(Operand::Array),
            o => Ok(o),
        })
        .collect::<tenferro_tensor::Result<_>>()
        .py(py)?;
    let tensors: Vec<Meta<'_>> = ops
        .iter()
        .filter_map(|o| match o {
            Operand::Tensor(t) => Some(match &t.value {
                Value::Tensor(d) => (d.dtype(), d.shape(), row_major_like(d)),
                Value::Symbol(s) => (s.dtype, s.shape.as_slice(), false),
            }),
            Operand::Array(t) => Some((t.dtype(), t.shape(), row_major_like(t))),
            Operand::Scalar(_) => None,
        })
        .collect();
    let state = current_state(py)?;
    let mode = &state.get().core;
    let host = PyHost::new(py);
    let exec = host.finish(session.core.prepare("einsum", &ops, mode, &host))?;
    let subs = subscripts.to_str()?;
    let build = || lower(py, subscripts.as_any(), &tensors, optimize);
    let program = match plan_key(subs, &tensors, optimize) {
        Some(key) => exec
            .engine()
            .plan_cache()
            .try_get_or_build(key, Program::bytes, build)?,
        None => std::sync::Arc::new(build()?),
    };
    let out = session
        .core
        .run_program("einsum", &exec, &program, &ops, mode, &host);
    Ok(host.finish(out)?.into())
}
