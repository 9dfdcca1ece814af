//! Python operands → one call of the eager core's `Session::apply` → Python tensors. The only
//! work done here is argument conversion (tensors are borrowed, weak Python scalars and array-
//! likes are converted) and reading the mode state once; the runtime-membership check,
//! weak-scalar promotion, execution and the recording decision are the core's.

use crate::classes::{PySession, PyTensor};
use crate::convert::{view_of_ndarray, weak_scalar};
use crate::errors::PyResultExt;
use crate::host::PyHost;
use crate::imports;
use crate::mode::current_state;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use tenferro_eager::{copy_for, EagerTensor, Operand, Session};
use tenferro_ops::Op;
use tenferro_tensor::Tensor;

/// Borrow or convert Python operands: tensors by reference, weak Python scalars as scalars,
/// anything else array-like adopted (as a view of its NumPy array) as a constant.
pub(crate) fn operands<'a>(
    py: Python<'_>,
    args: &[&'a Bound<'_, PyAny>],
) -> PyResult<Vec<Operand<'a>>> {
    args.iter().map(|a| operand(py, a)).collect()
}

/// One Python operand (see [`operands`]).
#[inline]
fn operand<'a>(py: Python<'_>, a: &'a Bound<'_, PyAny>) -> PyResult<Operand<'a>> {
    if let Ok(t) = a.cast::<PyTensor>() {
        Ok(Operand::Tensor(&t.get().inner))
    } else if let Some(s) = weak_scalar(a)? {
        Ok(Operand::Scalar(s))
    } else {
        Ok(Operand::Array(tensor_from_object(py, a, false)?))
    }
}

/// Run `op` through `session` on Python operands (any number of outputs).
pub(crate) fn apply_n(
    py: Python<'_>,
    session: &Session,
    op: &Op,
    args: &[&Bound<'_, PyAny>],
) -> PyResult<Vec<PyTensor>> {
    let ops = operands(py, args)?;
    let state = current_state(py)?;
    let host = PyHost::new(py);
    let outs = host.finish(session.apply(op, &ops, &state.get().core, &host))?;
    Ok(outs.into_iter().map(PyTensor::from).collect())
}

/// Run a one-output `op` through `session`.
pub(crate) fn apply1(
    py: Python<'_>,
    session: &Session,
    op: &Op,
    args: &[&Bound<'_, PyAny>],
) -> PyResult<PyTensor> {
    // One or two operands (operators, most functions) in an array on the stack: no vector.
    match args {
        [a] => apply1_on(py, session, op, &[operand(py, a)?]),
        [a, b] => apply1_on(py, session, op, &[operand(py, a)?, operand(py, b)?]),
        _ => apply1_on(py, session, op, &operands(py, args)?),
    }
}

fn apply1_on(
    py: Python<'_>,
    session: &Session,
    op: &Op,
    ops: &[Operand<'_>],
) -> PyResult<PyTensor> {
    let state = current_state(py)?;
    let host = PyHost::new(py);
    let out = host.finish(session.apply1(op, ops, &state.get().core, &host))?;
    Ok(out.into())
}

/// Run a one-output `op` on an eager tensor through the implicit session.
pub(crate) fn apply_on(py: Python<'_>, op: &Op, x: &EagerTensor) -> PyResult<PyTensor> {
    let state = current_state(py)?;
    let host = PyHost::new(py);
    let r = tenferro_eager::IMPLICIT.apply1(op, &[Operand::Tensor(x)], &state.get().core, &host);
    Ok(host.finish(r)?.into())
}

impl PySession {
    /// Run `op` on Python operands (tensors, weak Python scalars, array-likes).
    pub(crate) fn dispatch(
        &self,
        py: Python<'_>,
        op: Op,
        args: &[&Bound<'_, PyAny>],
    ) -> PyResult<PyTensor> {
        apply1(py, &self.core, &op, args)
    }

    /// Run an op with several outputs (a decomposition) and return them as a tuple.
    pub(crate) fn dispatch_tuple<'py>(
        &self,
        py: Python<'py>,
        op: Op,
        args: &[&Bound<'_, PyAny>],
    ) -> PyResult<Bound<'py, PyTuple>> {
        let outs = apply_n(py, &self.core, &op, args)?;
        let objs = outs
            .into_iter()
            .map(|t| Py::new(py, t))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, objs)
    }
}

/// Convert anything array-like to a tensor (copying unless `copy` is false), via NumPy.
pub(crate) fn tensor_from_object(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    copy: bool,
) -> PyResult<Tensor> {
    if let Ok(t) = obj.cast::<PyTensor>() {
        let t = t.get().data("asarray").py(py)?.clone();
        return if copy { contiguous_copy(py, &t) } else { Ok(t) };
    }
    let arr = imports::get(py)?
        .as_supported_ndarray
        .bind(py)
        .call1((obj,))?;
    let view = view_of_ndarray(py, &arr)?;
    if copy {
        contiguous_copy(py, &view)
    } else {
        Ok(view)
    }
}

/// A compact copy of `t` in fresh storage (host arrays adopted with `copy=True`, factories),
/// made through the eager core by the engine of the implicit ops here.
pub(crate) fn contiguous_copy(py: Python<'_>, t: &Tensor) -> PyResult<Tensor> {
    let state = current_state(py)?;
    let host = PyHost::new(py);
    host.finish(copy_for("asarray", None, t, &state.get().core, &host))
}
