//! Argument parsing of the binding: Python values → core op parameters (axes, shapes, configs,
//! timeouts). The one rule for axis parameters (`docs/ops.md`): entries may be negative
//! (counted from the end of the rank they index); out-of-range or repeated entries are
//! `AxisError`s that name the parameter and quote the values as given.

use crate::classes::PyTensor;
use crate::convert::repr;
use crate::errors::{to_pyerr, PyResultExt};
use crate::imports;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::time::Duration;
use tenferro_ops::{CompareDir, DotGeneralConfig};
use tenferro_tensor::shape::normalize_axes;
use tenferro_tensor::Error;

/// Timeouts above this many seconds (about 32 years) wait forever: `Instant + Duration` must not
/// overflow, and no caller can tell the difference.
const MAX_TIMEOUT_S: f64 = 1e9;

/// Validate a ``timeout`` argument (seconds): ``None``, ``+inf`` and values above
/// [`MAX_TIMEOUT_S`] wait forever, other values ``≥ 0`` wait that long (``0``: try once).
///
/// # Errors
/// ``ValueError`` for NaN and negative values (``-inf`` included), naming `op` and the value.
pub(crate) fn parse_timeout(op: &str, timeout: Option<f64>) -> PyResult<Option<Duration>> {
    match timeout {
        None => Ok(None),
        Some(t) if t.is_nan() || t < 0.0 => Err(PyValueError::new_err(format!(
            "{op}: timeout must be a number of seconds >= 0 (or None to wait forever), got {t}"
        ))),
        Some(t) if t > MAX_TIMEOUT_S => Ok(None),
        Some(t) => Ok(Some(Duration::from_secs_f64(t))),
    }
}

pub(crate) fn parse_axes(
    py: Python<'_>,
    op: &str,
    axes: Option<&Bound<'_, PyAny>>,
    ndim: usize,
) -> PyResult<Vec<usize>> {
    let raw: Vec<i64> = match axes {
        None => return Ok((0..ndim).collect()),
        Some(a) if a.is_none() => return Ok((0..ndim).collect()),
        Some(a) => {
            if let Ok(i) = a.extract::<i64>() {
                vec![i]
            } else {
                a.extract::<Vec<i64>>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{op}: axes must be None, an int or a sequence of ints, got {}",
                        repr(a)
                    ))
                })?
            }
        }
    };
    normalize_axes(op, &raw, ndim).py(py)
}

pub(crate) fn parse_shape(op: &str, shape: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if let Ok(n) = shape.extract::<i64>() {
        return to_usize_dims(op, &[n]);
    }
    let v: Vec<i64> = shape.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: shape must be an int or a sequence of ints, got {}",
            repr(shape)
        ))
    })?;
    to_usize_dims(op, &v)
}

pub(crate) fn to_usize_dims(op: &str, v: &[i64]) -> PyResult<Vec<usize>> {
    v.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                PyValueError::new_err(format!(
                    "{op}: negative dimensions are not allowed, got {v:?}"
                ))
            })
        })
        .collect()
}

pub(crate) fn parse_compare_dir(dir: &Bound<'_, PyAny>) -> PyResult<CompareDir> {
    let name: Option<String> = dir
        .extract::<String>()
        .ok()
        .or_else(|| dir.getattr("name").ok().and_then(|n| n.extract().ok()));
    name.as_deref().and_then(CompareDir::parse).ok_or_else(|| {
        PyValueError::new_err(format!(
            "compare: direction must be one of EQ, NE, LT, LE, GT, GE (case-insensitive), got {}",
            repr(dir)
        ))
    })
}

pub(crate) fn ndim_of(py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(t) = a.cast::<PyTensor>() {
        return Ok(t.get().value.ndim());
    }
    imports::get(py)?.np_ndim.bind(py).call1((a,))?.extract()
}

pub(crate) fn attr_dims(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
    field: &str,
) -> PyResult<Vec<usize>> {
    let v = cfg.getattr(field).map_err(|_| {
        PyTypeError::new_err(format!("{op}: config {} has no field {field}", repr(cfg)))
    })?;
    let raw: Vec<i64> = v.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: {field} must be a sequence of ints, got {}",
            repr(&v)
        ))
    })?;
    raw.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                to_pyerr(
                    py,
                    Error::axis(op, format!("{field} {raw:?} has a negative entry {d}")),
                )
            })
        })
        .collect()
}

pub(crate) fn attr_i64s(op: &str, cfg: &Bound<'_, PyAny>, field: &str) -> PyResult<Vec<i64>> {
    let v = cfg.getattr(field).map_err(|_| {
        PyTypeError::new_err(format!("{op}: config {} has no field {field}", repr(cfg)))
    })?;
    v.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: {field} must be a sequence of ints, got {}",
            repr(&v)
        ))
    })
}

/// `index_vector_dim` of a gather/scatter config for `indices` of rank `rank`: in `0..=rank`
/// (`rank` means an implicit trailing index vector of length 1), or negative, counted from the
/// end of the indices' axes (`-1` is the last axis).
pub(crate) fn index_vector_dim_of(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
    rank: usize,
) -> PyResult<usize> {
    // A config without the field is a `TypeError` (as a field of the wrong type), never an
    // `AttributeError`.
    let v: i64 = cfg
        .getattr("index_vector_dim")
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "{op}: config {} has no field index_vector_dim",
                repr(cfg)
            ))
        })?
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{op}: index_vector_dim must be an int")))?;
    let n = rank as i64;
    if v < -n || v > n {
        return Err(to_pyerr(py, Error::axis(op, format!("index_vector_dim {v} is out of bounds for indices of rank {rank} (allowed: -{rank}..={rank})"),
        )));
    }
    Ok(if v < 0 { v + n } else { v } as usize)
}

/// Axis-list field `field` of a primitive's config: entries index the dimensions of a tensor of
/// rank `rank` and may be negative (counted from the end, as `reduce_sum`'s axes); an entry out
/// of range or repeated is an `AxisError` that quotes the entries as the user gave them.
pub(crate) fn attr_axes(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
    field: &str,
    rank: usize,
) -> PyResult<Vec<usize>> {
    let raw = attr_i64s(op, cfg, field)?;
    axes_arg(py, op, field, &raw, rank)
}

/// The one rule for axis and permutation parameters of primitives (`ops.md`): each entry may be
/// negative (counted from the end of the rank it indexes); out of range or repeated entries are
/// `AxisError`s naming the parameter and quoting the values as given.
pub(crate) fn axes_arg(
    py: Python<'_>,
    op: &str,
    what: &str,
    raw: &[i64],
    rank: usize,
) -> PyResult<Vec<usize>> {
    tenferro_tensor::shape::normalize_axes(op, raw, rank)
        .map_err(|e| {
            let msg = e.to_string();
            let detail = msg.strip_prefix(&format!("{op}: ")).unwrap_or(&msg);
            tenferro_tensor::Error::axis(op, format!("{what} {raw:?}: {detail}"))
        })
        .py(py)
}

/// `DotGeneralConfig` of a user call: dims may be negative, relative to each operand's rank.
pub(crate) fn dot_config_for(
    py: Python<'_>,
    op: &str,
    cfg: &Bound<'_, PyAny>,
    lhs: &Bound<'_, PyAny>,
    rhs: &Bound<'_, PyAny>,
) -> PyResult<DotGeneralConfig> {
    let (ln, rn) = (ndim_of(py, lhs)?, ndim_of(py, rhs)?);
    let c = DotGeneralConfig {
        lhs_contracting_dims: attr_axes(py, op, cfg, "lhs_contracting_dims", ln)?,
        rhs_contracting_dims: attr_axes(py, op, cfg, "rhs_contracting_dims", rn)?,
        lhs_batch_dims: attr_axes(py, op, cfg, "lhs_batch_dims", ln)?,
        rhs_batch_dims: attr_axes(py, op, cfg, "rhs_batch_dims", rn)?,
    };
    // A role overlap that only shows once negative entries are normalised, quoted as given.
    for side in ["lhs", "rhs"] {
        let (batch, contracting) = if side == "lhs" {
            (&c.lhs_batch_dims, &c.lhs_contracting_dims)
        } else {
            (&c.rhs_batch_dims, &c.rhs_contracting_dims)
        };
        if let Some(d) = batch.iter().find(|d| contracting.contains(d)) {
            let bf = format!("{side}_batch_dims");
            let cf = format!("{side}_contracting_dims");
            return Err(to_pyerr(py, Error::axis(op, format!("{bf} {:?} and {cf} {:?} both name dimension {d} of the {side} operand (rank {})",
                    attr_i64s(op, cfg, &bf)?,
                    attr_i64s(op, cfg, &cf)?,
                    if side == "lhs" { ln } else { rn },
                ),
            )));
        }
    }
    Ok(c)
}

/// A dimension-number field StableHLO wants increasing: sorted once normalised, else an
/// `AxisError` quoting the entries as given.
pub(crate) fn sorted_axes(
    py: Python<'_>,
    op: &str,
    field: &str,
    raw: &[i64],
    rank: usize,
) -> PyResult<Vec<usize>> {
    let v = axes_arg(py, op, field, raw, rank)?;
    if v.windows(2).any(|w| w[0] >= w[1]) {
        return Err(to_pyerr(py, Error::axis(op, format!("{field} {raw:?} must be increasing (StableHLO), counting negative entries from the end of rank {rank}"),
        )));
    }
    Ok(v)
}

/// The two axes of `extract_diag`/`embed_diag`, normalised; naming one axis twice is an
/// `AxisError` quoting both as given.
pub(crate) fn diag_axes(
    py: Python<'_>,
    op: &str,
    axis_a: i64,
    axis_b: i64,
    rank: usize,
) -> PyResult<(usize, usize)> {
    let (a, b) = (
        axis_of(py, op, axis_a, rank)?,
        axis_of(py, op, axis_b, rank)?,
    );
    if a == b {
        return Err(to_pyerr(py, Error::axis(op, format!("axes ({axis_a}, {axis_b}) both name axis {a} of rank {rank}; they must be distinct"),
        )));
    }
    Ok((a, b))
}

pub(crate) fn axis_of(py: Python<'_>, op: &str, axis: i64, ndim: usize) -> PyResult<usize> {
    tenferro_tensor::shape::normalize_axis(op, axis, ndim).py(py)
}

pub(crate) fn real_factor(op: &str, f: &Bound<'_, PyAny>) -> PyResult<f64> {
    if f.is_instance_of::<pyo3::types::PyComplex>() {
        return Err(PyTypeError::new_err(format!(
            "{op}: factor must be real, got {}",
            repr(f)
        )));
    }
    f.extract::<f64>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{op}: factor must be a real number, got {}",
            repr(f)
        ))
    })
}

/// `operator.index(obj)` as `i64`; an integer beyond `i64` is `None` (out of every axis range).
fn index_i64(obj: &Bound<'_, PyAny>) -> PyResult<(Option<i64>, String)> {
    let py = obj.py();
    // SAFETY: `obj` is a live object; `PyNumber_Index` returns a new reference or NULL with an
    // exception set (Python's `operator.index` semantics and messages).
    let i = unsafe { Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyNumber_Index(obj.as_ptr())) }?;
    Ok((i.extract::<i64>().ok(), i.str()?.to_string()))
}

/// NumPy's ``normalize_axis_tuple`` for the NumPy-named functions, by the core's axis rule
/// (`docs/ops.md`): ``None`` means every axis; entries (an int or a sequence of ints, anything
/// with ``__index__``) count from the end when negative.
///
/// Raises
/// ------
/// TypeError
///     An entry is not an integer (``operator.index``'s message).
/// tenferro.errors.AxisError
///     An entry out of range, or repeated unless ``allow_duplicates``.
#[pyfunction]
#[pyo3(signature = (op, axis, ndim, allow_duplicates=false))]
pub fn _normalize_axes<'py>(
    py: Python<'py>,
    op: &str,
    axis: &Bound<'py, PyAny>,
    ndim: usize,
    allow_duplicates: bool,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    if axis.is_none() {
        return pyo3::types::PyTuple::new(py, 0..ndim);
    }
    let items: Vec<Bound<'py, PyAny>> = if axis.is_instance_of::<pyo3::types::PyTuple>()
        || axis.is_instance_of::<pyo3::types::PyList>()
    {
        axis.try_iter()?.collect::<PyResult<_>>()?
    } else {
        vec![axis.clone()]
    };
    let mut raw = Vec::with_capacity(items.len());
    for it in &items {
        match index_i64(it)? {
            (Some(i), _) => raw.push(i),
            (None, text) => {
                return Err(to_pyerr(
                    py,
                    Error::axis(
                        op,
                        format!("axis {text} is out of bounds for array of dimension {ndim}"),
                    ),
                ))
            }
        }
    }
    let out = if allow_duplicates {
        raw.iter()
            .map(|&a| tenferro_tensor::shape::normalize_axis(op, a, ndim))
            .collect::<tenferro_tensor::Result<Vec<usize>>>()
    } else {
        normalize_axes(op, &raw, ndim)
    }
    .py(py)?;
    pyo3::types::PyTuple::new(py, out)
}
