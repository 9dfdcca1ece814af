//! The Python face of automatic differentiation: tracked leaves, `backward`, the functional
//! transforms and the grad modes. Thin wrappers over `tenferro_ad`; the public methods are
//! attached in `python/tenferro/autodiff.py`, which documents them.

use crate::convert::{repr, scalar_tensor};
use crate::errors::{to_pyerr, PyResultExt};
use crate::session::{
    current_state, default_runtime, tensor_from_object, ModeState, PyRuntime, PySession,
};
use crate::tensor::PyTensor;
use pyo3::prelude::*;
use std::sync::Arc;
use tenferro_ad::{jvp_graph, reachable_leaves, vjp_graph, Ctx, Node, Var};
use tenferro_ops::{BinaryOp, Op};
use tenferro_runtime::apply;
use tenferro_tensor::{Error, Scalar};

/// A new tracked leaf of `runtime` holding a copy of `data` (float or complex only).
#[pyfunction]
pub fn _variable(
    py: Python<'_>,
    runtime: Option<Py<PyRuntime>>,
    data: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let rt = match runtime {
        Some(r) => r,
        None => default_runtime(py)?,
    };
    let t = tensor_from_object(py, data, true)?;
    if !t.dtype().is_inexact() {
        return Err(to_pyerr(
            py,
            Error::dtype(
                "variable",
                format!(
                    "only float and complex tensors can be tracked, got {}",
                    t.dtype()
                ),
            ),
        ));
    }
    let leaf = Node::leaf(&t);
    rt.get().register_leaf(&leaf);
    Ok(PyTensor::with_node(t, rt, Some(leaf)))
}

/// The node id of a tensor (0: untracked, never recorded).
#[pyfunction]
pub fn _node_id(t: &Bound<'_, PyTensor>) -> u64 {
    t.get().node().map_or(0, |n| n.id)
}

/// Whether the tensor is a tracked leaf.
#[pyfunction]
pub fn _is_leaf(t: &Bound<'_, PyTensor>) -> bool {
    t.get().node().is_some_and(|n| n.slot().is_some())
}

/// The accumulated gradient of a leaf (`None` for non-leaves and before any backward).
#[pyfunction]
pub fn _grad_of(py: Python<'_>, t: &Bound<'_, PyTensor>) -> Option<PyTensor> {
    let this = t.get();
    let slot = this.node()?.slot()?;
    let g = slot.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
    Some(PyTensor::with_node(
        g.value,
        this.runtime.clone_ref(py),
        g.node,
    ))
}

/// Reset a leaf's gradient slot.
#[pyfunction]
pub fn _clear_grad(t: &Bound<'_, PyTensor>) {
    if let Some(slot) = t.get().node().and_then(|n| n.slot()) {
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Store `g` (same runtime, shape and dtype) as a leaf's gradient; the next `backward` adds to it.
#[pyfunction]
pub fn _set_grad(py: Python<'_>, t: &Bound<'_, PyTensor>, g: &Bound<'_, PyTensor>) -> PyResult<()> {
    let this = t.get();
    let Some(slot) = this.node().and_then(|n| n.slot()) else {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "grad: only a tracked leaf (rt.variable) has a gradient slot to assign",
        ));
    };
    check_like(py, "grad", "assigned gradient", g.get(), this)?;
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(g.get().var());
    Ok(())
}

/// Reset every live gradient slot of a runtime (slots stay registered).
#[pyfunction]
pub fn _clear_grads(rt: &Bound<'_, PyRuntime>) {
    rt.get().for_each_leaf(|n| {
        if let Some(slot) = n.slot() {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
        }
    });
}

/// An untracked tensor sharing `t`'s storage (of `runtime`, default: `t`'s).
#[pyfunction]
#[pyo3(signature = (t, runtime=None))]
pub fn _detach(
    py: Python<'_>,
    t: &Bound<'_, PyTensor>,
    runtime: Option<Py<PyRuntime>>,
) -> PyTensor {
    let this = t.get();
    let node = crate::session::captured_node(py, &this.tensor)
        .ok()
        .flatten();
    PyTensor::with_node(
        this.tensor.clone(),
        runtime.unwrap_or_else(|| this.runtime.clone_ref(py)),
        node,
    )
}

fn ones_like(op: &str, t: &PyTensor) -> PyResult<Var> {
    let one = scalar_tensor(op, Scalar::Float(1.0), t.tensor.dtype())?;
    let b = one
        .broadcast_to_view(t.tensor.shape())
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    Ok(Var::constant(b))
}

/// Check a cotangent/tangent against a reference tensor: runtime, shape, dtype.
fn check_like(py: Python<'_>, op: &str, what: &str, v: &PyTensor, like: &PyTensor) -> PyResult<()> {
    if !v.runtime.is(&like.runtime) {
        return Err(to_pyerr(
            py,
            Error::context_mismatch(op, format!("the {what} belongs to another runtime")),
        ));
    }
    if v.tensor.shape() != like.tensor.shape() {
        return Err(to_pyerr(
            py,
            Error::shape(
                op,
                format!(
                    "{what} shape {:?} differs from {:?}",
                    v.tensor.shape(),
                    like.tensor.shape()
                ),
            ),
        ));
    }
    if v.tensor.dtype() != like.tensor.dtype() {
        return Err(to_pyerr(
            py,
            Error::dtype(
                op,
                format!(
                    "{what} dtype {} differs from {}",
                    v.tensor.dtype(),
                    like.tensor.dtype()
                ),
            ),
        ));
    }
    Ok(())
}

/// Run `f` with the engine that executes ops of `t`'s runtime (innermost session, owning
/// context, default), borrowed for the call.
fn with_engine<R>(
    py: Python<'_>,
    name: &str,
    t: &PyTensor,
    f: impl FnOnce(&Ctx<'_>) -> tenferro_tensor::Result<R> + Send,
    record: bool,
) -> PyResult<R>
where
    R: Send,
{
    let state = current_state(py)?;
    let exec = PySession::implicit().resolve(py, name, Some(&t.runtime), &state)?;
    let engine = exec.engine.clone();
    let r = py.detach(move || {
        let ctx = Ctx {
            engine: engine.as_ref(),
            record,
        };
        f(&ctx)
    });
    drop(exec);
    r.py(py)
}

/// Reverse pass from `output` (seed: `cotangent` or 1 for a scalar), accumulating into every
/// reachable leaf's slot; returns `(leaf node id, gradient of this call)` in reach order.
#[pyfunction]
#[pyo3(signature = (output, cotangent=None, create_graph=false))]
pub fn _backward(
    py: Python<'_>,
    output: &Bound<'_, PyTensor>,
    cotangent: Option<&Bound<'_, PyTensor>>,
    create_graph: bool,
) -> PyResult<Vec<(u64, PyTensor)>> {
    let out = output.get();
    let seed = match cotangent {
        Some(c) => {
            check_like(py, "backward_with", "cotangent", c.get(), out)?;
            c.get().var()
        }
        None => {
            if !out.tensor.shape().is_empty() {
                return Err(to_pyerr(
                    py,
                    Error::NonScalarOutput {
                        op: "backward".into(),
                        shape: out.tensor.shape().to_vec(),
                        remedy: "backward_with(cotangent)",
                    },
                ));
            }
            ones_like("backward", out)?
        }
    };
    let var = out.var();
    let leaves: Vec<Arc<Node>> = reachable_leaves(&var);
    if leaves.is_empty() {
        return Err(to_pyerr(
            py,
            Error::NoGradient {
                op: "backward".into(),
            },
        ));
    }
    let leaves2 = leaves.clone();
    let grads = with_engine(
        py,
        "backward",
        out,
        move |ctx| {
            let gs = vjp_graph(ctx, &var, seed, &leaves2)?;
            let mut result = Vec::with_capacity(gs.len());
            for (leaf, g) in leaves2.iter().zip(gs) {
                let g = match g {
                    Some(g) => g,
                    None => {
                        // Reachable only through symbolically zero derivatives: zeros (as PyTorch).
                        let Some((dtype, shape)) = leaf.leaf_meta() else {
                            continue;
                        };
                        tenferro_ad::rules::ops::full(ctx, 0.0, dtype, shape)?
                    }
                };
                if let Some(slot) = leaf.slot() {
                    let mut s = slot.lock().unwrap_or_else(|e| e.into_inner());
                    let acc = match s.take() {
                        Some(prev) => ctx.apply(Op::Binary(BinaryOp::Add), &[&prev, &g])?,
                        None => g.clone(),
                    };
                    *s = Some(acc);
                }
                result.push((leaf.id, g));
            }
            Ok(result)
        },
        create_graph,
    )?;
    Ok(grads
        .into_iter()
        .map(|(id, g)| {
            (
                id,
                PyTensor::with_node(g.value, out.runtime.clone_ref(py), g.node),
            )
        })
        .collect())
}

fn nodes_of(py: Python<'_>, op: &str, wrt: &[Bound<'_, PyTensor>]) -> PyResult<Vec<Arc<Node>>> {
    wrt.iter()
        .enumerate()
        .map(|(i, w)| {
            w.get().node().cloned().ok_or_else(|| {
                to_pyerr(
                    py,
                    Error::InactiveWrt {
                        op: op.into(),
                        index: i,
                    },
                )
            })
        })
        .collect()
}

/// `vjp(output, wrt, cotangent)`: cotangents of each `wrt` tensor (`None`: inactive). Results
/// are recorded (tracked when they depend on tracked values), so transforms compose.
#[pyfunction]
pub fn _vjp(
    py: Python<'_>,
    output: &Bound<'_, PyTensor>,
    wrt: Vec<Bound<'_, PyTensor>>,
    cotangent: Option<&Bound<'_, PyTensor>>,
) -> PyResult<Vec<Option<PyTensor>>> {
    let out = output.get();
    let seed = match cotangent {
        Some(c) => {
            check_like(py, "vjp", "cotangent", c.get(), out)?;
            c.get().var()
        }
        None => {
            if !out.tensor.shape().is_empty() {
                return Err(to_pyerr(
                    py,
                    Error::NonScalarOutput {
                        op: "grad".into(),
                        shape: out.tensor.shape().to_vec(),
                        remedy: "vjp with a cotangent",
                    },
                ));
            }
            ones_like("grad", out)?
        }
    };
    let mut targets = Vec::with_capacity(wrt.len());
    for (i, w) in wrt.iter().enumerate() {
        match w.get().node() {
            Some(n) => targets.push(n.clone()),
            None => {
                let _ = i;
                targets.push(Node::captured_leaf(&w.get().tensor));
            }
        }
    }
    let var = out.var();
    let gs = with_engine(
        py,
        "vjp",
        out,
        move |ctx| vjp_graph(ctx, &var, seed, &targets),
        true,
    )?;
    Ok(gs
        .into_iter()
        .zip(&wrt)
        .map(|(g, w)| {
            g.map(|g| {
                let wt = w.get();
                PyTensor::with_node(g.value, wt.runtime.clone_ref(py), g.node)
            })
        })
        .collect())
}

/// `jvp(output, wrt, tangents)`: the tangent of `output` (`None`: inactive).
#[pyfunction]
pub fn _jvp(
    py: Python<'_>,
    output: &Bound<'_, PyTensor>,
    wrt: Vec<Bound<'_, PyTensor>>,
    tangents: Vec<Bound<'_, PyTensor>>,
) -> PyResult<Option<PyTensor>> {
    let out = output.get();
    if wrt.len() != tangents.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "jvp: {} wrt tensors but {} tangents",
            wrt.len(),
            tangents.len()
        )));
    }
    for (w, t) in wrt.iter().zip(&tangents) {
        check_like(py, "jvp", "tangent", t.get(), w.get())?;
    }
    let nodes = nodes_of(py, "jvp", &wrt)?;
    let sources: Vec<(Arc<Node>, Var)> = nodes
        .into_iter()
        .zip(tangents.iter().map(|t| t.get().var()))
        .collect();
    let var = out.var();
    let r = with_engine(
        py,
        "jvp",
        out,
        move |ctx| jvp_graph(ctx, &var, &sources),
        true,
    )?;
    Ok(r.map(|t| PyTensor::with_node(t.value, out.runtime.clone_ref(py), t.node)))
}

/// Set grad-mode flags in the calling context (`None` keeps a flag); returns the ContextVar
/// token to reset.
#[pyfunction]
#[pyo3(signature = (grad_enabled=None, capture_trace=None))]
pub fn _set_modes(
    py: Python<'_>,
    grad_enabled: Option<bool>,
    capture_trace: Option<bool>,
) -> PyResult<Py<PyAny>> {
    let state = current_state(py)?;
    let st = state.get();
    let new = ModeState {
        grad_enabled: grad_enabled.unwrap_or(st.grad_enabled),
        capture_trace: capture_trace.unwrap_or(st.capture_trace),
        sessions: st.sessions.iter().map(|s| s.clone_ref(py)).collect(),
    };
    let var = crate::session::_state_var(py)?;
    Ok(var
        .bind(py)
        .call_method1("set", (Py::new(py, new)?,))?
        .unbind())
}

/// Live counts for leak tests: `(recorded nodes in the process, live gradient slots of `rt`,
/// registry entries of `rt`)`.
#[pyfunction]
pub fn _live_counts(rt: &Bound<'_, PyRuntime>) -> (usize, usize, usize) {
    let mut slots = 0;
    rt.get().for_each_leaf(|_| slots += 1);
    (tenferro_ad::live_nodes(), slots, rt.get().registry_len())
}

/// The derivative-rule table as `(op name, kind)` with kind one of `linearize`, `zero`, `cut`,
/// `missing`.
#[pyfunction]
pub fn _ad_rules() -> Vec<(&'static str, &'static str)> {
    tenferro_ops::CATALOG
        .iter()
        .map(|r| {
            let kind = match tenferro_ad::rules::rule(r.kind) {
                tenferro_ad::rules::Rule::Linearize(..)
                | tenferro_ad::rules::Rule::LinearizeMulti(..) => "linearize",
                tenferro_ad::rules::Rule::Zero => "zero",
                tenferro_ad::rules::Rule::Cut => "cut",
                tenferro_ad::rules::Rule::Missing => "missing",
            };
            (r.name, kind)
        })
        .collect()
}

/// The eager-op profile (``TENFERRO_PROFILE_EAGER_OP_AGG=1``): rows
/// ``(op, (calls fwd, rec, bwd), (µs fwd, rec, bwd))``; ``reset`` clears it after reading.
#[pyfunction]
#[pyo3(signature = (reset=false))]
pub fn _profile(reset: bool) -> Vec<(String, [u64; 3], [f64; 3])> {
    let p = tenferro_runtime::profile::profiler();
    let rows = p.rows();
    if reset {
        p.reset();
    }
    rows
}

/// Register the functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    for f in [
        wrap_pyfunction!(_variable, m)?,
        wrap_pyfunction!(_node_id, m)?,
        wrap_pyfunction!(_is_leaf, m)?,
        wrap_pyfunction!(_grad_of, m)?,
        wrap_pyfunction!(_clear_grad, m)?,
        wrap_pyfunction!(_clear_grads, m)?,
        wrap_pyfunction!(_set_grad, m)?,
        wrap_pyfunction!(_detach, m)?,
        wrap_pyfunction!(_backward, m)?,
        wrap_pyfunction!(_vjp, m)?,
        wrap_pyfunction!(_jvp, m)?,
        wrap_pyfunction!(_set_modes, m)?,
        wrap_pyfunction!(_live_counts, m)?,
        wrap_pyfunction!(_ad_rules, m)?,
        wrap_pyfunction!(_profile, m)?,
    ] {
        m.add_function(f)?;
    }
    let _ = repr;
    let _ = apply;
    Ok(())
}
