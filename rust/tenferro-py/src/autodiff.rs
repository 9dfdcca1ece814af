//! The Python face of automatic differentiation: one-line wrappers over
//! `tenferro_eager::autodiff` (tracked leaves, gradient slots, `backward`, `vjp`, `jvp`). The
//! public methods are attached in `python/tenferro/_tensor_methods.py`, which documents them.

use crate::apply::tensor_from_object;
use crate::classes::{register_runtime, PyRuntime, PyTensor};
use crate::defaults::runtime_arg;
use crate::errors::PyResultExt;
use crate::host::PyHost;
use crate::mode::current_state;
use pyo3::prelude::*;
use pyo3::types::{PyModule, PyWeakrefReference};
use tenferro_eager::{autodiff, EagerTensor};

/// The core tensors of a list of Python tensors.
fn cores<'a>(ts: &'a [Bound<'_, PyTensor>]) -> Vec<&'a EagerTensor> {
    ts.iter().map(|t| &t.get().inner).collect()
}

/// A new tracked leaf of `runtime` holding a copy of `data` (float or complex only); with
/// `share` a tensor's data is shared instead of copied (the private leaves of `tf.func`, which
/// die with the call; tensors are never written in place).
#[pyfunction]
#[pyo3(signature = (runtime, data, share=false))]
pub fn _variable(
    py: Python<'_>,
    runtime: Option<&Bound<'_, PyRuntime>>,
    data: &Bound<'_, PyAny>,
    share: bool,
) -> PyResult<Py<PyTensor>> {
    let rt = runtime_arg(py, runtime)?;
    // A traced tensor (tf.jit) becomes a traced leaf (its symbol); anything else is copied.
    let value = match data.cast::<PyTensor>() {
        Ok(t) if share || matches!(t.get().value, tenferro_eager::Value::Symbol(_)) => {
            t.get().value.clone().with_weak(false)
        }
        _ => tenferro_eager::Value::Tensor(tensor_from_object(py, data, true)?),
    };
    let leaf = Bound::new(py, PyTensor::from(autodiff::variable(&rt, value).py(py)?))?;
    // The leaf node keeps a weak reference to this object: backward hands it back.
    if let Some(host) = leaf.get().node().and_then(|n| n.leaf_host()) {
        let _ = host.set(Box::new(PyWeakrefReference::new(&leaf)?.unbind()));
    }
    Ok(leaf.unbind())
}

/// The user's object of a leaf reached by a backward pass (its weak reference on the node), or
/// a new tensor for it when that object died.
fn leaf_object(py: Python<'_>, leaf: EagerTensor) -> PyResult<Py<PyTensor>> {
    let weak = leaf
        .node()
        .and_then(|n| n.leaf_host())
        .and_then(|h| h.get())
        .and_then(|b| b.downcast_ref::<Py<PyWeakrefReference>>());
    if let Some(w) = weak {
        if let Some(obj) = w.bind(py).upgrade_as::<PyTensor>()? {
            return Ok(obj.unbind());
        }
    }
    Py::new(py, PyTensor::from(leaf))
}

/// The node id of a tensor (0: untracked, never recorded).
#[pyfunction]
pub fn _node_id(t: &Bound<'_, PyTensor>) -> u64 {
    t.get().node().map_or(0, |n| n.id)
}

/// Whether the tensor is a tracked leaf.
#[pyfunction]
pub fn _is_leaf(t: &Bound<'_, PyTensor>) -> bool {
    autodiff::is_leaf(t.get())
}

/// The accumulated gradient of a leaf (`None` for non-leaves and before any backward).
#[pyfunction]
pub fn _grad_of(t: &Bound<'_, PyTensor>) -> Option<PyTensor> {
    autodiff::grad_of(t.get()).map(PyTensor::from)
}

/// Reset a leaf's gradient slot.
#[pyfunction]
pub fn _clear_grad(t: &Bound<'_, PyTensor>) {
    autodiff::clear_grad(t.get());
}

/// Store `g` (same runtime, shape and dtype) as a leaf's gradient; the next `backward` adds to it.
#[pyfunction]
pub fn _set_grad(py: Python<'_>, t: &Bound<'_, PyTensor>, g: &Bound<'_, PyTensor>) -> PyResult<()> {
    autodiff::set_grad(t.get(), g.get()).py(py)
}

/// Reset every live gradient slot of a runtime (slots stay registered).
#[pyfunction]
pub fn _clear_grads(rt: &Bound<'_, PyRuntime>) {
    rt.get().inner.clear_grads();
}

/// An untracked tensor sharing `t`'s storage (of `runtime`, default: `t`'s).
#[pyfunction]
#[pyo3(signature = (t, runtime=None))]
pub fn _detach(
    py: Python<'_>,
    t: &Bound<'_, PyTensor>,
    runtime: Option<&Bound<'_, PyRuntime>>,
) -> PyResult<PyTensor> {
    let rt = runtime.map(register_runtime).transpose()?;
    let state = current_state(py)?;
    Ok(autodiff::detach(t.get(), rt, &state.get().core).into())
}

/// One leaf reached by a backward pass: `(node id, the user's leaf object, gradient)`.
type ReachedLeaf = (u64, Option<Py<PyTensor>>, PyTensor);

/// `x` itself, or inside ``no_grad`` an untracked tensor of its value when `x` is recorded: the
/// result of the NumPy-named functions' no-op shortcuts.
#[pyfunction]
pub fn _unchanged(py: Python<'_>, x: &Bound<'_, PyTensor>) -> PyResult<Py<PyTensor>> {
    let state = current_state(py)?;
    // A function of a weakly typed traced Python number is strong, as a function of the number
    // is (`tf.real(s)`, `tf.conj(s)` return their input unchanged).
    match autodiff::unchanged(x.get(), &state.get().core) {
        Some(t) if t.value.is_weak() => Py::new(py, PyTensor::from(t.with_weak(false))),
        Some(t) => Py::new(py, PyTensor::from(t)),
        None if x.get().value.is_weak() => Py::new(py, PyTensor::from(x.get().with_weak(false))),
        None => Ok(x.clone().unbind()),
    }
}

/// Reverse pass from `output` (seed: `cotangent` or 1 for a scalar), accumulating into every
/// reachable leaf's slot; returns `(leaf node id, leaf, gradient of this call)` in reach order.
#[pyfunction]
#[pyo3(signature = (output, cotangent=None, create_graph=false))]
pub fn _backward(
    py: Python<'_>,
    output: &Bound<'_, PyTensor>,
    cotangent: Option<&Bound<'_, PyTensor>>,
    create_graph: bool,
) -> PyResult<Vec<ReachedLeaf>> {
    let state = current_state(py)?;
    let host = PyHost::new(py);
    let out = output.get();
    let r = autodiff::backward(
        out,
        cotangent.map(|c| &c.get().inner),
        create_graph,
        &state.get().core,
        &host,
    );
    host.finish(r)?
        .into_iter()
        .map(|(id, leaf, g)| {
            let leaf = leaf.map(|l| leaf_object(py, l)).transpose()?;
            Ok((id, leaf, PyTensor::from(g)))
        })
        .collect()
}

/// `vjp(output, wrt, cotangent)`: cotangents of each `wrt` tensor (`None`: inactive). Results
/// are recorded (tracked when they depend on tracked values), so transforms compose;
/// `create_graph=False` (`tf.func` on fresh leaves, whose results are detached) records nothing.
#[pyfunction]
#[pyo3(signature = (output, wrt, cotangent, create_graph=true))]
pub fn _vjp(
    py: Python<'_>,
    output: &Bound<'_, PyTensor>,
    wrt: Vec<Bound<'_, PyTensor>>,
    cotangent: Option<&Bound<'_, PyTensor>>,
    create_graph: bool,
) -> PyResult<Vec<Option<PyTensor>>> {
    let state = current_state(py)?;
    let host = PyHost::new(py);
    let r = autodiff::vjp_with(
        output.get(),
        &cores(&wrt),
        cotangent.map(|c| &c.get().inner),
        &state.get().core,
        &host,
        create_graph,
    );
    Ok(host
        .finish(r)?
        .into_iter()
        .map(|g| g.map(PyTensor::from))
        .collect())
}

/// `jvp(output, wrt, tangents)`: the tangent of `output` (`None`: inactive).
/// `create_graph=False` (`tf.func` on fresh leaves) records nothing.
#[pyfunction]
#[pyo3(signature = (output, wrt, tangents, create_graph=true))]
pub fn _jvp(
    py: Python<'_>,
    output: &Bound<'_, PyTensor>,
    wrt: Vec<Bound<'_, PyTensor>>,
    tangents: Vec<Bound<'_, PyTensor>>,
    create_graph: bool,
) -> PyResult<Option<PyTensor>> {
    let state = current_state(py)?;
    let host = PyHost::new(py);
    let r = autodiff::jvp_with(
        output.get(),
        &cores(&wrt),
        &cores(&tangents),
        &state.get().core,
        &host,
        create_graph,
    );
    Ok(host.finish(r)?.map(PyTensor::from))
}

/// Live counts for leak tests: `(recorded nodes in the process, live gradient slots of `rt`,
/// registry entries of `rt`)`.
#[pyfunction]
pub fn _live_counts(rt: &Bound<'_, PyRuntime>) -> (usize, usize, usize) {
    let inner = &rt.get().inner;
    let slots = inner.live_leaves().len();
    (tenferro_ad::live_nodes(), slots, inner.registry_len())
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
        wrap_pyfunction!(_unchanged, m)?,
        wrap_pyfunction!(_backward, m)?,
        wrap_pyfunction!(_vjp, m)?,
        wrap_pyfunction!(_jvp, m)?,
        wrap_pyfunction!(_live_counts, m)?,
        wrap_pyfunction!(_ad_rules, m)?,
        wrap_pyfunction!(_profile, m)?,
    ] {
        m.add_function(f)?;
    }
    Ok(())
}
