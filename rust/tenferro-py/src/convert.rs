//! Crossing the boundary: NumPy dtypes, weak Python scalars and NumPy arrays into tensors.

use crate::errors::to_pyerr;
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};
use std::ptr::NonNull;
use tenferro_tensor::{Complex64, DType, Error, Scalar, Storage, Tensor};

static NP_DTYPES: PyOnceLock<Vec<Py<PyAny>>> = PyOnceLock::new();

/// The NumPy dtype object of `d` (`tf.float64 is np.dtype("float64")`).
pub(crate) fn np_dtype(py: Python<'_>, d: DType) -> PyResult<Bound<'_, PyAny>> {
    let all = NP_DTYPES.get_or_try_init(py, || {
        let np_dtype = crate::imports::get(py)?.np_dtype.bind(py);
        DType::ALL
            .iter()
            .map(|d| Ok(np_dtype.call1((d.name(),))?.unbind()))
            .collect::<PyResult<Vec<_>>>()
    })?;
    Ok(all[d.index()].bind(py).clone())
}

const SUPPORTED: &str = "bool, int32, int64, float32, float64, complex64, complex128";

/// Any NumPy dtype-like → a tenferro dtype (`DTypeError` naming the supported set).
pub(crate) fn dtype_from_py(py: Python<'_>, op: &str, obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    let np_dtype = crate::imports::get(py)?.np_dtype.bind(py);
    let dt = np_dtype.call1((obj,)).map_err(|_| {
        to_pyerr(
            py,
            Error::dtype(
                op,
                format!("{} is not a dtype (supported: {SUPPORTED})", repr(obj)),
            ),
        )
    })?;
    let name: String = dt.getattr("name")?.extract()?;
    DType::from_name(&name).ok_or_else(|| {
        to_pyerr(
            py,
            Error::dtype(
                op,
                format!("unsupported dtype {name} (supported: {SUPPORTED})"),
            ),
        )
    })
}

pub(crate) fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<object>".into())
}

/// A builtin Python scalar (weakly typed). NumPy scalars are *not* weak and return `None`.
pub(crate) fn weak_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    if obj.is_exact_instance_of::<PyBool>() {
        return Ok(Some(Scalar::Bool(obj.extract()?)));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return match obj.extract::<i64>() {
            Ok(v) => Ok(Some(Scalar::Int(v))),
            Err(_) => Err(PyOverflowError::new_err(format!(
                "Python integer {} out of bounds for int64",
                repr(obj)
            ))),
        };
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(Some(Scalar::Float(obj.extract()?)));
    }
    if obj.is_exact_instance_of::<PyComplex>() {
        let c: Complex64 = obj.extract()?;
        return Ok(Some(Scalar::Complex(c)));
    }
    Ok(None)
}

pub(crate) fn dtype_of_descr(kind: u8, itemsize: usize) -> Option<DType> {
    match (kind, itemsize) {
        (b'b', 1) => Some(DType::Bool),
        (b'i', 4) => Some(DType::I32),
        (b'i', 8) => Some(DType::I64),
        (b'f', 4) => Some(DType::F32),
        (b'f', 8) => Some(DType::F64),
        (b'c', 8) => Some(DType::C32),
        (b'c', 16) => Some(DType::C64),
        _ => None,
    }
}

struct KeepAlive(#[allow(dead_code)] Py<PyAny>);

/// A tensor view of a NumPy array's memory (no copy), keeping the array alive. The array must
/// have a supported dtype in native byte order, element-aligned data and strides.
pub(crate) fn view_of_ndarray(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    let arr = obj.cast::<PyUntypedArray>().map_err(|_| {
        PyValueError::new_err(format!("expected a numpy.ndarray, got {}", repr(obj)))
    })?;
    let descr = arr.dtype();
    let itemsize = descr.itemsize();
    let dtype = dtype_of_descr(descr.kind(), itemsize).ok_or_else(|| {
        let name = descr.str().map(|s| s.to_string()).unwrap_or_default();
        to_pyerr(
            py,
            Error::dtype(
                "asarray",
                format!("unsupported dtype {name} (supported: {SUPPORTED})"),
            ),
        )
    })?;
    if !descr.is_native_byteorder().unwrap_or(true) {
        return Err(PyValueError::new_err(
            "asarray: non-native byte order must be converted before sharing memory",
        ));
    }
    let shape: Vec<usize> = arr.shape().to_vec();
    let bstrides: Vec<isize> = arr.strides().to_vec();
    // SAFETY: reading the data pointer of a live ndarray.
    let data = unsafe { (*arr.as_array_ptr()).fields.data } as *mut u8;
    let numel: usize = shape.iter().product();
    let elem_align = match dtype {
        DType::C32 => 4,
        DType::C64 => 8,
        d => d.itemsize(),
    };
    if numel > 0
        && (!(data as usize).is_multiple_of(elem_align)
            || bstrides
                .iter()
                .zip(&shape)
                .any(|(&s, &d)| d > 1 && s % itemsize as isize != 0))
    {
        return Err(PyValueError::new_err(
            "asarray: the array's memory is not element-aligned; cannot share it",
        ));
    }
    let (mut lo, mut hi) = (0isize, 0isize);
    if numel > 0 {
        for (&d, &s) in shape.iter().zip(&bstrides) {
            let ext = (d as isize - 1) * s;
            if ext < 0 {
                lo += ext;
            } else {
                hi += ext;
            }
        }
    }
    let span = (hi - lo) as usize + itemsize;
    let base = NonNull::new(data.wrapping_offset(lo))
        .ok_or_else(|| PyValueError::new_err("asarray: the array has no data pointer"))?;
    // SAFETY: [lo, hi + itemsize) is the memory reachable through the array; the array object
    // is kept alive by the storage.
    let storage =
        unsafe { Storage::from_foreign(base, span, Box::new(KeepAlive(obj.clone().unbind()))) };
    let estrides: Vec<isize> = bstrides
        .iter()
        .zip(&shape)
        .map(|(&s, &d)| if d > 1 { s / itemsize as isize } else { 0 })
        .collect();
    let offset = (-lo) as usize / itemsize;
    Tensor::from_parts(dtype, shape, estrides, offset, storage)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}
