//! `tf.einsum` / `s.einsum` and `tf.einsum_path`: one crossing into the PyO3-free
//! `tenferro-einsum` crate, which parses, plans, lowers (cached as a `Program` in the executing
//! engine's plan cache) and runs the contraction through the eager core.
//!
//! This file only converts arguments: the `optimize=` object into
//! [`tenferro_einsum::Optimize`] (names, paths, nested-tuple trees; an opt_einsum
//! `PathOptimizer` instance is called here with opt_einsum's `(inputs, output, size_dict)` and
//! its path used), `minimize=`, and the interleaved form through `tenferro.einsum._split_args`.

use crate::classes::{PySession, PyTensor};
use crate::errors::PyResultExt;
use crate::host::PyHost;
use crate::imports::{hook, EINSUM_SPLIT_ARGS};
use crate::mode::current_state;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySequence, PyString, PyTuple,
};
use tenferro_einsum::info::PathPlan;
use tenferro_einsum::{py_repr, Label, Minimize, Optimize, Parsed, Tree, ACCEPTED};
use tenferro_tensor::{DType, Error};

fn einsum_err(subscripts: &str, what: String) -> Error {
    Error::einsum(
        "einsum",
        format!("subscripts {}: {what}", py_repr(subscripts)),
    )
}

fn repr(o: &Bound<'_, PyAny>) -> String {
    o.repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "?".to_string())
}

/// A non-negative Python int (not a bool), or `None`.
fn index(o: &Bound<'_, PyAny>) -> Option<usize> {
    if o.is_instance_of::<PyBool>() {
        return None;
    }
    if o.is_instance_of::<PyInt>() || o.hasattr("__index__").unwrap_or(false) {
        o.extract::<usize>().ok()
    } else {
        None
    }
}

/// The planner of `optimize=`: `Ok(Err(callable))` for an opt_einsum `PathOptimizer`-like
/// object, called once the subscripts are parsed.
fn optimize_of<'py>(
    subscripts: &str,
    n: usize,
    optimize: &Bound<'py, PyAny>,
) -> Result<std::result::Result<Optimize, Bound<'py, PyAny>>, Error> {
    if optimize.is_none() {
        return Ok(Ok(Optimize::LeftToRight));
    }
    if let Ok(b) = optimize.cast::<PyBool>() {
        return Ok(Ok(if b.is_true() {
            Optimize::Greedy
        } else {
            Optimize::LeftToRight
        }));
    }
    if let Ok(s) = optimize.cast::<PyString>() {
        let name = s.to_str().unwrap_or("");
        return Optimize::from_name(name).map(Ok).ok_or_else(|| {
            einsum_err(
                subscripts,
                format!("unknown optimize {} ({ACCEPTED})", py_repr(name)),
            )
        });
    }
    if let Some(o) = crate::einsum_search::anneal_of(subscripts, optimize)? {
        return Ok(Ok(Optimize::Anneal(o)));
    }
    let invalid = || {
        einsum_err(
            subscripts,
            format!("invalid optimize {} ({ACCEPTED})", repr(optimize)),
        )
    };
    let Ok(seq) = optimize.cast::<PySequence>() else {
        if optimize.is_callable()
            && !optimize.is_instance_of::<PyInt>()
            && optimize.hasattr("__call__").unwrap_or(false)
        {
            return Ok(Err(optimize.clone()));
        }
        return Err(invalid());
    };
    let items: Vec<Bound<'py, PyAny>> = seq
        .try_iter()
        .map_err(|_| invalid())?
        .collect::<PyResult<_>>()
        .map_err(|_| invalid())?;
    // a nested-tuple tree: an int at the top, or a sequence inside an entry
    let nested = |o: &Bound<'py, PyAny>| -> bool {
        o.cast::<PySequence>().is_ok_and(|s| {
            !o.is_instance_of::<PyString>()
                && s.try_iter().is_ok_and(|it| {
                    it.flatten()
                        .any(|x| x.cast::<PySequence>().is_ok() && !x.is_instance_of::<PyString>())
                })
        })
    };
    let is_tree = !items.is_empty()
        && !items[0].is_instance_of::<PyString>()
        && items.iter().any(|o| index(o).is_some() || nested(o));
    if is_tree {
        fn tree(subscripts: &str, o: &Bound<'_, PyAny>) -> Result<Tree, Error> {
            if let Some(k) = index(o) {
                return Ok(Tree::Leaf(k));
            }
            let bad = || {
                einsum_err(
                    subscripts,
                    format!(
                        "invalid contraction tree node {} (ints and tuples of them)",
                        repr(o)
                    ),
                )
            };
            if o.is_instance_of::<PyString>() {
                return Err(bad());
            }
            let seq = o.cast::<PySequence>().map_err(|_| bad())?;
            let ch = seq
                .try_iter()
                .map_err(|_| bad())?
                .map(|c| c.map_err(|_| bad()).and_then(|c| tree(subscripts, &c)))
                .collect::<Result<Vec<_>, Error>>()?;
            Ok(Tree::Node(ch))
        }
        return tree(subscripts, optimize).map(|t| Ok(Optimize::Tree(t)));
    }
    if let Some(limited) = memory_limited(subscripts, &items)? {
        return Ok(Ok(limited));
    }
    let mut entries = &items[..];
    if let Some(first) = items.first() {
        if let Ok(s) = first.cast::<PyString>() {
            if s.to_str().unwrap_or("") != "einsum_path" {
                return Err(einsum_err(
                    subscripts,
                    format!(
                        "invalid path entry 0: {} (a NumPy path starts with 'einsum_path')",
                        repr(first)
                    ),
                ));
            }
            entries = &items[1..];
        }
    }
    let mut path = Vec::with_capacity(entries.len());
    let mut remaining = n;
    for (p, e) in entries.iter().enumerate() {
        let Ok(es) = e.cast::<PySequence>() else {
            return Err(einsum_err(
                subscripts,
                format!("invalid path entry {p}: {} is not a tuple", repr(e)),
            ));
        };
        let bad = || {
            einsum_err(
                subscripts,
                format!(
                    "invalid path entry {p}: {} (distinct indices in [0, {remaining}) expected)",
                    repr(e)
                ),
            )
        };
        if e.is_instance_of::<PyString>() {
            return Err(bad());
        }
        let mut idx = Vec::new();
        for k in es.try_iter().map_err(|_| bad())? {
            let k = k.map_err(|_| bad())?;
            idx.push(index(&k).ok_or_else(bad)?);
        }
        remaining = (remaining + 1).saturating_sub(idx.len());
        path.push(idx);
    }
    // Flat tuples naming every operand exactly once, in more than one entry, are a tree of
    // depth two (`((0, 1), (2, 3))`): as a linear path they can never be valid.
    let mut leaves: Vec<usize> = path.concat();
    leaves.sort_unstable();
    if path.len() > 1
        && items[0].cast::<PyString>().is_err()
        && leaves == (0..n).collect::<Vec<_>>()
    {
        let nodes = path
            .into_iter()
            .map(|e| Tree::Node(e.into_iter().map(Tree::Leaf).collect()))
            .collect();
        return Ok(Ok(Optimize::Tree(Tree::Node(nodes))));
    }
    Ok(Ok(Optimize::Path(path)))
}

/// NumPy's `(name, memory_limit)` (a name and an int or float), or `None` for other sequences.
fn memory_limited(subscripts: &str, items: &[Bound<'_, PyAny>]) -> Result<Option<Optimize>, Error> {
    let [name, limit] = items else {
        return Ok(None);
    };
    let Ok(name) = name.cast::<PyString>() else {
        return Ok(None);
    };
    let name = name.to_str().unwrap_or("");
    let numeric = limit.is_instance_of::<PyInt>() || limit.is_instance_of::<PyFloat>();
    if name == "einsum_path" || limit.is_instance_of::<PyBool>() || !numeric {
        return Ok(None);
    }
    let inner = Optimize::from_name(name).ok_or_else(|| {
        einsum_err(
            subscripts,
            format!("unknown optimize {} ({ACCEPTED})", py_repr(name)),
        )
    })?;
    // as NumPy's int(memory_limit); a negative limit admits no intermediate, as 0
    let elements = if let Ok(v) = limit.extract::<u128>() {
        v
    } else if let Ok(v) = limit.extract::<i128>() {
        v.max(0) as u128
    } else if limit.is_instance_of::<PyInt>() {
        u128::MAX // beyond 2**128: no limit in practice
    } else {
        let f: f64 = limit.extract().unwrap_or(f64::NAN);
        if f.is_nan() {
            return Err(einsum_err(
                subscripts,
                format!(
                    "invalid memory_limit {} (a number of elements)",
                    repr(limit)
                ),
            ));
        }
        // saturating, truncating toward zero as int()
        f as u128
    };
    Ok(Some(Optimize::Limited(Box::new(inner), elements)))
}

fn minimize_of(subscripts: &str, m: Option<&Bound<'_, PyAny>>) -> Result<Minimize, Error> {
    let Some(m) = m else {
        return Ok(Minimize::Flops);
    };
    match m.cast::<PyString>().ok().and_then(|s| s.to_str().ok()) {
        Some("flops") => Ok(Minimize::Flops),
        Some("size") => Ok(Minimize::Size),
        Some("combo") => Ok(Minimize::Combo),
        _ => Err(einsum_err(
            subscripts,
            format!("unknown minimize {} ('flops', 'size' or 'combo')", repr(m)),
        )),
    }
}

/// The names opt_einsum-style optimizers see for `labels`: a label's own character; the
/// ellipsis axes private-use code points from U+F0000 on, skipping any the subscripts use as
/// labels (so the two never collide).
fn label_strs(labels: &[Label]) -> Vec<String> {
    let used: std::collections::HashSet<char> = labels
        .iter()
        .filter_map(|l| match l {
            Label::Char(c) => Some(*c),
            Label::Ell(_) => None,
        })
        .collect();
    let mut next = 0xF0000u32;
    labels
        .iter()
        .map(|l| match l {
            Label::Char(c) => c.to_string(),
            Label::Ell(_) => loop {
                let c = char::from_u32(next).unwrap_or('\u{FFFD}');
                next += 1;
                if !used.contains(&c) {
                    break c.to_string();
                }
            },
        })
        .collect()
}

/// Call an opt_einsum `PathOptimizer` (or any callable with its signature) on `parsed`.
fn custom_path(
    py: Python<'_>,
    parsed: &Parsed,
    optimizer: &Bound<'_, PyAny>,
) -> PyResult<Vec<Vec<usize>>> {
    let net = tenferro_einsum::network(parsed);
    let names = label_strs(&parsed.labels);
    let set = |ids: &[usize]| -> PyResult<Bound<'_, PyFrozenSet>> {
        PyFrozenSet::new(py, ids.iter().map(|&i| names[i].as_str()))
    };
    let inputs = PyList::empty(py);
    for t in &net.inputs {
        inputs.append(set(t)?)?;
    }
    let output = set(&net.output)?;
    let sizes = PyDict::new(py);
    for (name, &size) in names.iter().zip(&parsed.sizes) {
        sizes.set_item(name, size)?;
    }
    let res = optimizer.call1((inputs, output, sizes))?;
    let bad = || {
        crate::errors::to_pyerr(
            py,
            einsum_err(
                &parsed.subscripts,
                format!("the optimizer {} returned no path", repr(optimizer)),
            ),
        )
    };
    let mut path = Vec::new();
    for e in res.try_iter().map_err(|_| bad())? {
        let e = e?;
        let mut idx = Vec::new();
        for k in e.try_iter().map_err(|_| bad())? {
            idx.push(index(&k?).ok_or_else(bad)?);
        }
        path.push(idx);
    }
    Ok(path)
}

/// The subscripts as UTF-8: a lone surrogate (`'\ud800'`, which no label can be) is an
/// `EinsumError` naming it and its position. Only a failing conversion costs more than
/// `to_str`.
fn subscripts_str<'a>(py: Python<'_>, s: &'a Bound<'_, PyString>) -> PyResult<&'a str> {
    s.to_str().or_else(|e| {
        let units: Vec<u8> = s
            .call_method1("encode", ("utf-32-le", "surrogatepass"))
            .and_then(|b| b.extract())
            .map_err(|_| e)?;
        let found = units
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .enumerate()
            .find(|(_, u)| (0xD800..0xE000).contains(u));
        let shown = s.repr().map_or_else(|_| "?".to_string(), |r| r.to_string());
        let what = match found {
            Some((pos, u)) => format!(
                "invalid label '\\u{u:04x}' at position {pos} (a lone surrogate is not a \
                 character)"
            ),
            None => "not valid Unicode".to_string(),
        };
        Err(crate::errors::to_pyerr(
            py,
            Error::einsum("einsum", format!("subscripts {shown}: {what}")),
        ))
    })
}

/// Subscripts and operands of a call: `(subscripts, *operands)` or the interleaved form
/// (converted by `tenferro.einsum._split_args`).
fn split<'py>(
    py: Python<'py>,
    operands: &Bound<'py, PyTuple>,
) -> PyResult<(Bound<'py, PyString>, Vec<Bound<'py, PyAny>>)> {
    if let Ok(first) = operands.get_item(0) {
        if let Ok(s) = first.cast::<PyString>() {
            return Ok((s.clone(), operands.iter().skip(1).collect()));
        }
    }
    let split = hook(py, "einsum", &EINSUM_SPLIT_ARGS, "_split_args")?.call1((operands,))?;
    let (subscripts, raw): (Bound<'py, PyString>, Bound<'py, PyList>) = split.extract()?;
    Ok((subscripts, raw.iter().collect()))
}

/// `tf.einsum` / `s.einsum` on `session`: `operands` is the positional tuple (subscripts first,
/// or the interleaved form).
#[pyfunction]
#[pyo3(signature = (session, operands, optimize, minimize=None))]
pub fn _einsum(
    py: Python<'_>,
    session: &PySession,
    operands: &Bound<'_, PyTuple>,
    optimize: &Bound<'_, PyAny>,
    minimize: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let (subscripts, items) = split(py, operands)?;
    let subs = subscripts_str(py, &subscripts)?;
    let n = items.len();
    let opt = optimize_of(subs, n, optimize).py(py)?;
    let min = minimize_of(subs, minimize).py(py)?;
    let refs: Vec<&Bound<'_, PyAny>> = items.iter().collect();
    let ops = crate::apply::operands(py, &refs)?;
    let opt = match opt {
        Ok(o) => o,
        Err(optimizer) => {
            let shapes: Vec<Vec<usize>> = ops.iter().map(operand_shape).collect();
            let shape_refs: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
            let parsed = tenferro_einsum::parse(subs, &shape_refs).py(py)?;
            Optimize::Path(custom_path(py, &parsed, &optimizer)?)
        }
    };
    let state = current_state(py)?;
    let mode = &state.get().core;
    let host = PyHost::new(py);
    let out = tenferro_einsum::einsum(&session.core, subs, ops, &opt, min, mode, &host);
    Ok(host.finish(out)?.into())
}

fn operand_shape(o: &tenferro_eager::Operand<'_>) -> Vec<usize> {
    use tenferro_eager::{Operand, Value};
    match o {
        Operand::Tensor(t) => match &t.value {
            Value::Tensor(d) => d.shape().to_vec(),
            Value::Symbol(s) => s.shape.clone(),
        },
        Operand::Array(t) => t.shape().to_vec(),
        Operand::Scalar(_) => Vec::new(),
    }
}

/// Dtype and shape of an `einsum_path` operand (only these are read): tensors and NumPy arrays
/// directly, anything else through its NumPy array.
fn path_meta(py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<(DType, Vec<usize>)> {
    use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
    // dtypes without a tenferro counterpart plan as float64 (only bool-ness and promotion
    // matter to the planner)
    let dtype_of = |d: &Bound<'_, numpy::PyArrayDescr>| {
        crate::convert::dtype_of_descr(d.kind(), d.itemsize()).unwrap_or(DType::F64)
    };
    if let Ok(t) = o.cast::<PyTensor>() {
        let t = &t.get().inner;
        return Ok(match &t.value {
            tenferro_eager::Value::Tensor(d) => (d.dtype(), d.shape().to_vec()),
            tenferro_eager::Value::Symbol(s) => (s.dtype, s.shape.clone()),
        });
    }
    if let Ok(a) = o.cast::<PyUntypedArray>() {
        return Ok((dtype_of(&a.dtype()), a.shape().to_vec()));
    }
    if let (Ok(shape), Ok(dtype)) = (o.getattr("shape"), o.getattr("dtype")) {
        if let (Ok(shape), Ok(d)) = (
            shape.extract::<Vec<usize>>(),
            dtype.cast::<numpy::PyArrayDescr>(),
        ) {
            return Ok((dtype_of(d), shape));
        }
    }
    let t = crate::apply::tensor_from_object(py, o, false)?;
    Ok((t.dtype(), t.shape().to_vec()))
}

/// `tf.einsum_path(*operands, optimize=, minimize=)`: `operands` is the positional tuple
/// (subscripts first, or the interleaved form); returns `(path, info)`.
#[pyfunction]
#[pyo3(signature = (operands, optimize, minimize=None, memory_limit=None))]
pub fn _einsum_path<'py>(
    py: Python<'py>,
    operands: &Bound<'py, PyTuple>,
    optimize: &Bound<'py, PyAny>,
    minimize: Option<&Bound<'py, PyAny>>,
    memory_limit: Option<u128>,
) -> PyResult<(Bound<'py, PyList>, PyEinsumPathInfo)> {
    let (subscripts, items) = split(py, operands)?;
    let subscripts = subscripts_str(py, &subscripts)?;
    let n = items.len();
    let opt = optimize_of(subscripts, n, optimize).py(py)?;
    let min = minimize_of(subscripts, minimize).py(py)?;
    let metas = items
        .iter()
        .map(|o| path_meta(py, o))
        .collect::<PyResult<Vec<_>>>()?;
    let plan = match opt {
        Ok(o) => PathPlan::choose(subscripts, metas, &o, min).py(py)?,
        Err(optimizer) => {
            let shapes: Vec<&[usize]> = metas.iter().map(|m| m.1.as_slice()).collect();
            let parsed = tenferro_einsum::parse(subscripts, &shapes).py(py)?;
            let path = custom_path(py, &parsed, &optimizer)?;
            let name = optimizer
                .get_type()
                .name()
                .map(|s| s.to_string())
                .unwrap_or_default();
            PathPlan::given(parsed, metas, path, name, String::new()).py(py)?
        }
    };
    let path = path_list(py, &plan.path)?;
    let planned = std::sync::OnceLock::new();
    let slicing = match memory_limit {
        None => None,
        Some(limit) => {
            let p = plan.lower().py(py)?;
            let shapes: Vec<&[usize]> = plan.metas.iter().map(|m| m.1.as_slice()).collect();
            let d = slicing(py, &p, &shapes, limit)?;
            let _ = planned.set(p);
            Some(d.into_any().unbind())
        }
    };
    Ok((
        path,
        PyEinsumPathInfo {
            plan,
            planned,
            slicing: std::sync::Mutex::new(slicing),
        },
    ))
}

fn path_list<'py>(py: Python<'py>, path: &[Vec<usize>]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for e in path {
        out.append(PyTuple::new(py, e)?)?;
    }
    Ok(out)
}

/// A decimal count as a Python int (exact beyond every machine type).
fn big_int<'py>(py: Python<'py>, b: &tenferro_einsum::Big) -> PyResult<Bound<'py, PyAny>> {
    let s = b.to_string();
    match s.parse::<u128>() {
        Ok(v) => Ok(v.into_pyobject(py)?.into_any()),
        Err(_) => py.get_type::<PyInt>().call1((s,)),
    }
}

/// What :func:`einsum_path` reports about a contraction (as ``opt_einsum.PathInfo``).
///
/// Attributes
/// ----------
/// path : list of tuple of int
///     The contraction path (linear, ``opt_einsum`` convention).
/// opt_cost : int
///     FLOP count of the path: ``opt_einsum``'s ``opt_cost`` of the same path (per path entry
///     of ``k`` operands, the size of their joint index space times ``max(1, k - 1)``, plus
///     one more when labels are summed; labels counted on the operands as given).
/// naive_cost : int
///     FLOP count of a single joint contraction (``opt_einsum``'s ``naive_cost``).
/// speedup : float
///     ``naive_cost / opt_cost``.
/// largest_intermediate : int
///     Element count of the largest tensor along the path: the intermediates and the operands
///     after their diagonals and single-operand sums are taken.
/// method : str
///     ``"left to right"``, ``"greedy"``, ``"optimal"``, ``"dp"``, ``"auto (...)"``,
///     ``"explicit path"``, ``"explicit tree"`` or a ``PathOptimizer``'s class name (with
///     ``", memory_limit=N"`` appended under NumPy's ``(name, memory_limit)`` form).
/// note : str
///     Non-empty when ``"optimal"`` or ``"dp"`` fell back to greedy.
/// contraction_list : list of tuple
///     ``(indices, equation, flops, result size)`` per path entry (the equation of the lowered
///     operands).
/// subscripts, eq : str
///     The subscripts as given and the parsed equation.
/// size_dict : dict
///     Size per label (``"…k"`` for the ``k``-th ellipsis axis).
///
/// ``str(info)`` is the printable table (built when printed).
#[pyclass(name = "EinsumPathInfo", module = "tenferro.einsum", frozen)]
pub struct PyEinsumPathInfo {
    plan: PathPlan,
    /// The lowering along the path (costs, table), made when first read.
    planned: std::sync::OnceLock<tenferro_einsum::Planned>,
    /// With `memory_limit=`: the slicing (`tenferro._sliced.SlicePlan`, set by
    /// `tf.einsum_path` from the fields this binding reports).
    slicing: std::sync::Mutex<Option<Py<PyAny>>>,
}

impl PyEinsumPathInfo {
    fn planned(&self, py: Python<'_>) -> PyResult<&tenferro_einsum::Planned> {
        if let Some(p) = self.planned.get() {
            return Ok(p);
        }
        let p = self.plan.lower().py(py)?;
        Ok(self.planned.get_or_init(|| p))
    }
}

#[pymethods]
impl PyEinsumPathInfo {
    #[getter]
    fn path<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        path_list(py, &self.plan.path)
    }
    #[getter]
    fn opt_cost<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        big_int(py, &self.planned(py)?.report.opt_cost)
    }
    #[getter]
    fn naive_cost<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        big_int(py, &self.planned(py)?.naive_cost)
    }
    #[getter]
    fn largest_intermediate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        big_int(py, &self.planned(py)?.report.largest)
    }
    #[getter]
    fn speedup(&self, py: Python<'_>) -> PyResult<f64> {
        let p = self.planned(py)?;
        Ok(tenferro_einsum::info::speedup(
            &p.naive_cost,
            &p.report.opt_cost,
        ))
    }
    #[getter]
    fn method(&self) -> &str {
        &self.plan.method
    }
    #[getter]
    fn note(&self) -> &str {
        &self.plan.note
    }
    #[getter]
    fn subscripts(&self) -> &str {
        &self.plan.parsed.subscripts
    }
    #[getter]
    fn eq(&self) -> String {
        self.plan.parsed.equation()
    }
    #[getter]
    fn size_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sizes = PyDict::new(py);
        let p = &self.plan.parsed;
        for (i, &l) in p.labels.iter().enumerate() {
            sizes.set_item(tenferro_einsum::info::label_name(l), p.sizes[i])?;
        }
        Ok(sizes)
    }
    #[getter]
    fn contraction_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = PyList::empty(py);
        for (idx, eq, cost, size) in &self.planned(py)?.report.rows {
            rows.append((
                PyTuple::new(py, idx)?,
                eq,
                big_int(py, cost)?,
                big_int(py, size)?,
            ))?;
        }
        Ok(rows)
    }
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let p = self.planned(py)?;
        let path: Vec<String> = p
            .path
            .iter()
            .map(|e| tenferro_einsum::fmt_tuple(e))
            .collect();
        Ok(format!(
            "EinsumPathInfo(path=[{}], opt_cost={}, largest_intermediate={}, method={})",
            path.join(", "),
            p.report.opt_cost,
            p.report.largest,
            py_repr(&p.method)
        ))
    }
    /// With `memory_limit=`: the sliced labels, the number of slices, the FLOP overhead and the
    /// largest tensor of one slice (a `SlicePlan`); `None` otherwise.
    #[getter]
    fn slicing(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let s = self.slicing.lock().unwrap_or_else(|e| e.into_inner());
        s.as_ref().map(|v| v.clone_ref(py))
    }
    #[setter]
    fn set_slicing(&self, value: Option<Py<PyAny>>) {
        *self.slicing.lock().unwrap_or_else(|e| e.into_inner()) = value;
    }
    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        let table = tenferro_einsum::info::table(self.planned(py)?);
        let Some(sl) = self.slicing(py) else {
            return Ok(table);
        };
        let sl = sl.bind(py);
        let labels: Vec<String> = sl.getattr("labels")?.extract()?;
        let nslices = sl.getattr("nslices")?.str()?.to_string();
        let overhead: f64 = sl.getattr("overhead")?.extract()?;
        let largest = sl.getattr("largest_intermediate")?.str()?.to_string();
        let labels = if labels.is_empty() {
            "(none)".to_string()
        } else {
            labels.join(", ")
        };
        let extra = format!(
            "        Sliced indices:  {labels}\n      Number of slices:  {nslices}\n    Slicing FLOP ratio:  {overhead:.4}\n     Largest per slice:  {largest} elements\n"
        );
        Ok(match table.find("\n---") {
            Some(k) => format!("{}\n{}{}", &table[..k], extra, &table[k + 1..]),
            None => format!("{table}\n{extra}"),
        })
    }
}

/// `memory_limit=`: the slicing of `planned` as a dict (`labels` by name, their sizes, where
/// they sit in the operands and the output, the number of slices and the costs; counts as
/// decimal strings).
fn slicing<'py>(
    py: Python<'py>,
    planned: &tenferro_einsum::Planned,
    shapes: &[&[usize]],
    limit: u128,
) -> PyResult<Bound<'py, PyDict>> {
    use tenferro_einsum::slice::{plan_slices, Options};
    let sp = plan_slices(planned, shapes, limit, Options::default()).py(py)?;
    let s = &sp.sliced;
    let d = PyDict::new(py);
    let names: Vec<String> = s
        .labels
        .iter()
        .map(|&l| match planned.parsed.labels[l] {
            Label::Char(c) => c.to_string(),
            Label::Ell(r) => format!("\u{2026}{r}"),
        })
        .collect();
    let sizes: Vec<usize> = s.labels.iter().map(|&l| planned.parsed.sizes[l]).collect();
    d.set_item("labels", names)?;
    d.set_item("sizes", sizes)?;
    d.set_item("operand_axes", sp.operand_axes.clone())?;
    d.set_item("output_axes", sp.output_axes.clone())?;
    d.set_item("nslices", s.nslices.to_string())?;
    d.set_item("cost", s.cost.to_string())?;
    d.set_item("sliced_cost", s.sliced_cost.to_string())?;
    d.set_item("overhead", s.overhead())?;
    d.set_item("largest", s.largest.to_string())?;
    d.set_item("unsliced_largest", s.unsliced_largest.to_string())?;
    d.set_item("footprint", s.footprint.to_string())?;
    d.set_item("memory_limit", limit.to_string())?;
    let out_shape: Vec<usize> = planned
        .parsed
        .output
        .iter()
        .map(|&l| planned.parsed.sizes[l])
        .collect();
    d.set_item("output_shape", out_shape)?;
    Ok(d)
}
