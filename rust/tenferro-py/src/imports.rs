//! Python objects the op paths call, resolved once at module init: NumPy's `ndarray`, `generic`,
//! `dtype` and `ndim`, the stats dataclasses of `tenferro._types`, `as_supported_ndarray` of
//! `tenferro._interop` and `contextvars.ContextVar` (none of these modules imports `_tenferro`).
//! Python modules that themselves import `_tenferro` (`tenferro.einsum`, `tenferro._indexing`)
//! hand their functions over with `_register_hooks` at their own import time instead of being
//! imported from Rust. No op path runs an import.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

/// The objects resolved at module init.
pub(crate) struct Imports {
    pub np_ndarray: Py<PyAny>,
    pub np_generic: Py<PyAny>,
    pub np_dtype: Py<PyAny>,
    pub np_ndim: Py<PyAny>,
    pub buffer_pool_stats: Py<PyAny>,
    pub cache_stats: Py<PyAny>,
    pub as_supported_ndarray: Py<PyAny>,
    pub context_var: Py<PyAny>,
}

static IMPORTS: PyOnceLock<Imports> = PyOnceLock::new();

/// Module init: resolve every object of [`Imports`].
pub(crate) fn init(py: Python<'_>) -> PyResult<()> {
    let np = PyModule::import(py, "numpy")?;
    let types = PyModule::import(py, "tenferro._types")?;
    let interop = PyModule::import(py, "tenferro._interop")?;
    let contextvars = PyModule::import(py, "contextvars")?;
    let imports = Imports {
        np_ndarray: np.getattr("ndarray")?.unbind(),
        np_generic: np.getattr("generic")?.unbind(),
        np_dtype: np.getattr("dtype")?.unbind(),
        np_ndim: np.getattr("ndim")?.unbind(),
        buffer_pool_stats: types.getattr("BufferPoolStats")?.unbind(),
        cache_stats: types.getattr("CacheStats")?.unbind(),
        as_supported_ndarray: interop.getattr("as_supported_ndarray")?.unbind(),
        context_var: contextvars.getattr("ContextVar")?.unbind(),
    };
    let _ = IMPORTS.set(py, imports);
    Ok(())
}

/// The objects resolved at module init.
///
/// # Errors
/// `RuntimeError` if module init has not run (it always runs before any call).
pub(crate) fn get(py: Python<'_>) -> PyResult<&Imports> {
    IMPORTS.get(py).ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "tenferro._tenferro: module init has not resolved its imports",
        )
    })
}

/// Einsum's interleaved-form converter and the indexing function registered by the Python modules that import `_tenferro`.
pub(crate) static EINSUM_SPLIT_ARGS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
pub(crate) static ADVANCED_GETITEM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
/// `tenferro._progress` (progress bars of long einsum path searches).
pub(crate) static EINSUM_PROGRESS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A registered hook (`InternalError` naming `op` when its module was never imported).
pub(crate) fn hook<'py>(
    py: Python<'py>,
    op: &str,
    cell: &'static PyOnceLock<Py<PyAny>>,
    name: &str,
) -> PyResult<Bound<'py, PyAny>> {
    match cell.get(py) {
        Some(f) => Ok(f.bind(py).clone()),
        None => Err(crate::errors::to_pyerr(
            py,
            tenferro_tensor::Error::internal(
                op,
                format!("the hook {name} was never registered (import tenferro first)"),
            ),
        )),
    }
}

/// Register the Python functions the extension calls back into (each at most once; a later
/// registration of the same hook is ignored). Called by `tenferro.einsum` and
/// `tenferro._indexing` when they are imported.
#[pyfunction]
#[pyo3(signature = (*, einsum_split_args=None, advanced_getitem=None, einsum_progress=None))]
pub(crate) fn _register_hooks(
    py: Python<'_>,
    einsum_split_args: Option<Py<PyAny>>,
    advanced_getitem: Option<Py<PyAny>>,
    einsum_progress: Option<Py<PyAny>>,
) {
    for (cell, f) in [
        (&EINSUM_SPLIT_ARGS, einsum_split_args),
        (&ADVANCED_GETITEM, advanced_getitem),
        (&EINSUM_PROGRESS, einsum_progress),
    ] {
        if let Some(f) = f {
            let _ = cell.set(py, f);
        }
    }
}

/// A ``tf.CacheStats`` of a plan cache's counters.
pub(crate) fn cache_stats<'py>(
    py: Python<'py>,
    s: &tenferro_runtime::CacheStats,
) -> PyResult<Bound<'py, PyAny>> {
    get(py)?.cache_stats.bind(py).call1((
        s.entries,
        s.retained_bytes,
        s.hits,
        s.misses,
        s.evictions,
        s.clears,
    ))
}
