//! `tenferro._tenferro`: the only PyO3 crate. Thin wrappers over the core crates, NumPy and
//! DLPack interop, the mapping of core errors to `tenferro.errors`, and module init.

mod apply;
mod args;
mod autodiff;
mod classes;
mod context;
mod convert;
mod custom;
mod defaults;
mod dlpack;
mod einsum;
mod einsum_search;
mod engine;
mod errors;
mod graph;
mod host;
mod imports;
mod jitcall;
mod mode;
mod runtime;
mod session;
mod tensor;

use pyo3::prelude::*;

/// One catalog row for Python: name, arity, family, admitted dtypes, whether the CPU engine has
/// a kernel for it.
type CatalogRow = (String, i8, String, Vec<Py<PyAny>>, bool);

/// Names, arities, families and admitted dtypes of every primitive of the catalog, and whether
/// the CPU engine executes it (capabilities are the engine's, not the catalog's; asked without
/// building an engine, so importing `tenferro` fixes no thread count).
#[pyfunction]
fn _catalog(py: Python<'_>) -> PyResult<Vec<CatalogRow>> {
    tenferro_ops::CATALOG
        .iter()
        .map(|r| {
            let dtypes = r
                .dtypes
                .dtypes()
                .into_iter()
                .map(|d| convert::np_dtype(py, d).map(Bound::unbind))
                .collect::<PyResult<Vec<_>>>()?;
            Ok((
                r.name.to_string(),
                r.arity,
                r.family.name().to_string(),
                dtypes,
                engine::cpu_supports(r.kind),
            ))
        })
        .collect()
}

/// Wrap a NumPy array (supported dtype, native byte order) as a tensor of `runtime`, sharing
/// its memory when `copy` is false.
#[pyfunction]
fn _from_numpy(
    py: Python<'_>,
    array: &Bound<'_, PyAny>,
    copy: bool,
    runtime: Option<&Bound<'_, classes::PyRuntime>>,
) -> PyResult<classes::PyTensor> {
    let rt = defaults::runtime_arg(py, runtime)?;
    let view = convert::view_of_ndarray(py, array)?;
    let t = if copy {
        apply::contiguous_copy(py, &view)?
    } else {
        view
    };
    Ok(classes::PyTensor::new(t, rt))
}

/// A compact tensor of `shape` filled with the Python scalar `value` (`dtype=None`: the
/// scalar's NumPy default). Sizes are checked: too large → `MemoryError`.
#[pyfunction]
#[pyo3(signature = (shape, value, dtype=None, runtime=None))]
fn _full(
    py: Python<'_>,
    shape: Vec<i64>,
    value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    runtime: Option<&Bound<'_, classes::PyRuntime>>,
) -> PyResult<classes::PyTensor> {
    let dims = shape
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "full: negative dimensions are not allowed, got {shape:?}"
            ))
        })?;
    let scalar = convert::weak_scalar(value)?.ok_or_else(|| {
        pyo3::exceptions::PyTypeError::new_err(format!(
            "full: fill value must be a Python scalar, got {}",
            convert::repr(value)
        ))
    })?;
    let dt = match dtype {
        Some(d) if !d.is_none() => convert::dtype_from_py(py, "full", d)?,
        _ => tenferro_tensor::dtype::scalar_default_dtype(scalar.kind()),
    };
    let rt = defaults::runtime_arg(py, runtime)?;
    let one =
        tenferro_eager::scalar_tensor("full", scalar, dt).map_err(|e| errors::to_pyerr(py, e))?;
    let view = one
        .broadcast_to_view(&dims)
        .map_err(|e| errors::to_pyerr(py, e))?;
    let t = apply::contiguous_copy(py, &view)?;
    Ok(classes::PyTensor::new(t, rt))
}

#[pymodule]
fn _tenferro(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The importing thread's CPU mask is "the main thread's snapshot" that pools span.
    tenferro_cpu::record_main_snapshot();
    let py = m.py();
    errors::init(py)?;
    imports::init(py)?;
    m.add_class::<classes::PyTensor>()?;
    runtime::register(m)?;
    engine::register(m)?;
    session::register(m)?;
    mode::register(m)?;
    context::register(m)?;
    defaults::register(m)?;
    autodiff::register(m)?;
    graph::register(m)?;
    custom::register(m)?;
    m.add_class::<jitcall::PyCallCache>()?;
    m.add_function(wrap_pyfunction!(_catalog, m)?)?;
    m.add_function(wrap_pyfunction!(args::_normalize_axes, m)?)?;
    m.add_function(wrap_pyfunction!(einsum::_einsum, m)?)?;
    einsum_search::install();
    m.add_function(wrap_pyfunction!(einsum::_einsum_path, m)?)?;
    m.add_class::<einsum::PyEinsumPathInfo>()?;
    m.add_function(wrap_pyfunction!(_from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(_full, m)?)?;
    m.add_function(wrap_pyfunction!(imports::_register_hooks, m)?)?;
    Ok(())
}
