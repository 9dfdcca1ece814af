//! Shape and dtype inference: validates every argument and computes the output metadata
//! before any allocation.

use crate::catalog::row;
use crate::config::{check_range as range, rename as renamed};
use crate::op::{LinalgOp, Op, ReduceOp, UnaryOp};
use tenferro_tensor::shape::{broadcast_shapes, check_permutation, checked_numel};
use tenferro_tensor::{promote, DType, Error, Result};

/// Output metadata of an op, and the dtype its data operands are promoted to.
#[derive(Clone, Debug, PartialEq)]
pub struct OutMeta {
    /// Output dtype.
    pub dtype: DType,
    /// Output shape.
    pub shape: Vec<usize>,
    /// Common dtype the data operands are converted to before the kernel runs.
    pub operand_dtype: DType,
}

fn arity_check(op: &Op, n: usize) -> Result<()> {
    let r = row(op.kind());
    if r.arity >= 0 && r.arity as usize != n {
        return Err(Error::value(
            r.name,
            format!("expects {} operand(s), got {n}", r.arity),
        ));
    }
    Ok(())
}

fn admit(op: &Op, d: DType) -> Result<()> {
    let r = row(op.kind());
    if r.dtypes.contains(d) {
        Ok(())
    } else {
        Err(Error::dtype(
            r.name,
            format!(
                "dtype {d} is not supported (supported: {})",
                r.dtypes.describe()
            ),
        ))
    }
}

/// Validate `op` on operands of the given dtypes and shapes and infer the output.
///
/// # Errors
/// [`Error::DType`], [`Error::Shape`], [`Error::Axis`], [`Error::Value`] naming the op and the
/// offending values.
pub fn infer(op: &Op, inputs: &[(DType, &[usize])]) -> Result<OutMeta> {
    arity_check(op, inputs.len())?;
    let name = op.name();
    let same = |d: DType, s: &[usize]| OutMeta {
        dtype: d,
        shape: s.to_vec(),
        operand_dtype: d,
    };
    match op {
        Op::Slice(_)
        | Op::Pad(_)
        | Op::DynamicSlice { .. }
        | Op::DynamicUpdateSlice
        | Op::Concatenate { .. }
        | Op::Gather(_)
        | Op::Scatter(_)
        | Op::ExtractDiag { .. }
        | Op::EmbedDiag { .. }
        | Op::Tril(_)
        | Op::Triu(_)
        | Op::DotGeneral(_)
        | Op::DotGeneralWithConj { .. }
        | Op::Matmul
        | Op::ScaleReal(_)
        | Op::ScaleComplex(_) => infer_structural(op, inputs),
        Op::Fft(c) => crate::fft::infer_fft(name, c, inputs[0].0, inputs[0].1),
        Op::Linalg(_) => {
            let mut outs = infer_outputs(op, inputs)?;
            Ok(outs.swap_remove(0))
        }
        Op::Unary(u) => {
            let (d, s) = inputs[0];
            admit(op, d)?;
            let out = if *u == UnaryOp::Abs { d.to_real() } else { d };
            Ok(OutMeta {
                dtype: out,
                shape: s.to_vec(),
                operand_dtype: d,
            })
        }
        Op::Binary(_) | Op::Compare(_) => {
            let common = promote(inputs[0].0, inputs[1].0);
            admit(op, common)?;
            if let Op::Compare(dir) = op {
                if dir.is_ordering() && common.is_complex() {
                    return Err(Error::dtype(
                        name,
                        format!(
                            "direction {} needs ordered operands; {common} is not ordered",
                            dir.name()
                        ),
                    ));
                }
            }
            let shape = broadcast_shapes(name, &[inputs[0].1, inputs[1].1])?;
            let dtype = if matches!(op, Op::Compare(_)) {
                DType::Bool
            } else {
                common
            };
            Ok(OutMeta {
                dtype,
                shape,
                operand_dtype: common,
            })
        }
        Op::Select => {
            if inputs[0].0 != DType::Bool {
                return Err(Error::dtype(
                    name,
                    format!("predicate must be bool, got {}", inputs[0].0),
                ));
            }
            let common = promote(inputs[1].0, inputs[2].0);
            let shape = broadcast_shapes(name, &[inputs[0].1, inputs[1].1, inputs[2].1])?;
            Ok(OutMeta {
                dtype: common,
                shape,
                operand_dtype: common,
            })
        }
        Op::Clamp => {
            let common = promote(promote(inputs[0].0, inputs[1].0), inputs[2].0);
            admit(op, common)?;
            let shape = broadcast_shapes(name, &[inputs[0].1, inputs[1].1, inputs[2].1])?;
            Ok(OutMeta {
                dtype: common,
                shape,
                operand_dtype: common,
            })
        }
        Op::Convert(to) => {
            tenferro_tensor::dtype::check_convert(name, inputs[0].0, *to)?;
            Ok(OutMeta {
                dtype: *to,
                shape: inputs[0].1.to_vec(),
                operand_dtype: inputs[0].0,
            })
        }
        Op::Cast(to) => Ok(OutMeta {
            dtype: *to,
            shape: inputs[0].1.to_vec(),
            operand_dtype: inputs[0].0,
        }),
        Op::Transpose(perm) => {
            let (d, s) = inputs[0];
            check_permutation(name, perm, s.len())?;
            Ok(same(d, &perm.iter().map(|&p| s[p]).collect::<Vec<_>>()))
        }
        Op::Reshape(shape) => {
            let (d, s) = inputs[0];
            // A target too big to count cannot match the input's size: a ShapeError, as any
            // other reshape mismatch.
            let n_new = checked_numel(name, shape).map_err(|_| {
                Error::shape(
                    name,
                    format!("cannot reshape array of shape {s:?} into shape {shape:?}: the target has more than isize::MAX elements"),
                )
            })?;
            let n_old: usize = s.iter().product();
            if n_new != n_old {
                return Err(Error::shape(
                    name,
                    format!(
                        "cannot reshape array of size {n_old} (shape {s:?}) into shape {shape:?}"
                    ),
                ));
            }
            Ok(same(d, shape))
        }
        Op::BroadcastInDim { shape, dims } => {
            let (d, s) = inputs[0];
            if dims.len() != s.len() {
                return Err(Error::shape(
                    name,
                    format!(
                        "broadcast_dimensions {dims:?} must have one entry per input axis (input shape {s:?})"
                    ),
                ));
            }
            checked_numel(name, shape)?;
            for (i, &dim) in dims.iter().enumerate() {
                if dim >= shape.len() || dims[..i].contains(&dim) {
                    return Err(Error::axis(
                        name,
                        format!(
                            "broadcast_dimensions {dims:?} must be unique and below the output rank {}",
                            shape.len()
                        ),
                    ));
                }
                if s[i] != 1 && s[i] != shape[dim] {
                    return Err(Error::shape(
                        name,
                        format!(
                            "input shape {s:?} cannot broadcast to {shape:?} along dims {dims:?}"
                        ),
                    ));
                }
            }
            Ok(same(d, shape))
        }
        Op::Reverse(axes) => {
            let (d, s) = inputs[0];
            check_axes(name, axes, s.len())?;
            Ok(same(d, s))
        }
        Op::Sort { axis, .. } | Op::Argsort { axis, .. } | Op::Cumsum(axis) | Op::Cumprod(axis) => {
            let (d, s) = inputs[0];
            admit(op, d)?;
            check_axes(name, &[*axis], s.len())?;
            let dtype = if matches!(op, Op::Argsort { .. }) {
                DType::I64
            } else {
                d
            };
            Ok(OutMeta {
                dtype,
                shape: s.to_vec(),
                operand_dtype: d,
            })
        }
        Op::Argmax(axis) | Op::Argmin(axis) => {
            let (d, s) = inputs[0];
            admit(op, d)?;
            check_axes(name, &[*axis], s.len())?;
            if s[*axis] == 0 {
                return Err(Error::value(
                    name,
                    format!("attempt to get {name} of an empty axis {axis} (shape {s:?})"),
                ));
            }
            let mut shape = s.to_vec();
            shape.remove(*axis);
            Ok(OutMeta {
                dtype: DType::I64,
                shape,
                operand_dtype: d,
            })
        }
        Op::SearchSorted { .. } => {
            let common = promote(inputs[0].0, inputs[1].0);
            admit(op, common)?;
            if inputs[0].1.len() != 1 {
                return Err(Error::shape(
                    name,
                    format!(
                        "the sorted operand must be 1-D, got shape {:?}",
                        inputs[0].1
                    ),
                ));
            }
            Ok(OutMeta {
                dtype: DType::I64,
                shape: inputs[1].1.to_vec(),
                operand_dtype: common,
            })
        }
        Op::Reduce { op: rop, axes } => {
            let (d, s) = inputs[0];
            admit(op, d)?;
            check_axes(name, axes, s.len())?;
            if matches!(rop, ReduceOp::Max | ReduceOp::Min) && axes.iter().any(|&a| s[a] == 0) {
                return Err(Error::value(
                    name,
                    format!(
                        "zero-size reduction over axes {axes:?} of shape {s:?} has no identity"
                    ),
                ));
            }
            let shape: Vec<usize> = s
                .iter()
                .enumerate()
                .filter(|(i, _)| !axes.contains(i))
                .map(|(_, &x)| x)
                .collect();
            Ok(same(d, &shape))
        }
    }
}

fn index_operand(op: &str, what: &str, d: DType) -> Result<()> {
    if d.is_int() {
        Ok(())
    } else {
        Err(Error::dtype(
            op,
            format!("{what} must have an integer dtype, got {d}"),
        ))
    }
}

fn data_dtype(op: &Op, inputs: &[(DType, &[usize])]) -> Result<DType> {
    let d = inputs
        .iter()
        .enumerate()
        .filter(|(i, _)| op.is_data_operand(*i))
        .map(|(_, (d, _))| *d)
        .reduce(promote)
        .unwrap_or(DType::F64);
    admit(op, d)?;
    Ok(d)
}

fn out(dtype: DType, shape: Vec<usize>) -> Result<OutMeta> {
    Ok(OutMeta {
        dtype,
        shape,
        operand_dtype: dtype,
    })
}

fn rank_check(op: &str, what: &str, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(Error::shape(
            op,
            format!("{what} has {got} entries but the operand has rank {want}"),
        ));
    }
    Ok(())
}

/// Components per index vector of a gather/scatter `indices` operand (StableHLO: an
/// `index_vector_dim` equal to the rank means scalar indices).
fn index_vector_len(op: &str, ivd: usize, indices: &[usize]) -> Result<usize> {
    if ivd > indices.len() {
        return Err(Error::axis(
            op,
            format!(
                "index_vector_dim {ivd} is out of range for indices of rank {}",
                indices.len()
            ),
        ));
    }
    Ok(if ivd == indices.len() {
        1
    } else {
        indices[ivd]
    })
}

fn infer_structural(op: &Op, inputs: &[(DType, &[usize])]) -> Result<OutMeta> {
    let name = op.name();
    let d = data_dtype(op, inputs)?;
    let s = inputs.first().map(|x| x.1).unwrap_or(&[]);
    match op {
        Op::Slice(c) => {
            c.validate().map_err(|e| renamed(e, name))?;
            rank_check(name, "starts", c.starts.len(), s.len())?;
            let mut shape = Vec::with_capacity(s.len());
            for i in 0..s.len() {
                if c.limits[i] > s[i] {
                    return Err(Error::shape(
                        name,
                        format!(
                            "limit {} exceeds dimension {} of axis {i} (shape {s:?})",
                            c.limits[i], s[i]
                        ),
                    ));
                }
                shape.push((c.limits[i] - c.starts[i]).div_ceil(c.strides[i]));
            }
            out(d, shape)
        }
        Op::Pad(c) => {
            c.validate().map_err(|e| renamed(e, name))?;
            rank_check(name, "edge_padding_low", c.low.len(), s.len())?;
            let mut shape = Vec::with_capacity(s.len());
            for i in 0..s.len() {
                let n = s[i] as i128;
                let body = if n == 0 {
                    0
                } else {
                    n + (n - 1) * c.interior[i] as i128
                };
                let size = c.low[i] as i128 + c.high[i] as i128 + body;
                if size < 0 {
                    return Err(Error::shape(name, format!("padding low {} high {} interior {} leaves a negative size on axis {i} of shape {s:?}", c.low[i], c.high[i], c.interior[i])));
                }
                shape.push(usize::try_from(size).map_err(|_| {
                    Error::value(name, format!("padding makes axis {i} of shape {s:?} {size} long, more than usize::MAX"))
                })?);
            }
            checked_numel(name, &shape)?;
            out(d, shape)
        }
        Op::DynamicSlice { sizes } => {
            let (id, is) = inputs[1];
            index_operand(name, "starts", id)?;
            if is.len() != 1 || is[0] != s.len() {
                return Err(Error::shape(
                    name,
                    format!(
                        "starts must be a rank-1 tensor of {} entries, got shape {is:?}",
                        s.len()
                    ),
                ));
            }
            rank_check(name, "slice_sizes", sizes.len(), s.len())?;
            for i in 0..s.len() {
                if sizes[i] > s[i] {
                    return Err(Error::shape(
                        name,
                        format!(
                            "slice size {} exceeds dimension {} of axis {i} (shape {s:?})",
                            sizes[i], s[i]
                        ),
                    ));
                }
            }
            out(d, sizes.clone())
        }
        Op::DynamicUpdateSlice => {
            let us = inputs[1].1;
            let (id, is) = inputs[2];
            index_operand(name, "starts", id)?;
            if us.len() != s.len() {
                return Err(Error::shape(
                    name,
                    format!(
                        "update rank {} differs from operand rank {} (shapes {us:?}, {s:?})",
                        us.len(),
                        s.len()
                    ),
                ));
            }
            if is.len() != 1 || is[0] != s.len() {
                return Err(Error::shape(
                    name,
                    format!(
                        "starts must be a rank-1 tensor of {} entries, got shape {is:?}",
                        s.len()
                    ),
                ));
            }
            if let Some(i) = (0..s.len()).find(|&i| us[i] > s[i]) {
                return Err(Error::shape(
                    name,
                    format!("update shape {us:?} exceeds operand shape {s:?} on axis {i}"),
                ));
            }
            out(d, s.to_vec())
        }
        Op::Concatenate { axis } => {
            if inputs.is_empty() {
                return Err(Error::value(name, "needs at least one operand"));
            }
            if *axis >= s.len() {
                return Err(Error::axis(
                    name,
                    format!("axis {axis} is out of bounds for rank {}", s.len()),
                ));
            }
            let mut shape = s.to_vec();
            shape[*axis] = 0;
            for (k, (_, t)) in inputs.iter().enumerate() {
                if t.len() != s.len() || (0..s.len()).any(|i| i != *axis && t[i] != s[i]) {
                    return Err(Error::shape(name, format!("operand {k} has shape {t:?}, incompatible with {s:?} along axis {axis}")));
                }
                shape[*axis] += t[*axis];
            }
            checked_numel(name, &shape)?;
            out(d, shape)
        }
        Op::Gather(c) => {
            c.validate().map_err(|e| renamed(e, name))?;
            let (id, is) = inputs[1];
            index_operand(name, "indices", id)?;
            rank_check(name, "slice_sizes", c.slice_sizes.len(), s.len())?;
            range(
                name,
                "collapsed_slice_dims",
                &c.collapsed_slice_dims,
                s.len(),
            )?;
            range(name, "start_index_map", &c.start_index_map, s.len())?;
            let nvec = index_vector_len(name, c.index_vector_dim, is)?;
            if nvec != c.start_index_map.len() {
                return Err(Error::shape(
                    name,
                    format!(
                        "index vectors have {nvec} components but start_index_map {:?} has {}",
                        c.start_index_map,
                        c.start_index_map.len()
                    ),
                ));
            }
            for i in 0..s.len() {
                if c.slice_sizes[i] > s[i] {
                    return Err(Error::shape(
                        name,
                        format!(
                            "slice_sizes {:?} exceed operand shape {s:?} on axis {i}",
                            c.slice_sizes
                        ),
                    ));
                }
            }
            if let Some(&dd) = c
                .collapsed_slice_dims
                .iter()
                .find(|&&dd| c.slice_sizes[dd] != 1)
            {
                return Err(Error::shape(
                    name,
                    format!(
                        "collapsed dimension {dd} must have slice size 1, got {}",
                        c.slice_sizes[dd]
                    ),
                ));
            }
            let offset_sizes: Vec<usize> = (0..s.len())
                .filter(|i| !c.collapsed_slice_dims.contains(i))
                .map(|i| c.slice_sizes[i])
                .collect();
            if offset_sizes.len() != c.offset_dims.len() {
                return Err(Error::shape(name, format!("offset_dims {:?} must list {} output axes (operand rank minus collapsed dims)", c.offset_dims, offset_sizes.len())));
            }
            let batch: Vec<usize> = (0..is.len())
                .filter(|&i| i != c.index_vector_dim)
                .map(|i| is[i])
                .collect();
            let rank = batch.len() + offset_sizes.len();
            range(name, "offset_dims", &c.offset_dims, rank)?;
            let (mut bi, mut oi) = (0, 0);
            let mut shape = Vec::with_capacity(rank);
            for pos in 0..rank {
                if c.offset_dims.contains(&pos) {
                    shape.push(offset_sizes[oi]);
                    oi += 1;
                } else {
                    shape.push(batch[bi]);
                    bi += 1;
                }
            }
            checked_numel(name, &shape)?;
            out(d, shape)
        }
        Op::Scatter(c) => {
            c.validate().map_err(|e| renamed(e, name))?;
            let (id, is) = inputs[1];
            index_operand(name, "indices", id)?;
            let us = inputs[2].1;
            range(
                name,
                "inserted_window_dims",
                &c.inserted_window_dims,
                s.len(),
            )?;
            range(
                name,
                "scatter_dims_to_operand_dims",
                &c.scatter_dims_to_operand_dims,
                s.len(),
            )?;
            range(name, "update_window_dims", &c.update_window_dims, us.len())?;
            let nvec = index_vector_len(name, c.index_vector_dim, is)?;
            if nvec != c.scatter_dims_to_operand_dims.len() {
                return Err(Error::shape(name, format!("index vectors have {nvec} components but scatter_dims_to_operand_dims {:?} has {}", c.scatter_dims_to_operand_dims, c.scatter_dims_to_operand_dims.len())));
            }
            if c.update_window_dims.len() + c.inserted_window_dims.len() != s.len() {
                return Err(Error::shape(name, format!("update_window_dims {:?} and inserted_window_dims {:?} must together cover the operand rank {}", c.update_window_dims, c.inserted_window_dims, s.len())));
            }
            let scatter_batch: Vec<usize> = (0..is.len())
                .filter(|&i| i != c.index_vector_dim)
                .map(|i| is[i])
                .collect();
            let update_scatter: Vec<usize> = (0..us.len())
                .filter(|i| !c.update_window_dims.contains(i))
                .map(|i| us[i])
                .collect();
            if scatter_batch != update_scatter {
                return Err(Error::shape(name, format!("update scatter dims {update_scatter:?} must equal the index batch dims {scatter_batch:?} (updates shape {us:?}, indices shape {is:?})")));
            }
            let window_operand: Vec<usize> = (0..s.len())
                .filter(|i| !c.inserted_window_dims.contains(i))
                .collect();
            for (k, &wd) in c.update_window_dims.iter().enumerate() {
                if us[wd] > s[window_operand[k]] {
                    return Err(Error::shape(
                        name,
                        format!(
                            "update window axis {wd} of size {} exceeds operand axis {} of size {}",
                            us[wd], window_operand[k], s[window_operand[k]]
                        ),
                    ));
                }
            }
            out(d, s.to_vec())
        }
        Op::ExtractDiag { a, b } | Op::EmbedDiag { a, b } => {
            let extract = matches!(op, Op::ExtractDiag { .. });
            let rank = if extract { s.len() } else { s.len() + 1 };
            if a == b || *a >= rank || *b >= rank {
                return Err(Error::axis(
                    name,
                    format!("axes ({a}, {b}) must be distinct and below rank {rank}"),
                ));
            }
            if extract {
                let mut shape = s.to_vec();
                shape[*a] = s[*a].min(s[*b]);
                shape.remove(*b);
                out(d, shape)
            } else {
                let src_a = if *a > *b { a - 1 } else { *a };
                if src_a >= s.len() {
                    return Err(Error::axis(
                        name,
                        format!("axis {a} is out of range for an input of rank {}", s.len()),
                    ));
                }
                let mut shape = s.to_vec();
                shape.insert(*b, s[src_a]);
                checked_numel(name, &shape)?;
                out(d, shape)
            }
        }
        Op::Tril(_) | Op::Triu(_) => {
            if s.len() < 2 {
                return Err(Error::shape(
                    name,
                    format!("needs rank >= 2 (axes 0 and 1), got shape {s:?}"),
                ));
            }
            out(d, s.to_vec())
        }
        Op::DotGeneral(c) | Op::DotGeneralWithConj { config: c, .. } => {
            let shape = c.output_shape(name, s, inputs[1].1)?;
            checked_numel(name, &shape)?;
            out(d, shape)
        }
        Op::Matmul => {
            let r = inputs[1].1;
            if s.len() != 2 || r.len() != 2 {
                return Err(Error::shape(name, format!("operands must be rank 2, got shapes {s:?} and {r:?} (use tf.matmul for batches)")));
            }
            if s[1] != r[0] {
                return Err(Error::shape(
                    name,
                    format!("inner dimensions differ: {s:?} @ {r:?}"),
                ));
            }
            out(d, vec![s[0], r[1]])
        }
        Op::ScaleReal(_) | Op::ScaleComplex(_) => out(d, s.to_vec()),
        Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare(_)
        | Op::Select
        | Op::Clamp
        | Op::Convert(_)
        | Op::Cast(_)
        | Op::Transpose(_)
        | Op::Reshape(_)
        | Op::BroadcastInDim { .. }
        | Op::Reverse(_)
        | Op::Reduce { .. }
        | Op::Linalg(_)
        | Op::Fft(_)
        | Op::Sort { .. }
        | Op::Argsort { .. }
        | Op::Argmax(_)
        | Op::Argmin(_)
        | Op::SearchSorted { .. }
        | Op::Cumsum(_)
        | Op::Cumprod(_) => Err(Error::internal(name, "routed to the structural shape rule")),
    }
}

/// Validate `op` and infer the metadata of each of its outputs (one for every primitive but
/// the decompositions of [`LinalgOp`]).
///
/// # Errors
/// As [`infer`]; for linear algebra: [`Error::DType`] for non-float operands,
/// [`Error::Shape`] for rank < 2, non-square matrices where the op needs them, and operands
/// whose batch axes or row counts differ.
pub fn infer_outputs(op: &Op, inputs: &[(DType, &[usize])]) -> Result<Vec<OutMeta>> {
    let Op::Linalg(l) = op else {
        return Ok(vec![infer(op, inputs)?]);
    };
    arity_check(op, inputs.len())?;
    let name = op.name();
    let mut d = inputs[0].0;
    for &(di, _) in &inputs[1..] {
        d = promote(d, di);
    }
    admit(op, d)?;
    for (i, &(_, s)) in inputs.iter().enumerate() {
        if s.len() < 2 {
            return Err(Error::shape(
                name,
                format!("operand {i} has shape {s:?}; expected a matrix (rank >= 2, rows and columns first)"),
            ));
        }
    }
    let s = inputs[0].1;
    let (m, n, batch) = (s[0], s[1], &s[2..]);
    let k = m.min(n);
    let real = d.to_real();
    let shaped = |dims: &[usize]| -> Vec<usize> { dims.iter().chain(batch).copied().collect() };
    let meta = |dtype: DType, dims: &[usize]| OutMeta {
        dtype,
        shape: shaped(dims),
        operand_dtype: d,
    };
    let square = || -> Result<()> {
        if m != n {
            Err(Error::shape(
                name,
                format!("expected square matrices, got shape {s:?} ({m}x{n})"),
            ))
        } else {
            Ok(())
        }
    };
    Ok(match l {
        LinalgOp::Svd { full_matrices, eps } => {
            if !(eps.is_finite() && *eps >= 0.0) {
                return Err(Error::value(
                    name,
                    format!("eps must be finite and >= 0, got {eps}"),
                ));
            }
            let (uc, vr) = if *full_matrices { (m, n) } else { (k, k) };
            vec![meta(d, &[m, uc]), meta(real, &[k]), meta(d, &[vr, n])]
        }
        LinalgOp::Svdvals => vec![meta(real, &[k])],
        LinalgOp::Eigvalsh => {
            square()?;
            vec![meta(real, &[n])]
        }
        LinalgOp::Qr { complete } => {
            let qc = if *complete { m } else { k };
            vec![meta(d, &[m, qc]), meta(d, &[qc, n])]
        }
        LinalgOp::Eigh { eps } => {
            if !(eps.is_finite() && *eps >= 0.0) {
                return Err(Error::value(
                    name,
                    format!("eps must be finite and >= 0, got {eps}"),
                ));
            }
            square()?;
            vec![meta(real, &[n]), meta(d, &[n, n])]
        }
        LinalgOp::Eig => {
            square()?;
            let c = d.to_complex();
            vec![meta(c, &[n]), meta(c, &[n, n])]
        }
        LinalgOp::Cholesky => {
            square()?;
            vec![meta(d, &[n, n])]
        }
        LinalgOp::Lu => vec![meta(d, &[m, m]), meta(d, &[m, k]), meta(d, &[k, n])],
        LinalgOp::Slogdet => {
            square()?;
            vec![meta(d, &[]), meta(real, &[])]
        }
        LinalgOp::Solve | LinalgOp::TriangularSolve { .. } => {
            square()?;
            let b = inputs[1].1;
            if b[0] != n || &b[2..] != batch {
                return Err(Error::shape(
                    name,
                    format!(
                        "a has shape {s:?} and b {b:?}: b needs {n} rows and the batch axes {batch:?} of a"
                    ),
                ));
            }
            vec![OutMeta {
                dtype: d,
                shape: b.to_vec(),
                operand_dtype: d,
            }]
        }
    })
}

fn check_axes(op: &str, axes: &[usize], ndim: usize) -> Result<()> {
    let mut seen = vec![false; ndim];
    for &a in axes {
        if a >= ndim || std::mem::replace(&mut seen[a], true) {
            return Err(Error::axis(
                op,
                format!("axes {axes:?} out of range or repeated for rank {ndim}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{BinaryOp, CompareDir};

    #[test]
    fn binary_promotes_and_broadcasts() {
        let m = infer(
            &Op::Binary(BinaryOp::Add),
            &[(DType::I32, &[3, 1]), (DType::F32, &[4])],
        )
        .unwrap();
        assert_eq!(m.dtype, DType::F64);
        assert_eq!(m.shape, vec![3, 4]);
    }

    #[test]
    fn validation_errors_name_the_op() {
        let e = infer(
            &Op::Binary(BinaryOp::Maximum),
            &[(DType::C32, &[2]), (DType::F32, &[2])],
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("maximum:"), "{e}");
        let e = infer(
            &Op::Compare(CompareDir::Lt),
            &[(DType::C64, &[]), (DType::C64, &[])],
        )
        .unwrap_err();
        assert!(e.to_string().contains("LT"));
        let e = infer(&Op::Reshape(vec![5]), &[(DType::F64, &[2, 3])]).unwrap_err();
        assert!(e.to_string().contains("[5]"));
        let e = infer(
            &Op::Reduce {
                op: ReduceOp::Max,
                axes: vec![0],
            },
            &[(DType::F64, &[0, 3])],
        )
        .unwrap_err();
        assert!(matches!(e, Error::Value { .. }));
    }

    #[test]
    fn linalg_outputs_and_shape_errors() {
        let svd = Op::Linalg(LinalgOp::Svd {
            full_matrices: false,
            eps: 1e-12,
        });
        let o = infer_outputs(&svd, &[(DType::C64, &[5, 3, 7])]).unwrap();
        assert_eq!(o[0].shape, vec![5, 3, 7]);
        assert_eq!((o[1].dtype, o[1].shape.clone()), (DType::F64, vec![3, 7]));
        assert_eq!(o[2].shape, vec![3, 3, 7]);
        let e = infer_outputs(
            &Op::Linalg(LinalgOp::Eigh { eps: 0.0 }),
            &[(DType::F64, &[2, 3])],
        );
        assert!(matches!(e, Err(Error::Shape { .. })));
        let e = infer_outputs(
            &Op::Linalg(LinalgOp::Solve),
            &[(DType::F64, &[2, 2, 4]), (DType::F64, &[2, 1, 3])],
        );
        assert!(matches!(e, Err(Error::Shape { .. })));
        let e = infer_outputs(&Op::Linalg(LinalgOp::Cholesky), &[(DType::I64, &[2, 2])]);
        assert!(matches!(e, Err(Error::DType { .. })));
        let eig = infer_outputs(&Op::Linalg(LinalgOp::Eig), &[(DType::F32, &[2, 2])]).unwrap();
        assert_eq!(eig[0].dtype, DType::C32);
    }
}
