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
use pyo3::types::{PyBool, PyDict, PyFrozenSet, PyInt, PyList, PySequence, PyString, PyTuple};
use tenferro_einsum::{py_repr, Label, Minimize, Optimize, Parsed, Tree, ACCEPTED};
use tenferro_tensor::Error;

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

/// The name opt_einsum-style optimizers see for a label (ellipsis axes get private-use
/// characters no subscript uses).
fn label_str(l: Label) -> String {
    match l {
        Label::Char(c) => c.to_string(),
        Label::Ell(r) => char::from_u32(0xF0000 + r as u32)
            .unwrap_or('\u{FFFD}')
            .to_string(),
    }
}

/// Call an opt_einsum `PathOptimizer` (or any callable with its signature) on `parsed`.
fn custom_path(
    py: Python<'_>,
    parsed: &Parsed,
    optimizer: &Bound<'_, PyAny>,
) -> PyResult<Vec<Vec<usize>>> {
    let net = tenferro_einsum::network(parsed);
    let set = |ids: &[usize]| -> PyResult<Bound<'_, PyFrozenSet>> {
        PyFrozenSet::new(py, ids.iter().map(|&i| label_str(parsed.labels[i])))
    };
    let inputs = PyList::empty(py);
    for t in &net.inputs {
        inputs.append(set(t)?)?;
    }
    let output = set(&net.output)?;
    let sizes = PyDict::new(py);
    for (i, &l) in parsed.labels.iter().enumerate() {
        sizes.set_item(label_str(l), parsed.sizes[i])?;
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
    let subs = subscripts.to_str()?;
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

/// `tf.einsum_path`'s planning: `subscripts`, the operands' shapes and NumPy dtype strings
/// (`dtype.str`); returns
/// `(path, fields)` with `fields` the keyword arguments of `EinsumPathInfo` (FLOP counts as
/// decimal strings: exact beyond every machine type).
#[pyfunction]
#[pyo3(signature = (subscripts, shapes, dtypes, optimize, minimize=None, memory_limit=None))]
pub fn _einsum_plan<'py>(
    py: Python<'py>,
    subscripts: &str,
    shapes: Vec<Vec<usize>>,
    dtypes: Vec<String>,
    optimize: &Bound<'py, PyAny>,
    minimize: Option<&Bound<'py, PyAny>>,
    memory_limit: Option<u128>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyDict>)> {
    let n = shapes.len();
    let opt = optimize_of(subscripts, n, optimize).py(py)?;
    let min = minimize_of(subscripts, minimize).py(py)?;
    let shape_refs: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
    let metas: Vec<tenferro_einsum::Meta<'_>> = shape_refs
        .iter()
        .zip(&dtypes)
        .map(|(s, d)| {
            // NumPy's `dtype.str` ('<f8', '|b1', ...): only bool-ness and promotion matter here
            use tenferro_tensor::DType;
            let dt = match d.get(1..).unwrap_or("") {
                "b1" => DType::Bool,
                "i4" => DType::I32,
                "i8" => DType::I64,
                "f4" => DType::F32,
                "c8" => DType::C32,
                "c16" => DType::C64,
                _ => DType::F64,
            };
            (dt, *s, false)
        })
        .collect();
    let planned = match opt {
        Ok(o) => tenferro_einsum::plan(subscripts, &metas, &o, min).py(py)?,
        Err(optimizer) => {
            let parsed = tenferro_einsum::parse(subscripts, &shape_refs).py(py)?;
            let path = custom_path(py, &parsed, &optimizer)?;
            let name = optimizer
                .get_type()
                .name()
                .map(|s| s.to_string())
                .unwrap_or_default();
            tenferro_einsum::plan_path(parsed, &metas, path, name, String::new()).py(py)?
        }
    };
    let path = PyList::empty(py);
    for e in &planned.path {
        path.append(PyTuple::new(py, e)?)?;
    }
    let rows = PyList::empty(py);
    for (idx, eq, cost, size) in &planned.report.rows {
        rows.append((
            PyTuple::new(py, idx)?,
            eq,
            cost.to_string(),
            size.to_string(),
        ))?;
    }
    let sizes = PyDict::new(py);
    for (i, &l) in planned.parsed.labels.iter().enumerate() {
        let name = match l {
            Label::Char(c) => c.to_string(),
            Label::Ell(r) => format!("\u{2026}{r}"),
        };
        sizes.set_item(name, planned.parsed.sizes[i])?;
    }
    let f = PyDict::new(py);
    f.set_item("subscripts", subscripts)?;
    f.set_item("eq", planned.parsed.equation())?;
    f.set_item("method", &planned.method)?;
    f.set_item("opt_cost", planned.report.opt_cost.to_string())?;
    f.set_item("naive_cost", planned.naive_cost.to_string())?;
    f.set_item("largest_intermediate", planned.report.largest.to_string())?;
    f.set_item("rows", rows)?;
    f.set_item("note", &planned.note)?;
    f.set_item("sizes", sizes)?;
    if let Some(limit) = memory_limit {
        f.set_item("slicing", slicing(py, &planned, &shape_refs, limit)?)?;
    }
    Ok((path, f))
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
