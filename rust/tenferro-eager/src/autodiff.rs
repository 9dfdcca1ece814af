//! The runtime's AD transforms on eager tensors (`autodiff.md`): tracked leaves and their
//! gradient slots, `backward` with accumulation into the slots, `vjp` and `jvp`. Every rule body
//! runs through the session path ([`Exec::rules`]), on the engine that runs the output's
//! runtime's implicit ops (innermost active session, owning context, default engine).

use crate::runtime::Runtime;
use crate::session::{scalar_tensor, EagerTensor, Exec, Host, ModeState, IMPLICIT};
use std::sync::Arc;
use tenferro_ad::{
    jvp_graph, reachable_leaves, record_custom, vjp_graph, Ctx, CustomRule, Node, Value, Var,
};
use tenferro_ops::{BinaryOp, Op};
use tenferro_tensor::{Error, Result, Scalar};

/// A new tracked leaf of `runtime` holding `value` (`rt.variable`).
///
/// # Errors
/// `DType` for integer and bool values (only float and complex tensors can be tracked).
pub fn variable(runtime: &Arc<Runtime>, value: impl Into<Value>) -> Result<EagerTensor> {
    // A tracked leaf is strongly typed, as `rt.variable(0.5)` is in eager code.
    let value = value.into().with_weak(false);
    if !value.dtype().is_inexact() {
        return Err(Error::dtype(
            "variable",
            format!(
                "only float and complex tensors can be tracked, got {}",
                value.dtype()
            ),
        ));
    }
    let leaf = Node::leaf(&value);
    runtime.register_leaf(&leaf);
    Ok(EagerTensor::new(value, runtime.clone(), Some(leaf)))
}

/// Whether `t` is a tracked leaf (has a gradient slot).
pub fn is_leaf(t: &EagerTensor) -> bool {
    t.node().is_some_and(|n| n.slot().is_some())
}

/// The accumulated gradient of a leaf (`None` for non-leaves and before any backward pass).
pub fn grad_of(t: &EagerTensor) -> Option<EagerTensor> {
    let slot = t.node()?.slot()?;
    let g = slot.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
    Some(EagerTensor::from_var(g, t.runtime.clone()))
}

/// Reset a leaf's gradient slot (no-op for other tensors).
pub fn clear_grad(t: &EagerTensor) {
    if let Some(slot) = t.node().and_then(|n| n.slot()) {
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Store `g` as a leaf's gradient; the next backward pass adds to it.
///
/// # Errors
/// `Value` when `t` is not a tracked leaf; as [`check_like`] when `g` does not match it.
pub fn set_grad(t: &EagerTensor, g: &EagerTensor) -> Result<()> {
    let Some(slot) = t.node().and_then(|n| n.slot()) else {
        return Err(Error::value(
            "grad",
            "only a tracked leaf (rt.variable) has a gradient slot to assign",
        ));
    };
    check_like("grad", "assigned gradient", g, t)?;
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(g.var());
    Ok(())
}

/// An untracked tensor sharing `t`'s storage, of `runtime` (default: `t`'s); under
/// `capture_trace` it gets an identifiable leaf.
pub fn detach(t: &EagerTensor, runtime: Option<Arc<Runtime>>, mode: &ModeState) -> EagerTensor {
    EagerTensor::new(
        t.value.clone(),
        runtime.unwrap_or_else(|| t.runtime.clone()),
        mode.captured_node(&t.value),
    )
}

/// `x` as the result of an op that changes nothing (NumPy hands back the input itself for
/// `x.reshape(x.shape)`, `+x`, `real` of a real tensor, ...): `None` — use `x` — unless grad
/// mode is off and `x` has a node; then an untracked tensor of the same value, since inside
/// `no_grad` every result is untracked (`autodiff.md`).
pub fn unchanged(x: &EagerTensor, mode: &ModeState) -> Option<EagerTensor> {
    (!mode.grad_enabled && x.node().is_some())
        .then(|| EagerTensor::new(x.value.clone(), x.runtime.clone(), None))
}

/// Check a cotangent or tangent `v` against the tensor `like` it belongs to: runtime, shape,
/// dtype.
///
/// # Errors
/// `ContextMismatch`, `Shape` or `DType`, naming `op` and `what`.
pub fn check_like(op: &str, what: &str, v: &EagerTensor, like: &EagerTensor) -> Result<()> {
    if !Arc::ptr_eq(&v.runtime, &like.runtime) {
        return Err(Error::context_mismatch(
            op,
            format!("the {what} belongs to another runtime"),
        ));
    }
    if v.value.shape() != like.value.shape() {
        return Err(Error::shape(
            op,
            format!(
                "{what} shape {:?} differs from {:?}",
                v.value.shape(),
                like.value.shape()
            ),
        ));
    }
    if v.value.dtype() != like.value.dtype() {
        return Err(Error::dtype(
            op,
            format!(
                "{what} dtype {} differs from {}",
                v.value.dtype(),
                like.value.dtype()
            ),
        ));
    }
    Ok(())
}

/// The seed of a reverse pass: `cotangent` (checked against `output` under the name
/// `check_op`), or one for a scalar output (else `NonScalarOutput` from `op`, advising
/// `remedy`).
fn seed(
    check_op: &str,
    op: &str,
    remedy: &'static str,
    output: &EagerTensor,
    cotangent: Option<&EagerTensor>,
) -> Result<Var> {
    if let Some(c) = cotangent {
        check_like(check_op, "cotangent", c, output)?;
        return Ok(c.var());
    }
    if !output.value.shape().is_empty() {
        return Err(Error::NonScalarOutput {
            op: op.to_string(),
            shape: output.value.shape().to_vec(),
            remedy,
        });
    }
    let one = scalar_tensor(op, Scalar::Float(1.0), output.value.dtype())?;
    Ok(Var::constant(one))
}

/// The engine that runs the derivative of `output`: the output's runtime resolved through the
/// implicit session (innermost active session, owning context, default engine).
fn exec_for(op: &str, output: &EagerTensor, mode: &ModeState, host: &dyn Host) -> Result<Exec> {
    IMPLICIT.resolve(op, Some(&output.runtime), mode, host)
}

/// Reverse pass from `output` (seeded with `cotangent`, or 1 for a scalar output), accumulating
/// into the gradient slot of every reachable leaf. Returns `(leaf node id, the leaf as a tensor
/// of the output's runtime, gradient of this pass)` in reach order. With `create_graph` the rule bodies are recorded (higher order).
///
/// A leaf reached only through symbolically zero derivatives gets zeros (as PyTorch).
///
/// # Errors
/// `NonScalarOutput` without a cotangent for a non-scalar output; `NoGradient` when no tracked
/// leaf is reachable; as [`check_like`] for the cotangent; rule and kernel errors.
pub fn backward(
    output: &EagerTensor,
    cotangent: Option<&EagerTensor>,
    create_graph: bool,
    mode: &ModeState,
    host: &dyn Host,
) -> Result<Vec<(u64, Option<EagerTensor>, EagerTensor)>> {
    if matches!(output.value, Value::Symbol(_)) {
        return Err(Error::trace(
            "backward",
            "backward() of a traced tensor (inside tf.jit): gradient slots are eager state; use \
             tf.func.grad / value_and_grad / vjp inside the traced function",
        ));
    }
    let seed = seed(
        "backward_with",
        "backward",
        "backward_with(cotangent)",
        output,
        cotangent,
    )?;
    let var = output.var();
    let leaves: Vec<Arc<Node>> = reachable_leaves(&var);
    if leaves.is_empty() {
        return Err(Error::NoGradient {
            op: "backward".to_string(),
        });
    }
    let exec = exec_for("backward", output, mode, host)?;
    let rules = exec.rules(host);
    let ctx = Ctx {
        exec: &rules,
        record: create_graph,
    };
    let gs = vjp_graph(&ctx, &var, seed, &leaves)?;
    let mut result = Vec::with_capacity(gs.len());
    for (leaf, g) in leaves.iter().zip(gs) {
        let g = match g {
            Some(g) => g,
            None => {
                let Some((dtype, shape)) = leaf.leaf_meta() else {
                    continue;
                };
                tenferro_ad::rules::ops::full(&ctx, 0.0, dtype, shape)?
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
        let leaf_tensor = leaf
            .leaf_value()
            .map(|v| EagerTensor::new(v.clone(), output.runtime.clone(), Some(leaf.clone())));
        result.push((
            leaf.id,
            leaf_tensor,
            EagerTensor::from_var(g, output.runtime.clone()),
        ));
    }
    Ok(result)
}

/// `vjp(output, wrt, cotangent)`: the cotangent of each `wrt` tensor (`None`: inactive), as
/// tensors of its runtime. Rule bodies are recorded, so the transforms compose.
///
/// # Errors
/// `NonScalarOutput` without a cotangent for a non-scalar output; as [`check_like`]; rule and
/// kernel errors.
pub fn vjp(
    output: &EagerTensor,
    wrt: &[&EagerTensor],
    cotangent: Option<&EagerTensor>,
    mode: &ModeState,
    host: &dyn Host,
) -> Result<Vec<Option<EagerTensor>>> {
    vjp_with(output, wrt, cotangent, mode, host, true)
}

/// [`vjp`], recording the rule bodies only when `record` (`false`: first order, untracked
/// results; a compiled call then runs its backward program on the residuals of its forward
/// instead of recomputing).
///
/// # Errors
/// As [`vjp`].
pub fn vjp_with(
    output: &EagerTensor,
    wrt: &[&EagerTensor],
    cotangent: Option<&EagerTensor>,
    mode: &ModeState,
    host: &dyn Host,
    record: bool,
) -> Result<Vec<Option<EagerTensor>>> {
    let seed = seed("vjp", "grad", "vjp with a cotangent", output, cotangent)?;
    // A tensor that was never recorded gets a fresh leaf: no path reaches it (`None`).
    let targets: Vec<Arc<Node>> = wrt
        .iter()
        .map(|w| match w.node() {
            Some(n) => n.clone(),
            None => Node::captured_leaf(&w.value),
        })
        .collect();
    let exec = exec_for("vjp", output, mode, host)?;
    let rules = exec.rules(host);
    let ctx = Ctx {
        exec: &rules,
        record,
    };
    let gs = vjp_graph(&ctx, &output.var(), seed, &targets)?;
    Ok(gs
        .into_iter()
        .zip(wrt)
        .map(|(g, w)| g.map(|g| EagerTensor::from_var(g, w.runtime.clone())))
        .collect())
}

/// `jvp(output, wrt, tangents)`: the tangent of `output` along `tangents` (`None`: inactive).
///
/// # Errors
/// `Value` when the counts differ; `Inactive` when a `wrt` tensor was never recorded; as
/// [`check_like`] for each tangent; rule and kernel errors.
pub fn jvp(
    output: &EagerTensor,
    wrt: &[&EagerTensor],
    tangents: &[&EagerTensor],
    mode: &ModeState,
    host: &dyn Host,
) -> Result<Option<EagerTensor>> {
    jvp_with(output, wrt, tangents, mode, host, true)
}

/// [`jvp`], recording the rule bodies only when `record` (`false`: an untracked result; a
/// compiled call then runs its JVP program without recording it).
///
/// # Errors
/// As [`jvp`].
pub fn jvp_with(
    output: &EagerTensor,
    wrt: &[&EagerTensor],
    tangents: &[&EagerTensor],
    mode: &ModeState,
    host: &dyn Host,
    record: bool,
) -> Result<Option<EagerTensor>> {
    if wrt.len() != tangents.len() {
        return Err(Error::value(
            "jvp",
            format!("{} wrt tensors but {} tangents", wrt.len(), tangents.len()),
        ));
    }
    for (w, t) in wrt.iter().zip(tangents) {
        check_like("jvp", "tangent", t, w)?;
    }
    let mut sources: Vec<(Arc<Node>, Var)> = Vec::with_capacity(wrt.len());
    for (i, (w, t)) in wrt.iter().zip(tangents).enumerate() {
        let node = w.node().cloned().ok_or_else(|| Error::InactiveWrt {
            op: "jvp".to_string(),
            index: i,
        })?;
        sources.push((node, t.var()));
    }
    let exec = exec_for("jvp", output, mode, host)?;
    let rules = exec.rules(host);
    let ctx = Ctx {
        exec: &rules,
        record,
    };
    let r = jvp_graph(&ctx, &output.var(), &sources)?;
    Ok(r.map(|t| EagerTensor::from_var(t, output.runtime.clone())))
}

/// A call of a function whose derivative rules are supplied (`tf.custom_vjp` / `tf.custom_jvp`,
/// `graph-mode.md`): under the active-edge rule (`mode` records and an input has a node, or
/// `capture_trace`), one [`NodeKind::Custom`](tenferro_ad::NodeKind::Custom) node over `inputs`
/// whose outputs are the values of `outputs` (their own nodes are dropped: the rules stand for
/// the function); untracked tensors of the same values otherwise.
pub fn custom_call(
    rule: Arc<dyn CustomRule>,
    inputs: &[&EagerTensor],
    outputs: &[&EagerTensor],
    mode: &ModeState,
) -> Vec<EagerTensor> {
    let any_node = inputs.iter().any(|t| t.node().is_some());
    if !mode.records(any_node) {
        return outputs
            .iter()
            .map(|o| EagerTensor::new(o.value.clone(), o.runtime.clone(), None))
            .collect();
    }
    let vars: Vec<Var> = inputs
        .iter()
        .map(|t| t.input_var(mode.capture_trace))
        .collect();
    let values: Vec<Value> = outputs.iter().map(|o| o.value.clone()).collect();
    record_custom(rule, vars, values, mode.capture_trace)
        .into_iter()
        .zip(outputs)
        .map(|(v, o)| EagerTensor::from_var(v, o.runtime.clone()))
        .collect()
}
