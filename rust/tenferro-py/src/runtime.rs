//! `tf.Runtime`'s methods (the core runtime: AD state). Runtime-level AD methods written in
//! Python (`variable`, `grad`, ...) are attached by `tenferro._tensor_methods`.

use crate::apply::tensor_from_object;
use crate::args::parse_timeout;
use crate::classes::{register_runtime, PyCpuEngine, PyRuntime, PySession, PyTensor};
use crate::imports;
use crate::mode::current_state;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyModule};
use tenferro_ad::compiled_defaults::{DEFAULT_CACHE_BYTES, DEFAULT_CACHE_ENTRIES};
use tenferro_eager::{EagerTensor, Runtime, Value};

#[pymethods]
impl PyRuntime {
    #[new]
    fn new() -> Self {
        PyRuntime {
            inner: Runtime::new(),
        }
    }

    /// Process-unique id of this runtime.
    #[getter]
    fn id(&self) -> u64 {
        self.inner.id()
    }

    /// An untracked tensor of this runtime holding a copy of `data`.
    fn constant(slf: &Bound<'_, Self>, data: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
        let py = slf.py();
        let rt = register_runtime(slf)?;
        let t = tensor_from_object(py, data, true)?;
        let t = Value::Tensor(t);
        let node = current_state(py)?.get().core.captured_node(&t);
        Ok(EagerTensor::new(t, rt, node).into())
    }

    /// Lend `engine` to this runtime for a ``with`` block (see ``Session``).
    ///
    /// Parameters
    /// ----------
    /// engine : CpuEngine
    ///     The engine the block's ops run on.
    /// timeout : float, optional
    ///     Seconds ``__enter__`` waits while another thread holds the engine: ``None``, ``inf``
    ///     and values above 1e9 (about 32 years) wait forever, ``0`` tries once. The wait
    ///     releases the GIL and ends on Ctrl-C (``KeyboardInterrupt``).
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     ``timeout`` is NaN or negative (here, not at ``__enter__``).
    /// tenferro.errors.ReenteredError
    ///     On entry, if this thread already holds the engine.
    /// tenferro.errors.EngineBusyError
    ///     On entry, if another thread still holds the engine after ``timeout`` seconds.
    #[pyo3(signature = (engine, timeout=None))]
    fn session(
        slf: &Bound<'_, Self>,
        engine: Py<PyCpuEngine>,
        timeout: Option<f64>,
    ) -> PyResult<PySession> {
        register_runtime(slf)?;
        let timeout = parse_timeout("session", timeout)?;
        Ok(PySession::explicit(slf.clone().unbind(), engine, timeout))
    }

    /// Statistics of this runtime's derivative caches (``graph-mode.md``, "Caches on the
    /// Runtime"): ``{"ad_transforms": CacheStats, "prepared_derivatives": CacheStats}``. The
    /// AD-transform cache holds the programs derived from compiled programs called on tracked
    /// inputs (reverse-mode split, VJP, JVP); the prepared-derivative cache holds their plans per
    /// engine. ``retained_bytes`` is a logical estimate (programs, constants), not RSS.
    ///
    /// Examples
    /// --------
    /// >>> import tenferro as tf
    /// >>> rt = tf.Runtime()
    /// >>> sorted(rt.cache_stats())
    /// ['ad_transforms', 'prepared_derivatives']
    fn cache_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let caches = self.inner.ad_caches();
        let d = PyDict::new(py);
        d.set_item(
            "ad_transforms",
            imports::cache_stats(py, &caches.transform_stats())?,
        )?;
        d.set_item(
            "prepared_derivatives",
            imports::cache_stats(py, &caches.prepared_stats())?,
        )?;
        Ok(d)
    }

    /// Bound the AD-transform cache: at most ``max_entries`` derived programs (at least 1) and
    /// about ``max_retained_bytes`` bytes; least recently used entries beyond them are evicted
    /// now and later. Defaults as tenferro-rs: 128 entries, 64 MiB.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     ``max_entries`` below 1 or ``max_retained_bytes`` negative.
    #[pyo3(signature = (max_entries=DEFAULT_CACHE_ENTRIES as i64, max_retained_bytes=DEFAULT_CACHE_BYTES as i64))]
    fn set_ad_transform_cache_limits(
        &self,
        max_entries: i64,
        max_retained_bytes: i64,
    ) -> PyResult<()> {
        let (n, b) = limits(
            "set_ad_transform_cache_limits",
            max_entries,
            max_retained_bytes,
        )?;
        self.inner.ad_caches().set_transform_limits(n, b);
        Ok(())
    }

    /// Bound the prepared-derivative cache (as ``set_ad_transform_cache_limits``).
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     ``max_entries`` below 1 or ``max_retained_bytes`` negative.
    #[pyo3(signature = (max_entries=DEFAULT_CACHE_ENTRIES as i64, max_retained_bytes=DEFAULT_CACHE_BYTES as i64))]
    fn set_prepared_derivative_cache_limits(
        &self,
        max_entries: i64,
        max_retained_bytes: i64,
    ) -> PyResult<()> {
        let (n, b) = limits(
            "set_prepared_derivative_cache_limits",
            max_entries,
            max_retained_bytes,
        )?;
        self.inner.ad_caches().set_prepared_limits(n, b);
        Ok(())
    }

    /// Empty both derivative caches and advance the runtime's epoch (part of every key): the
    /// next differentiated compiled call derives and prepares again. ``clears`` counts it.
    fn clear_caches(&self) {
        self.inner.ad_caches().clear();
    }

    fn __repr__(&self) -> String {
        format!("Runtime(id={})", self.inner.id())
    }
}

/// Checked cache limits.
fn limits(op: &str, max_entries: i64, max_bytes: i64) -> PyResult<(usize, usize)> {
    if max_entries < 1 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{op}: max_entries must be at least 1, got {max_entries}"
        )));
    }
    if max_bytes < 0 {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "{op}: max_retained_bytes must be non-negative, got {max_bytes}"
        )));
    }
    Ok((max_entries as usize, max_bytes as usize))
}

/// Clear the derivative caches of every live runtime (``tf.clear_caches``).
#[pyfunction]
pub fn _clear_runtime_caches() {
    for rt in tenferro_eager::live_runtimes() {
        rt.ad_caches().clear();
    }
}

/// Register the class of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRuntime>()?;
    m.add_function(wrap_pyfunction!(_clear_runtime_caches, m)?)?;
    Ok(())
}
