//! `tf.custom_vjp` / `tf.custom_jvp` (`graph-mode.md`, "Custom derivative rules"): the
//! [`CustomRule`] of a recorded call calls back into the Python bridge object that
//! `python/tenferro/_custom.py` built for it. The bridge's methods run under a mode state whose
//! grad mode is the rule context's `record` (higher order) and that keeps the calling context's
//! sessions and `tf.jit` trace, so a `bwd` may call any tenferro op — inside a session, and under
//! `tf.jit`, where its ops are emitted into the program. A Python exception raised by the user's
//! rule crosses the core's walk through [`from_callback`] and is raised as it is.

use crate::classes::{ModeState, PyTensor};
use crate::errors::from_callback;
use crate::mode::{current_state, reset_state, set_state};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyModule};
use std::sync::Arc;
use tenferro_ad::{record_custom, rules, Ctx, CustomRule, Value, Var};
use tenferro_eager::{autodiff, EagerTensor, Runtime};
use tenferro_tensor::{Error, Result};

/// The rules of one recorded call: the Python bridge (`_custom._VjpBridge` or `_JvpBridge`)
/// with the residuals it keeps, and the runtimes of the inputs and outputs (cotangents and
/// tangents are handed to Python as tensors of them). The bridge holds no tensor produced by
/// the call itself, so the node it belongs to is never reachable from it (no cycle).
pub(crate) struct PyRule {
    name: String,
    bridge: Py<PyAny>,
    /// `custom_jvp` (has a JVP); `custom_vjp` has a VJP only.
    forward: bool,
    in_rt: Vec<Arc<Runtime>>,
    out_rt: Vec<Arc<Runtime>>,
}

impl std::fmt::Debug for PyRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyRule")
            .field("name", &self.name)
            .field("forward", &self.forward)
            .finish_non_exhaustive()
    }
}

/// The marker over the cotangents a `custom_vjp` rule returned in a recorded (higher-order)
/// backward pass: reverse mode passes through it, forward mode raises `TypeError` naming the
/// function (forward-over-reverse of a `custom_vjp` function, as JAX).
#[derive(Debug)]
struct NoForward {
    name: String,
}

fn no_forward(name: &str) -> Error {
    Python::attach(|_py| {
        from_callback(
            name,
            PyTypeError::new_err(format!(
                "can't apply forward-mode autodiff (jvp) to a custom_vjp function: {name} \
                 (define its derivative with tf.custom_jvp, or use reverse mode)"
            )),
        )
    })
}

impl CustomRule for NoForward {
    fn name(&self) -> &str {
        &self.name
    }

    fn vjp(
        &self,
        _ctx: &Ctx<'_>,
        _inputs: &[Var],
        _outputs: &[Var],
        cts: &[Option<Var>],
    ) -> Result<Vec<Option<Var>>> {
        Ok(cts.to_vec())
    }

    fn jvp(
        &self,
        _ctx: &Ctx<'_>,
        _inputs: &[Var],
        _outputs: &[Var],
        _tangents: &[Option<Var>],
        _wanted: &[bool],
    ) -> Result<Vec<Option<Var>>> {
        Err(no_forward(&self.name))
    }
}

/// Run `f` with the calling context's mode state, grad mode set to `record` and the trace
/// capture off (sessions and the `tf.jit` trace kept).
fn with_mode<T>(py: Python<'_>, record: bool, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    let state = current_state(py)?;
    let st = state.get();
    let mut core = st.core.clone();
    core.grad_enabled = record;
    core.capture_trace = false;
    let sessions = st.sessions.iter().map(|s| s.clone_ref(py)).collect();
    let token = set_state(py, ModeState { core, sessions })?;
    let r = f();
    reset_state(py, token)?;
    r
}

/// `vars` as Python tensors of the runtimes `rts`; a `None` becomes zeros shaped like the
/// matching entry of `like` (so a user's rule always receives tensors).
fn to_py(
    py: Python<'_>,
    ctx: &Ctx<'_>,
    vars: &[Option<Var>],
    like: &[Var],
    rts: &[Arc<Runtime>],
) -> Result<Vec<Py<PyTensor>>> {
    vars.iter()
        .zip(like)
        .zip(rts)
        .map(|((v, l), rt)| {
            let v = match v {
                Some(v) => v.clone(),
                None => rules::ops::full(ctx, 0.0, l.value.dtype(), l.value.shape())?,
            };
            Py::new(py, PyTensor::from(EagerTensor::from_var(v, rt.clone())))
                .map_err(|e| from_callback("custom rule", e))
        })
        .collect()
}

impl PyRule {
    /// The rules of a call whose derivatives the Python object `bridge` computes with the
    /// methods of `_custom`'s bridges (``vjp(inputs, cts, record)``, ``jvp(inputs, tangents,
    /// record)``), its inputs and outputs handed over as tensors of `runtime` (a compiled
    /// function that called custom rules, differentiated at higher order: `_jit._Supplier`).
    pub(crate) fn bridged(
        name: &str,
        bridge: Py<PyAny>,
        runtime: Arc<Runtime>,
        n_in: usize,
        n_out: usize,
    ) -> PyRule {
        PyRule {
            name: name.to_string(),
            bridge,
            forward: true,
            in_rt: vec![runtime.clone(); n_in],
            out_rt: vec![runtime; n_out],
        }
    }

    /// The primal inputs as the rule body sees them: recorded (higher order) or constants.
    fn inputs(ctx: &Ctx<'_>, inputs: &[Var]) -> Vec<Option<Var>> {
        inputs
            .iter()
            .map(|v| {
                Some(if ctx.record {
                    v.clone()
                } else {
                    Var::untracked(v.value.clone())
                })
            })
            .collect()
    }

    /// Call `method` of the bridge with `(inputs, vectors, record)` under [`with_mode`] and read
    /// back one tensor or `None` per entry of `like`, checked against it (the bridge already
    /// raised the user-facing errors; this guards the node's invariants).
    fn call(
        &self,
        ctx: &Ctx<'_>,
        method: &str,
        inputs: &[Var],
        vectors: Vectors<'_>,
        like: &[Var],
    ) -> Result<Vec<Option<Var>>> {
        Python::attach(|py| {
            let ins = to_py(py, ctx, &Self::inputs(ctx, inputs), inputs, &self.in_rt)?;
            let vs = to_py(py, ctx, vectors.values, vectors.like, vectors.rt)?;
            let r = with_mode(py, ctx.record, || {
                let out = self.bridge.bind(py).call_method1(
                    method,
                    (PyList::new(py, ins)?, PyList::new(py, vs)?, ctx.record),
                )?;
                out.extract::<Vec<Option<Bound<'_, PyTensor>>>>()
            })
            .map_err(|e| from_callback(&self.name, e))?;
            if r.len() != like.len() {
                return Err(Error::shape(
                    &self.name,
                    format!(
                        "the custom rule returned {} values for {} tensors",
                        r.len(),
                        like.len()
                    ),
                ));
            }
            r.into_iter()
                .zip(like)
                .map(|(t, l)| {
                    let Some(t) = t else { return Ok(None) };
                    let v = t.get().var();
                    check(&self.name, &v.value, &l.value)?;
                    Ok(Some(if ctx.record {
                        v
                    } else {
                        Var::untracked(v.value)
                    }))
                })
                .collect()
        })
    }
}

/// The (co)tangents handed to a rule: one per entry of `like` (`None`: zero), as tensors of
/// the runtimes `rt`.
struct Vectors<'a> {
    values: &'a [Option<Var>],
    like: &'a [Var],
    rt: &'a [Arc<Runtime>],
}

/// A value a rule returned must have the shape and dtype of the tensor it belongs to.
fn check(name: &str, v: &Value, like: &Value) -> Result<()> {
    if v.shape() != like.shape() {
        return Err(Error::shape(
            name,
            format!(
                "a custom rule returned shape {:?} for a tensor of shape {:?}",
                v.shape(),
                like.shape()
            ),
        ));
    }
    if v.dtype() != like.dtype() {
        return Err(Error::dtype(
            name,
            format!(
                "a custom rule returned dtype {} for a tensor of dtype {}",
                v.dtype(),
                like.dtype()
            ),
        ));
    }
    Ok(())
}

impl CustomRule for PyRule {
    fn name(&self) -> &str {
        &self.name
    }

    fn vjp(
        &self,
        ctx: &Ctx<'_>,
        inputs: &[Var],
        outputs: &[Var],
        cts: &[Option<Var>],
    ) -> Result<Vec<Option<Var>>> {
        if cts.iter().all(Option::is_none) {
            return Ok(vec![None; inputs.len()]);
        }
        let cts = Vectors {
            values: cts,
            like: outputs,
            rt: &self.out_rt,
        };
        let gs = self.call(ctx, "vjp", inputs, cts, inputs)?;
        if self.forward || !ctx.record {
            return Ok(gs);
        }
        // A recorded `bwd`: forward mode through its result must raise as forward mode
        // through the call does.
        Ok(gs
            .into_iter()
            .map(|g| {
                g.map(|g| {
                    let rule = Arc::new(NoForward {
                        name: self.name.clone(),
                    });
                    record_custom(rule, vec![g.clone()], vec![g.value.clone()], false)
                        .pop()
                        .unwrap_or(g)
                })
            })
            .collect())
    }

    fn jvp(
        &self,
        ctx: &Ctx<'_>,
        inputs: &[Var],
        outputs: &[Var],
        tangents: &[Option<Var>],
        wanted: &[bool],
    ) -> Result<Vec<Option<Var>>> {
        if !self.forward {
            return Err(no_forward(&self.name));
        }
        let ts = Vectors {
            values: tangents,
            like: inputs,
            rt: &self.in_rt,
        };
        let ts = self.call(ctx, "jvp", inputs, ts, outputs)?;
        Ok(ts
            .into_iter()
            .zip(wanted)
            .map(|(t, &w)| if w { t } else { None })
            .collect())
    }
}

/// Record a call of the function `name` with supplied rules: `bridge` answers
/// `vjp(inputs, cotangents, record)` (and, for `custom_jvp` (`forward`),
/// `jvp(inputs, tangents, record)`) with one tensor or `None` per input (per output). Returns
/// `outputs` as the node's outputs when the calling context records (see
/// `tenferro_eager::autodiff::custom_call`), untracked tensors of their values otherwise.
#[pyfunction]
pub fn _custom_call(
    py: Python<'_>,
    bridge: Py<PyAny>,
    name: String,
    forward: bool,
    inputs: Vec<Bound<'_, PyTensor>>,
    outputs: Vec<Bound<'_, PyTensor>>,
) -> PyResult<Vec<PyTensor>> {
    if outputs.is_empty() {
        return Err(PyValueError::new_err(format!(
            "{name}: a custom-rule function must return at least one float or complex tensor"
        )));
    }
    let rule = Arc::new(PyRule {
        name,
        bridge,
        forward,
        in_rt: inputs.iter().map(|t| t.get().runtime.clone()).collect(),
        out_rt: outputs.iter().map(|t| t.get().runtime.clone()).collect(),
    });
    let state = current_state(py)?;
    let ins: Vec<&EagerTensor> = inputs.iter().map(|t| &t.get().inner).collect();
    let outs: Vec<&EagerTensor> = outputs.iter().map(|t| &t.get().inner).collect();
    Ok(autodiff::custom_call(rule, &ins, &outs, &state.get().core)
        .into_iter()
        .map(PyTensor::from)
        .collect())
}

/// Register the functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_custom_call, m)?)?;
    Ok(())
}
