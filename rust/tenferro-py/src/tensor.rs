//! `tenferro.Tensor`: the Python face of a core tensor — metadata, operators, basic indexing as
//! views, and zero-copy export (buffer protocol, ``__array_interface__``, DLPack).

use crate::apply::{apply1, apply_on};
use crate::classes::{runtime_object, PyRuntime, PyTensor};
use crate::convert::{np_dtype, weak_scalar};
use crate::dlpack;
use crate::errors::PyResultExt;
use crate::host::PyHost;
use crate::mode::current_state;
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyEllipsis, PyNone, PySlice, PyTuple};
use std::ffi::{c_int, CStr};
use tenferro_eager::{basic_index, BasicIndex, IMPLICIT};
use tenferro_ops::{BinaryOp, CompareDir, Op, UnaryOp};
use tenferro_tensor::{DType, Tensor};

/// A transposed view (`.T`, `.mT`): the `transpose` primitive through the eager core, so a
/// recorded tensor records it.
fn transposed(py: Python<'_>, t: &PyTensor, perm: Vec<usize>) -> PyResult<PyTensor> {
    apply_on(py, &Op::Transpose(perm), &t.inner)
}

/// Whether `other` is something a tensor operator accepts (else `NotImplemented`).
fn operand_ok(py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
    if other.cast::<PyTensor>().is_ok() || weak_scalar(other)?.is_some() {
        return Ok(true);
    }
    let imports = crate::imports::get(py)?;
    Ok(other.is_instance(imports.np_ndarray.bind(py))?
        || other.is_instance(imports.np_generic.bind(py))?)
}

fn binop(
    slf: &Bound<'_, PyTensor>,
    other: &Bound<'_, PyAny>,
    op: Op,
    reflected: bool,
) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    if !operand_ok(py, other)? {
        return Ok(py.NotImplemented());
    }
    let me = slf.as_any();
    let args = if reflected { [other, me] } else { [me, other] };
    let out = keep_weak(slf.get(), Some(other), apply1(py, &IMPLICIT, &op, &args)?);
    Ok(Bound::new(py, out)?.into_any().unbind())
}

/// Python arithmetic keeps weak typing (graph mode): an operator on a weakly typed traced
/// scalar (a ``float``/``complex`` argument of a jitted function) and a Python scalar or
/// another weak one gives a weak result, as the same arithmetic on Python numbers gives a
/// Python number eagerly; any strongly typed operand makes the result strong. Functions
/// (``tf.sin(s)``) give strong results, as they do on Python numbers.
fn keep_weak(me: &PyTensor, other: Option<&Bound<'_, PyAny>>, out: PyTensor) -> PyTensor {
    if !me.value.is_weak() {
        return out;
    }
    let other_weak = other.is_none_or(|o| match o.cast::<PyTensor>() {
        Ok(t) => t.get().value.is_weak(),
        Err(_) => matches!(weak_scalar(o), Ok(Some(_))),
    });
    if other_weak {
        out.with_weak(true).into()
    } else {
        out
    }
}

/// NumPy's dtype kind of an operand (`'b'`, `'i'`, `'u'`, `'f'`, `'c'`): of a tensor, a NumPy
/// array or scalar, or a weak Python scalar; `None` for anything else.
fn dtype_kind(x: &Bound<'_, PyAny>) -> PyResult<Option<char>> {
    use tenferro_tensor::Scalar;
    if let Ok(t) = x.cast::<PyTensor>() {
        let d = t.get().value.dtype();
        return Ok(Some(if d.is_bool() {
            'b'
        } else if d.is_int() {
            'i'
        } else if d.is_complex() {
            'c'
        } else {
            'f'
        }));
    }
    if let Ok(dtype) = x.getattr("dtype") {
        let kind: String = dtype.getattr("kind")?.extract()?;
        return Ok(kind.chars().next());
    }
    Ok(weak_scalar(x)?.map(|s| match s {
        Scalar::Bool(_) => 'b',
        Scalar::Int(_) => 'i',
        Scalar::Float(_) => 'f',
        Scalar::Complex(_) => 'c',
    }))
}

/// Whether `x` is integer or bool (tensor, NumPy array or scalar, weak Python scalar).
fn int_like(x: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(matches!(dtype_kind(x)?, Some('b' | 'i' | 'u')))
}

fn as_float<'py>(x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = x.py();
    let f = apply1(py, &IMPLICIT, &Op::Cast(DType::F64), &[x])?;
    Ok(Bound::new(py, f)?.into_any())
}

fn truediv_op(
    slf: &Bound<'_, PyTensor>,
    other: &Bound<'_, PyAny>,
    reflected: bool,
) -> PyResult<Py<PyAny>> {
    let py = slf.py();
    if !operand_ok(py, other)? {
        return Ok(py.NotImplemented());
    }
    // `/` is true division: two integer/bool operands divide in float64 (NumPy).
    let me = slf.as_any();
    let (a, b) = if reflected { (other, me) } else { (me, other) };
    let out = if int_like(a)? && int_like(b)? {
        let (fa, fb) = (as_float(a)?, as_float(b)?);
        apply1(py, &IMPLICIT, &Op::Binary(BinaryOp::Div), &[&fa, &fb])?
    } else {
        apply1(py, &IMPLICIT, &Op::Binary(BinaryOp::Div), &[a, b])?
    };
    let out = keep_weak(slf.get(), Some(other), out);
    Ok(Bound::new(py, out)?.into_any().unbind())
}

#[pymethods]
impl PyTensor {
    /// Shape as a tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.value.shape())
    }

    /// Element type (a ``numpy.dtype``).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        np_dtype(py, self.value.dtype())
    }

    /// Rank.
    #[getter]
    fn ndim(&self) -> usize {
        self.value.ndim()
    }

    /// Number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.value.numel()
    }

    /// Strides in bytes, as NumPy reports them for the exported view.
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.data("strides").py(py)?.byte_strides())
    }

    /// Whether this is a traced tensor of a ``tf.jit`` trace (shape and dtype, no values).
    #[getter]
    fn _traced(&self) -> bool {
        matches!(self.value, tenferro_eager::Value::Symbol(_))
    }

    /// Whether this is a weakly typed traced scalar (a ``float``/``complex`` argument of a
    /// ``tf.jit`` function, or Python arithmetic on one): it takes the dtype of the tensors it
    /// meets, as a Python number does.
    #[getter]
    fn _weak(&self) -> bool {
        self.value.is_weak()
    }

    /// This tensor with weak typing set to ``weak`` (same value and derivative record).
    fn _with_weak(&self, weak: bool) -> PyTensor {
        self.inner.with_weak(weak).into()
    }

    /// For a traced tensor, the exception a value request (``request``: ``"bool()"``,
    /// ``"np.asarray"``, a library function ...) raises: ``ConcretizationError`` naming the op
    /// that made it, its shape and dtype (with ``why`` in place of the default advice), or
    /// ``TracerLeakError`` when its trace has ended. ``None`` for a tensor with data.
    #[pyo3(signature = (request, why=None))]
    fn _value_error(&self, py: Python<'_>, request: &str, why: Option<&str>) -> Option<Py<PyAny>> {
        match &self.value {
            tenferro_eager::Value::Symbol(s) => {
                let e = tenferro_eager::concretization_because(request, s, why);
                Some(crate::errors::to_pyerr(py, e).into_value(py).into_any())
            }
            tenferro_eager::Value::Tensor(_) => None,
        }
    }

    /// Whether the tensor is compact in the core's column-major layout.
    #[getter]
    fn is_contiguous(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.data("is_contiguous").py(py)?.is_contiguous())
    }

    /// Device name (``"cpu"``).
    #[getter]
    fn device(&self) -> &'static str {
        "cpu"
    }

    /// The runtime this tensor belongs to.
    #[getter]
    fn runtime(&self, py: Python<'_>) -> PyResult<Py<PyRuntime>> {
        runtime_object(py, &self.runtime)
    }

    /// Whether the tensor is tracked: a leaf made by ``rt.variable`` or a value computed from
    /// one while grad mode was on.
    #[getter]
    fn requires_grad(&self) -> bool {
        self.node().is_some_and(|n| n.tracked)
    }

    /// Reversed axes (a view), as NumPy's ``.T``.
    #[getter]
    #[allow(non_snake_case)]
    fn T(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let perm: Vec<usize> = (0..self.value.ndim()).rev().collect();
        transposed(py, self, perm)
    }

    /// The last two axes swapped (a view), as NumPy's ``.mT``.
    #[getter]
    #[allow(non_snake_case)]
    fn mT(&self, py: Python<'_>) -> PyResult<PyTensor> {
        let n = self.value.ndim();
        if n < 2 {
            return Err(crate::errors::to_pyerr(
                py,
                tenferro_tensor::Error::shape(
                    "mT",
                    format!("matrix transpose needs at least 2 dimensions, got {n}"),
                ),
            ));
        }
        let mut perm: Vec<usize> = (0..n).collect();
        perm.swap(n - 1, n - 2);
        transposed(py, self, perm)
    }

    fn __len__(&self) -> PyResult<usize> {
        self.value
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of unsized object"))
    }

    fn __hash__(slf: &Bound<'_, Self>) -> isize {
        slf.as_ptr() as isize
    }

    fn __add__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::Add), false)
    }
    fn __radd__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::Add), true)
    }
    fn __sub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::Sub), false)
    }
    fn __rsub__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::Sub), true)
    }
    fn __mul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::Mul), false)
    }
    fn __rmul__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::Mul), true)
    }
    fn __truediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        truediv_op(slf, o, false)
    }
    fn __rtruediv__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        truediv_op(slf, o, true)
    }
    fn __pow__(
        slf: &Bound<'_, Self>,
        o: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        // Three-argument `pow(t, y, m)`: not supported (NumPy raises `TypeError` too); the
        // modulo used to be ignored silently.
        if !modulo.is_none() {
            return Ok(slf.py().NotImplemented());
        }
        binop(slf, o, Op::Binary(BinaryOp::Pow), false)
    }
    fn __rpow__(
        slf: &Bound<'_, Self>,
        o: &Bound<'_, PyAny>,
        modulo: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        // Three-argument `pow(t, y, m)`: not supported (NumPy raises `TypeError` too); the
        // modulo used to be ignored silently.
        if !modulo.is_none() {
            return Ok(slf.py().NotImplemented());
        }
        binop(slf, o, Op::Binary(BinaryOp::Pow), true)
    }
    // `&`, `|`, `^`, `~`, `<<`, `>>`: the bitwise primitives (integer and bool operands; any
    // other dtype is a `DTypeError` naming the op, as NumPy's `TypeError`).
    fn __and__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::BitwiseAnd), false)
    }
    fn __rand__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::BitwiseAnd), true)
    }
    fn __or__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::BitwiseOr), false)
    }
    fn __ror__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::BitwiseOr), true)
    }
    fn __xor__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::BitwiseXor), false)
    }
    fn __rxor__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::BitwiseXor), true)
    }
    fn __lshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::ShiftLeft), false)
    }
    fn __rlshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::ShiftLeft), true)
    }
    fn __rshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::ShiftRightArithmetic), false)
    }
    fn __rrshift__(slf: &Bound<'_, Self>, o: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        binop(slf, o, Op::Binary(BinaryOp::ShiftRightArithmetic), true)
    }
    fn __invert__(slf: &Bound<'_, Self>) -> PyResult<PyTensor> {
        let out = apply1(
            slf.py(),
            &IMPLICIT,
            &Op::Unary(UnaryOp::BitwiseNot),
            &[slf.as_any()],
        )?;
        Ok(keep_weak(slf.get(), None, out))
    }

    fn __neg__(slf: &Bound<'_, Self>) -> PyResult<PyTensor> {
        let out = apply1(
            slf.py(),
            &IMPLICIT,
            &Op::Unary(UnaryOp::Neg),
            &[slf.as_any()],
        )?;
        Ok(keep_weak(slf.get(), None, out))
    }
    fn __pos__(slf: &Bound<'_, Self>) -> PyResult<Py<Self>> {
        crate::autodiff::_unchanged(slf.py(), slf)
    }
    fn __abs__(slf: &Bound<'_, Self>) -> PyResult<PyTensor> {
        let out = apply1(
            slf.py(),
            &IMPLICIT,
            &Op::Unary(UnaryOp::Abs),
            &[slf.as_any()],
        )?;
        Ok(keep_weak(slf.get(), None, out))
    }

    fn __richcmp__(
        slf: &Bound<'_, Self>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let dir = match op {
            CompareOp::Eq => CompareDir::Eq,
            CompareOp::Ne => CompareDir::Ne,
            CompareOp::Lt => CompareDir::Lt,
            CompareOp::Le => CompareDir::Le,
            CompareOp::Gt => CompareDir::Gt,
            CompareOp::Ge => CompareDir::Ge,
        };
        binop(slf, other, Op::Compare(dir), false)
    }

    fn __getitem__(slf: &Bound<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        // Anything but int / slice / None / ... is advanced indexing (Python's `_indexing`).
        let mut basic = Vec::with_capacity(items.len());
        for it in &items {
            basic.push(if it.is_instance_of::<PyEllipsis>() {
                BasicIndex::Ellipsis
            } else if it.is_instance_of::<PyNone>() {
                BasicIndex::NewAxis
            } else if let Ok(s) = it.cast::<PySlice>() {
                BasicIndex::Slice {
                    start: slice_bound(&s.getattr("start")?)?,
                    stop: slice_bound(&s.getattr("stop")?)?,
                    step: slice_bound(&s.getattr("step")?)?,
                }
            } else if is_int_index(it) {
                BasicIndex::Int(saturating_index(&it.call_method0("__index__")?)?)
            } else {
                let adv = crate::imports::hook(
                    py,
                    "__getitem__",
                    &crate::imports::ADVANCED_GETITEM,
                    "advanced_getitem",
                )?;
                return Ok(adv.call1((slf, key))?.unbind());
            });
        }
        let state = current_state(py)?;
        let host = PyHost::new(py);
        let r = basic_index(&IMPLICIT, slf.get(), &basic, &state.get().core, &host);
        let out = PyTensor::from(host.finish(r)?);
        Ok(Bound::new(py, out)?.into_any().unbind())
    }

    fn __setitem__(&self, _key: &Bound<'_, PyAny>, _value: &Bound<'_, PyAny>) -> PyResult<()> {
        Err(PyTypeError::new_err(
            "tenferro tensors are immutable; use t.at[idx].set(v) or t.at[idx].add(v) to build an updated tensor",
        ))
    }

    /// The ``__array_interface__`` (version 3) describing this tensor's memory, read-only.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = self.data("__array_interface__").py(py)?;
        t.storage().mark_exported();
        let d = PyDict::new(py);
        d.set_item("shape", PyTuple::new(py, t.shape())?)?;
        d.set_item("typestr", typestr(t.dtype()))?;
        d.set_item("data", (data_address(t), true))?;
        d.set_item("strides", PyTuple::new(py, t.byte_strides())?)?;
        d.set_item("version", 3)?;
        Ok(d)
    }

    /// DLPack export (CPU). A versioned request (``max_version >= (1, 0)``) shares memory and
    /// sets the READ_ONLY flag; an unversioned request receives a copy.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<(u32, u32)>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(s) = stream {
            if !s.is_none() {
                return Err(PyBufferError::new_err(
                    "__dlpack__: stream must be None for CPU tensors",
                ));
            }
        }
        if let Some(dev) = dl_device {
            if dev != (1, 0) {
                return Err(PyBufferError::new_err(format!(
                    "__dlpack__: cannot export a CPU tensor to device {dev:?}"
                )));
            }
        }
        dlpack::export(py, self.data("__dlpack__").py(py)?, max_version, copy)
    }

    /// ``(device_type, device_id)``: ``(1, 0)`` (kDLCPU).
    fn __dlpack_device__(&self) -> (i32, i32) {
        (1, 0)
    }

    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        // SAFETY: `view` is a valid Py_buffer provided by the interpreter.
        unsafe { fill_buffer(slf, view, flags) }
    }

    unsafe fn __releasebuffer__(&self, view: *mut ffi::Py_buffer) {
        // SAFETY: `internal` was set by `fill_buffer` to a leaked Box of shape+strides.
        unsafe {
            let internal = (*view).internal as *mut Vec<isize>;
            if !internal.is_null() {
                drop(Box::from_raw(internal));
                (*view).internal = std::ptr::null_mut();
            }
        }
    }
}

/// A Python integer as `i64`, saturating (a slice bound beyond `i64` clamps like any other bound
/// past the end; an integer index that large is out of bounds either way).
fn saturating_index(v: &Bound<'_, PyAny>) -> PyResult<i64> {
    match v.extract::<i64>() {
        Ok(i) => Ok(i),
        Err(_) => Ok(if v.gt(0)? { i64::MAX } else { i64::MIN }),
    }
}

/// A slice's `start`/`stop`/`step` (`None` stays `None`; anything else via `__index__`).
fn slice_bound(v: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if v.is_none() {
        return Ok(None);
    }
    if !v.hasattr("__index__")? {
        return Err(PyTypeError::new_err(
            "slice indices must be integers or None or have an __index__ method",
        ));
    }
    saturating_index(&v.call_method0("__index__")?).map(Some)
}

fn is_int_index(it: &Bound<'_, PyAny>) -> bool {
    if it.is_instance_of::<pyo3::types::PyBool>() {
        return false;
    }
    if it.is_instance_of::<pyo3::types::PyInt>() {
        return true;
    }
    // NumPy integer scalars and 0-d integer tensors implement __index__.
    if it.cast::<PyTensor>().is_ok() {
        return false;
    }
    it.hasattr("__index__").unwrap_or(false)
        && !it.hasattr("shape").unwrap_or(true)
        && !it
            .get_type()
            .name()
            .map(|n| n.to_string().contains("bool"))
            .unwrap_or(false)
}

fn typestr(d: DType) -> &'static str {
    match d {
        DType::Bool => "|b1",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::C32 => "<c8",
        DType::C64 => "<c16",
    }
}

fn data_address(t: &Tensor) -> usize {
    t.storage().as_ptr() as usize + t.offset() * t.dtype().itemsize()
}

fn format_cstr(d: DType) -> &'static CStr {
    match d {
        DType::Bool => c"?",
        DType::I32 => c"i",
        DType::I64 => c"q",
        DType::F32 => c"f",
        DType::F64 => c"d",
        DType::C32 => c"Zf",
        DType::C64 => c"Zd",
    }
}

/// Fill a read-only strided `Py_buffer` for the tensor.
///
/// # Safety
/// `view` must point to a `Py_buffer` the interpreter asked us to fill.
unsafe fn fill_buffer(
    slf: Bound<'_, PyTensor>,
    view: *mut ffi::Py_buffer,
    flags: c_int,
) -> PyResult<()> {
    if view.is_null() {
        return Err(PyBufferError::new_err("NULL view in __getbuffer__"));
    }
    if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE {
        return Err(PyBufferError::new_err(
            "tenferro tensors are read-only; request a read-only buffer",
        ));
    }
    let t = match slf.get().data("buffer protocol") {
        Ok(t) => t.clone(),
        Err(e) => return Err(crate::errors::to_pyerr(slf.py(), e)),
    };
    let strided = flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES;
    if !strided && !t.is_c_contiguous() {
        return Err(PyBufferError::new_err(
            "tensor is not C-contiguous; request a strided buffer",
        ));
    }
    t.storage().mark_exported();
    let item = t.dtype().itemsize();
    let mut meta: Vec<isize> = t.shape().iter().map(|&d| d as isize).collect();
    meta.extend(t.byte_strides());
    let nd = t.ndim();
    let meta = Box::into_raw(Box::new(meta));
    // SAFETY: filling the caller's struct; `meta` stays alive until __releasebuffer__.
    unsafe {
        (*view).buf = data_address(&t) as *mut std::ffi::c_void;
        (*view).obj = slf.into_any().into_ptr();
        (*view).len = (t.numel() * item) as isize;
        (*view).readonly = 1;
        (*view).itemsize = item as isize;
        (*view).format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
            format_cstr(t.dtype()).as_ptr() as *mut _
        } else {
            std::ptr::null_mut()
        };
        (*view).ndim = nd as c_int;
        let base = (*meta).as_mut_ptr();
        (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
            base
        } else {
            std::ptr::null_mut()
        };
        (*view).strides = if strided {
            base.add(nd)
        } else {
            std::ptr::null_mut()
        };
        (*view).suboffsets = std::ptr::null_mut();
        (*view).internal = meta as *mut std::ffi::c_void;
    }
    Ok(())
}
