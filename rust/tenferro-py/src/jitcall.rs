//! `tf.jit`'s replay path (`graph-mode.md`: "same signature: one crossing into Rust"): a jitted
//! function's compiled graphs keyed by what its positional arguments are — each tensor's dtype
//! and shape, each Python float as a weakly typed input — and the grad mode, looked up and run
//! in one call. `tenferro._jit.Jitted` owns the full cache (pytrees, static arguments, limits,
//! statistics) and fills this one for the calls it can serve; anything else (a keyword
//! argument, a call inside a trace) answers `None` and takes the Python path. Tracked tensors
//! and functional transforms are served: the run records the `CompiledCall` node of grad of
//! jit ([`PyGraph`]'s run path).

use crate::classes::PyTensor;
use crate::graph::PyGraph;
use crate::host::PyHost;
use crate::mode::current_state;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyString, PyTuple};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tenferro_eager::{scalar_tensor, EagerTensor, Operand, IMPLICIT};
use tenferro_runtime::KeyHasher;
use tenferro_tensor::dtype::scalar_default_dtype;
use tenferro_tensor::{DType, Scalar};

/// What one positional argument is, for the key.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum ArgKey {
    Tensor(DType, Vec<usize>),
    /// A Python `float`: a weakly typed rank-0 input (its value is not part of the key).
    Float,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct CallKey {
    grad_enabled: bool,
    args: Vec<ArgKey>,
}

struct Entry {
    /// What `Jitted` computed from the function's captured values when it traced (compared
    /// with `==` against the current one; `None` for a function that captures nothing).
    captured: Py<PyAny>,
    graph: Py<PyGraph>,
    out: Out,
}

/// The output structure of a jitted function.
enum Out {
    /// One tensor, returned as is.
    One,
    /// A flat tuple of tensors, returned as a tuple.
    Tuple,
    /// Anything else: `(tree, outputs)` is returned and `Jitted` unflattens it.
    Tree(Py<PyAny>),
}

impl Out {
    fn clone_ref(&self, py: Python<'_>) -> Out {
        match self {
            Out::One => Out::One,
            Out::Tuple => Out::Tuple,
            Out::Tree(t) => Out::Tree(t.clone_ref(py)),
        }
    }
}

/// Where one function of a jitted callable keeps the values it captures (`_jit._Captures`
/// reads them in this order).
enum Source {
    /// A Python function: its closure cells' contents (`None` for an empty cell), the values of
    /// `names` in its globals dict (which had `len` names), then its defaults. A function with
    /// keyword-only defaults is not probed here.
    Function {
        f: Py<PyAny>,
        globals: Py<PyDict>,
        len: isize,
        names: Vec<Py<PyString>>,
    },
    /// A `functools.partial` without keywords: its bound arguments.
    Partial(Py<PyAny>),
}

/// The captured-values check of `tf.jit` (`graph-mode.md`: captured tensors are constants
/// with an identity check) done here instead of in Python: the captured values are read from
/// their sources and compared by identity with the values `_Captures` last keyed, whose key is
/// then the call's; any difference (or a source that changed shape) answers "unknown", and
/// Python recomputes the key and registers a new probe.
struct Probe {
    sources: Vec<Source>,
    last: Vec<Py<PyAny>>,
    key: Py<PyAny>,
}

impl Probe {
    /// Whether every captured value is the very object it was when `key` was computed.
    fn unchanged(&self, py: Python<'_>) -> bool {
        use pyo3::ffi;
        let mut last = self.last.iter().map(Py::as_ptr);
        let mut same = |p: *mut ffi::PyObject| last.next() == Some(p);
        for s in &self.sources {
            match s {
                Source::Function {
                    f,
                    globals,
                    len,
                    names,
                } => {
                    let fp = f.as_ptr();
                    // SAFETY: `fp` is a live function object (checked when the probe was
                    // registered; a function's type cannot change); with the GIL held its
                    // closure, defaults and globals are borrowed references that stay alive
                    // during this check (no Python code runs: dict lookups by str keys).
                    unsafe {
                        let clo = ffi::PyFunction_GetClosure(fp);
                        if !clo.is_null() {
                            for i in 0..ffi::PyTuple_GET_SIZE(clo) {
                                let c = ffi::PyCell_Get(ffi::PyTuple_GET_ITEM(clo, i));
                                let ok = if c.is_null() {
                                    ffi::PyErr_Clear();
                                    same(ffi::Py_None())
                                } else {
                                    let ok = same(c);
                                    ffi::Py_DECREF(c);
                                    ok
                                };
                                if !ok {
                                    return false;
                                }
                            }
                        }
                        let g = globals.as_ptr();
                        if ffi::PyDict_Size(g) != *len {
                            return false;
                        }
                        for n in names {
                            let v = ffi::PyDict_GetItem(g, n.as_ptr());
                            if v.is_null() || !same(v) {
                                return false;
                            }
                        }
                        let d = ffi::PyFunction_GetDefaults(fp);
                        if !d.is_null() {
                            for i in 0..ffi::PyTuple_GET_SIZE(d) {
                                if !same(ffi::PyTuple_GET_ITEM(d, i)) {
                                    return false;
                                }
                            }
                        }
                        let kw = ffi::PyFunction_GetKwDefaults(fp);
                        if !kw.is_null() && ffi::PyDict_Size(kw) != 0 {
                            return false;
                        }
                    }
                }
                Source::Partial(p) => {
                    let p = p.bind(py);
                    let Ok(args) = p.getattr(pyo3::intern!(py, "args")) else {
                        return false;
                    };
                    let Ok(args) = args.cast::<PyTuple>() else {
                        return false;
                    };
                    if !args.iter().all(|a| same(a.as_ptr())) {
                        return false;
                    }
                    match p.getattr(pyo3::intern!(py, "keywords")) {
                        Ok(k) if k.cast::<PyDict>().is_ok_and(|d| d.is_empty()) => {}
                        _ => return false,
                    }
                }
            }
        }
        last.next().is_none()
    }
}

/// Entries by call key (hashed with the library's fast hasher: looked up on every call).
type EntryMap = HashMap<CallKey, Vec<Entry>, std::hash::BuildHasherDefault<KeyHasher>>;

/// The replay cache of one jitted function (see the module docs).
#[pyclass(name = "_CallCache", module = "tenferro._tenferro", frozen)]
pub struct PyCallCache {
    entries: Mutex<EntryMap>,
    hits: AtomicU64,
    /// The captured-values probe (`set_probe`), if registered.
    probe: Mutex<Option<Arc<Probe>>>,
}

/// The key of `args` under the current mode, or `None` when this cache does not serve the call.
fn call_key(args: &Bound<'_, PyTuple>, grad_enabled: bool) -> Option<CallKey> {
    let mut keys = Vec::with_capacity(args.len());
    for a in args.iter() {
        if let Ok(t) = a.cast::<PyTensor>() {
            let t = t.get();
            keys.push(ArgKey::Tensor(t.value.dtype(), t.value.shape().to_vec()));
        } else if a.is_exact_instance_of::<PyFloat>() {
            keys.push(ArgKey::Float);
        } else {
            return None;
        }
    }
    Some(CallKey {
        grad_enabled,
        args: keys,
    })
}

/// The operands of a call's arguments (tensors and Python floats, as `call_key` checked).
fn arg_operands<'a>(items: &'a [Bound<'_, PyAny>]) -> PyResult<Vec<Operand<'a>>> {
    let mut ops = Vec::with_capacity(items.len());
    for a in items {
        if let Ok(t) = a.cast::<PyTensor>() {
            ops.push(Operand::Tensor(&t.get().inner));
        } else {
            ops.push(Operand::Scalar(Scalar::Float(a.extract()?)));
        }
    }
    Ok(ops)
}

fn same_capture(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> bool {
    a.is(b) || a.eq(b).unwrap_or(false)
}

impl PyCallCache {
    /// The graph and output structure stored for `args` under grad mode `grad_enabled` and
    /// `captured`, if any.
    fn lookup(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        captured: &Bound<'_, PyAny>,
        grad_enabled: bool,
    ) -> PyResult<Option<(Py<PyGraph>, Out)>> {
        let Some(key) = call_key(args, grad_enabled) else {
            return Ok(None);
        };
        // Candidates are cloned out before any Python comparison runs (never call into
        // Python while holding the lock); the same captured key object (the usual case: the
        // probe's key, or `None`) is found first, by identity, without calling Python.
        let candidates: Vec<(Py<PyAny>, Py<PyGraph>, Out)> = {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            match entries.get(&key) {
                Some(es) => {
                    if let Some(e) = es.iter().find(|e| e.captured.is(captured)) {
                        return Ok(Some((e.graph.clone_ref(py), e.out.clone_ref(py))));
                    }
                    es.iter()
                        .map(|e| {
                            (
                                e.captured.clone_ref(py),
                                e.graph.clone_ref(py),
                                e.out.clone_ref(py),
                            )
                        })
                        .collect()
                }
                None => return Ok(None),
            }
        };
        Ok(candidates
            .into_iter()
            .find(|(c, _, _)| same_capture(c.bind(py), captured))
            .map(|(_, g, o)| (g, o)))
    }
}

#[pymethods]
impl PyCallCache {
    #[new]
    fn new() -> Self {
        PyCallCache {
            entries: Mutex::new(EntryMap::default()),
            hits: AtomicU64::new(0),
            probe: Mutex::new(None),
        }
    }

    /// Register how the function's captured values are read (``sources``: per function of the
    /// callable, ``("f", function, globals, len(globals), names)`` or ``("p", partial)``, in
    /// ``_Captures.values()`` order), the values ``last`` read at the last key computation and
    /// that ``key``; ``sources=None`` removes the probe. The probe is checked by
    /// :meth:`call_probed`.
    #[pyo3(signature = (sources, last, key))]
    fn set_probe(
        &self,
        py: Python<'_>,
        sources: Option<Vec<Bound<'_, PyTuple>>>,
        last: Vec<Py<PyAny>>,
        key: Py<PyAny>,
    ) -> PyResult<()> {
        let bad = |what: &str| {
            pyo3::exceptions::PyValueError::new_err(format!("_CallCache.set_probe: {what}"))
        };
        let probe = match sources {
            None => None,
            Some(sources) => {
                let mut out = Vec::with_capacity(sources.len());
                for t in sources {
                    let kind: String = t.get_item(0)?.extract()?;
                    match (kind.as_str(), t.len()) {
                        ("f", 5) => {
                            let f = t.get_item(1)?;
                            // SAFETY: a type check of a live object.
                            if unsafe { pyo3::ffi::PyFunction_Check(f.as_ptr()) } == 0 {
                                return Err(bad("'f' sources must be Python functions"));
                            }
                            let globals = t.get_item(2)?.cast_into::<PyDict>()?.unbind();
                            let len: isize = t.get_item(3)?.extract()?;
                            let names = t
                                .get_item(4)?
                                .try_iter()?
                                .map(|n| Ok(n?.cast_into::<PyString>()?.unbind()))
                                .collect::<PyResult<Vec<_>>>()?;
                            out.push(Source::Function {
                                f: f.unbind(),
                                globals,
                                len,
                                names,
                            });
                        }
                        ("p", 2) => out.push(Source::Partial(t.get_item(1)?.unbind())),
                        _ => {
                            return Err(bad(
                                "a source is ('f', fn, globals, len, names) or ('p', partial)",
                            ))
                        }
                    }
                }
                let _ = py;
                Some(Arc::new(Probe {
                    sources: out,
                    last,
                    key,
                }))
            }
        };
        *self.probe.lock().unwrap_or_else(|e| e.into_inner()) = probe;
        Ok(())
    }

    /// :meth:`call` with the captured key of the registered probe when every captured value is
    /// unchanged; ``None`` when there is no probe, a captured value changed (the caller then
    /// computes the key in Python), or as :meth:`call` answers ``None``.
    fn call_probed(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
    ) -> PyResult<Option<Py<PyAny>>> {
        // The probe is cloned out of the lock before any Python object is read.
        let probe = self.probe.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match probe {
            Some(p) if p.unchanged(py) => self.call(py, args, p.key.bind(py)),
            _ => Ok(None),
        }
    }

    /// Run the compiled graph stored for ``args`` (a tuple of tensors and Python floats) and
    /// ``captured``: the output tensor, or ``(out_tree, outputs)``; ``None`` when there is no
    /// such entry or the call is not one this cache serves.
    fn call(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        captured: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let state = current_state(py)?;
        let mode = &state.get().core;
        if mode.trace.is_some() {
            return Ok(None);
        }
        let Some((graph, out)) = self.lookup(py, args, captured, mode.grad_enabled)? else {
            return Ok(None);
        };
        let items: Vec<Bound<'_, PyAny>> = args.iter().collect();
        let ops = arg_operands(&items)?;
        let outs = graph.get().run_operands(py, &ops, mode)?;
        self.hits.fetch_add(1, Ordering::Relaxed);
        let mut outs: Vec<Py<PyAny>> = outs
            .into_iter()
            .map(|t| Ok(Bound::new(py, t)?.into_any().unbind()))
            .collect::<PyResult<_>>()?;
        Ok(Some(match out {
            Out::One if outs.len() == 1 => outs.swap_remove(0),
            Out::One | Out::Tuple => PyTuple::new(py, outs)?.into_any().unbind(),
            Out::Tree(tree) => (tree, outs).into_pyobject(py)?.into_any().unbind(),
        }))
    }

    /// ``tf.func.value_and_grad`` of the jitted function at ``args`` with respect to the
    /// positional arguments ``argnums`` (grad of jit without the Python frame of ``tf.func``):
    /// the compiled program's joint derivative program ``(x, ȳ) → (y, x̄)``, derived from it by
    /// the rule table and cached in the runtime's derivative caches, run once with ``ȳ = 1``.
    /// ``(value, [grad, ...])``, or ``None`` when this path does not serve the call (no entry;
    /// an argument already tracked; a differentiated argument that is not a float or complex
    /// tensor; an output that is not a real scalar; inside a trace or a transform): the general
    /// path then runs, with its errors.
    fn value_and_grad(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        captured: &Bound<'_, PyAny>,
        argnums: Vec<usize>,
    ) -> PyResult<Option<(PyTensor, Vec<PyTensor>)>> {
        let state = current_state(py)?;
        let mode = &state.get().core;
        if mode.trace.is_some() || mode.capture_trace {
            return Ok(None);
        }
        let items: Vec<Bound<'_, PyAny>> = args.iter().collect();
        let mut wanted = vec![false; items.len()];
        for &i in &argnums {
            let Some(t) = items.get(i).and_then(|a| a.cast::<PyTensor>().ok()) else {
                return Ok(None);
            };
            if !t.get().value.dtype().is_inexact() {
                return Ok(None);
            }
            wanted[i] = true;
        }
        if items
            .iter()
            .any(|a| a.cast::<PyTensor>().is_ok_and(|t| t.get().node().is_some()))
        {
            return Ok(None);
        }
        let Some((graph, Out::One)) = self.lookup(py, args, captured, true)? else {
            return Ok(None);
        };
        let ops = arg_operands(&items)?;
        let host = PyHost::new(py);
        // Tensors of several runtimes (the general path re-registers them, as `tf.func` does)
        // or of a runtime other than an active session's: not served here.
        let Ok(exec) = IMPLICIT.prepare("jit", &ops, mode, &host) else {
            return Ok(None);
        };
        let call = graph.get().call(py)?;
        // A real scalar output only (else the general path raises or seeds as it does).
        let metas = host.finish(call.output_metas())?;
        let dtype = match metas.as_slice() {
            [(d, s)] if s.is_empty() && d.is_inexact() && !d.is_complex() => *d,
            _ => return Ok(None),
        };
        let mut data = Vec::with_capacity(ops.len() + 1);
        for o in &ops {
            data.push(match o {
                Operand::Tensor(t) => host.finish(t.data("jit").cloned())?,
                Operand::Array(t) => t.clone(),
                Operand::Scalar(s) => {
                    host.finish(scalar_tensor("jit", *s, scalar_default_dtype(s.kind())))?
                }
            });
        }
        data.push(host.finish(scalar_tensor("grad", Scalar::Float(1.0), dtype))?);
        // The joint forward-and-backward program of the compiled one, seeded with 1.
        let caches = exec.runtime().ad_caches();
        let joint = host.finish(caches.joint(&call, &wanted))?;
        let plan = host.finish(caches.prepared(&joint, exec.engine().as_ref()))?;
        let outs = host.finish(exec.run_compiled(call.name(), &plan, data, &host))?;
        let rt = exec.runtime().clone();
        // The engine borrow ends before the results are handed back.
        drop(exec);
        let mut outs = outs.into_iter();
        let Some(value) = outs.next() else {
            return Ok(None);
        };
        let value: PyTensor = EagerTensor::of_data(value, rt.clone(), None).into();
        let grads: Vec<PyTensor> = outs
            .map(|g| EagerTensor::of_data(g, rt.clone(), None).into())
            .collect();
        if grads.len() != argnums.len() {
            return Ok(None);
        }
        self.hits.fetch_add(1, Ordering::Relaxed);
        Ok(Some((value, grads)))
    }

    /// Store ``graph`` for calls like ``args`` under the current grad mode and ``captured``;
    /// ``out`` is ``"one"`` (the function returns one tensor), ``"tuple"`` (a flat tuple of
    /// tensors) or ``"tree"`` (anything else; then ``out_tree`` is its tree, and calls return
    /// ``(out_tree, outputs)``). Returns whether the call is one this cache serves (else
    /// nothing is stored).
    #[pyo3(signature = (args, captured, graph, out, out_tree=None))]
    fn insert(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        captured: &Bound<'_, PyAny>,
        graph: Py<PyGraph>,
        out: &str,
        out_tree: Option<Py<PyAny>>,
    ) -> PyResult<bool> {
        let out = match (out, out_tree) {
            ("one", _) => Out::One,
            ("tuple", _) => Out::Tuple,
            ("tree", Some(t)) => Out::Tree(t),
            (o, _) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "_CallCache.insert: out must be 'one', 'tuple' or 'tree' with a tree, got {o:?}"
                )))
            }
        };
        let state = current_state(py)?;
        let mode = &state.get().core;
        if mode.trace.is_some() {
            return Ok(false);
        }
        let Some(key) = call_key(args, mode.grad_enabled) else {
            return Ok(false);
        };
        let mut es = self
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key)
            .unwrap_or_default();
        es.retain(|e| !same_capture(e.captured.bind(py), captured));
        es.push(Entry {
            captured: captured.clone().unbind(),
            graph,
            out,
        });
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, es);
        Ok(true)
    }

    /// Drop every entry (the owner's cache evicted or cleared traces); the probe stays.
    fn clear(&self) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Number of entries.
    fn __len__(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(Vec::len)
            .sum()
    }

    /// Calls served so far.
    #[getter]
    fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }
}
