//! Slicing, padding, concatenation, diagonals, triangles, gather and scatter.
//!
//! Views where the result is a strided selection of the input (`slice`, `dynamic_slice`,
//! `extract_diag`); otherwise a fresh compact output is filled by strided assignment
//! (`map::assign`). Gather/scatter follow StableHLO's dimension numbers (no batching dims):
//! gather clamps start indices, scatter adds at duplicates and drops windows that leave the
//! operand.

use crate::cancel::{Cancel, CHECK_WORK};
use crate::elementwise::cast;
use crate::map::assign;
use crate::CpuEngine;
use tenferro_ops::{GatherConfig, PadConfig, ScatterConfig, SliceConfig};
use tenferro_tensor::{dispatch_dtype, DType, Result, Tensor};

/// A fresh zero tensor. Its fill checks the op's cancel flag every `CHECK_WORK` × 8 bytes, so
/// Ctrl-C stops `tril`/`triu`/`pad`/`embed_diag` during a GiB-sized fill too (it used to run
/// to completion, 1–2 s per GiB, before their loops looked at the flag). All-zero bits are the
/// zero of every dtype.
fn zeros(e: &CpuEngine, name: &str, dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let cancel = Cancel::current();
    if !cancel.armed() {
        return Tensor::empty(name, dtype, shape, Some(&e.buffer_pool), true);
    }
    let out = Tensor::empty(name, dtype, shape, Some(&e.buffer_pool), false)?;
    let (ptr, bytes) = (out.storage().as_mut_ptr(), out.storage().bytes());
    let step = CHECK_WORK * 8;
    let mut at = 0;
    while at < bytes {
        cancel.check(name)?;
        let n = step.min(bytes - at);
        // SAFETY: `out` is fresh and unshared, with `bytes` writable bytes from `ptr`.
        unsafe { std::ptr::write_bytes(ptr.add(at), 0, n) };
        at += n;
    }
    Ok(out)
}

/// Index values of an integer tensor, column-major. The catalog admits only integer index
/// operands; anything else reaching a kernel is a typed internal error.
pub(crate) fn index_values(name: &str, t: &Tensor) -> Result<Vec<i64>> {
    match t.dtype() {
        DType::I32 => Ok(t.to_vec::<i32>().into_iter().map(i64::from).collect()),
        DType::I64 => Ok(t.to_vec::<i64>()),
        d @ (DType::Bool | DType::F32 | DType::F64 | DType::C32 | DType::C64) => Err(
            tenferro_tensor::Error::internal(name, format!("{d} index operand reached the kernel")),
        ),
    }
}

/// `slice` as a view.
pub(crate) fn slice(x: &Tensor, c: &SliceConfig, out_shape: &[usize]) -> Result<Tensor> {
    let mut v = x.clone();
    for (ax, &len) in out_shape.iter().enumerate() {
        v = v.slice_axis_view(ax, c.starts[ax], len, c.strides[ax] as isize)?;
    }
    Ok(v)
}

/// Clamp StableHLO start indices to `[0, dim - size]`.
fn clamp_starts(starts: &[i64], dims: &[usize], sizes: &[usize]) -> Vec<usize> {
    starts
        .iter()
        .zip(dims.iter().zip(sizes))
        .map(|(&s, (&d, &z))| s.clamp(0, (d - z) as i64) as usize)
        .collect()
}

fn window(x: &Tensor, starts: &[usize], sizes: &[usize]) -> Result<Tensor> {
    let mut v = x.clone();
    for ax in 0..sizes.len() {
        v = v.slice_axis_view(
            ax,
            if sizes[ax] == 0 { 0 } else { starts[ax] },
            sizes[ax],
            1,
        )?;
    }
    Ok(v)
}

/// `dynamic_slice` as a view at clamped starts.
pub(crate) fn dynamic_slice(x: &Tensor, starts: &Tensor, sizes: &[usize]) -> Result<Tensor> {
    let st = clamp_starts(&index_values("dynamic_slice", starts)?, x.shape(), sizes);
    window(x, &st, sizes)
}

/// `dynamic_update_slice`: a copy of `x` with `update` at clamped starts.
pub(crate) fn dynamic_update_slice(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    update: &Tensor,
    starts: &Tensor,
) -> Result<Tensor> {
    let out = cast(e, name, x, x.dtype())?;
    let st = clamp_starts(&index_values(name, starts)?, x.shape(), update.shape());
    assign(e, &window(&out, &st, update.shape())?, update)?;
    Ok(out)
}

/// `pad` with zeros (negative edges crop; interior padding).
pub(crate) fn pad(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    c: &PadConfig,
    out_shape: &[usize],
) -> Result<Tensor> {
    let out = zeros(e, name, x.dtype(), out_shape)?;
    let (mut dst, mut src) = (out.clone(), x.clone());
    for ax in 0..x.ndim() {
        let n = x.shape()[ax] as i64;
        let step = c.interior[ax] as i64 + 1;
        let (low, od) = (c.low[ax], out_shape[ax] as i64);
        // Input element i lands at low + i*step; keep those inside [0, od).
        let i_min = if low >= 0 {
            0
        } else {
            (-low + step - 1) / step
        };
        let i_max = if n == 0 {
            -1
        } else {
            ((od - 1 - low).div_euclid(step)).min(n - 1)
        };
        let len = (i_max - i_min + 1).max(0) as usize;
        let p0 = if len > 0 {
            (low + i_min * step) as usize
        } else {
            0
        };
        dst = dst.slice_axis_view(ax, p0, len, step as isize)?;
        src = src.slice_axis_view(ax, if len > 0 { i_min as usize } else { 0 }, len, 1)?;
    }
    assign(e, &dst, &src)?;
    Ok(out)
}

/// `concatenate` along `axis`.
pub(crate) fn concatenate(
    e: &CpuEngine,
    name: &str,
    xs: &[&Tensor],
    axis: usize,
    out_shape: &[usize],
) -> Result<Tensor> {
    let out = e.alloc(name, xs[0].dtype(), out_shape)?;
    let mut at = 0;
    for x in xs {
        let len = x.shape()[axis];
        if len > 0 {
            assign(e, &out.slice_axis_view(axis, at, len, 1)?, x)?;
        }
        at += len;
    }
    Ok(out)
}

/// `embed_diag`: zeros with `x` on the diagonal of output axes `a`, `b`.
pub(crate) fn embed_diag(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    a: usize,
    b: usize,
    out_shape: &[usize],
) -> Result<Tensor> {
    let out = zeros(e, name, x.dtype(), out_shape)?;
    assign(e, &out.extract_diag_view(a, b)?, x)?;
    Ok(out)
}

/// `tril(k)` / `triu(k)` on axes 0 (rows) and 1 (columns).
pub(crate) fn triangle(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    k: i64,
    lower: bool,
) -> Result<Tensor> {
    let out = zeros(e, name, x.dtype(), x.shape())?;
    let rows = x.shape()[0] as i64;
    let cancel = Cancel::current();
    for j in 0..x.shape()[1] {
        cancel.check(name)?;
        let jj = j as i64;
        let (lo, hi) = if lower {
            ((jj - k).max(0), rows)
        } else {
            (0, (jj - k + 1).min(rows))
        };
        if hi <= lo {
            continue;
        }
        let len = (hi - lo) as usize;
        let src = x
            .index_axis_view(1, j)?
            .slice_axis_view(0, lo as usize, len, 1)?;
        let dst = out
            .index_axis_view(1, j)?
            .slice_axis_view(0, lo as usize, len, 1)?;
        assign(e, &dst, &src)?;
    }
    Ok(out)
}

/// Column-major multi-index of `lin` over `shape`.
fn unravel(mut lin: usize, shape: &[usize], out: &mut [usize]) {
    for (o, &d) in out.iter_mut().zip(shape) {
        *o = lin % d.max(1);
        lin /= d.max(1);
    }
}

fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    let mut lin = 0;
    let mut acc = 1;
    for (&i, &d) in idx.iter().zip(shape) {
        lin += i * acc;
        acc *= d;
    }
    lin
}

/// The index vector for batch position `batch` (indices tensor given column-major in `vals`).
fn index_vector(
    vals: &[i64],
    ishape: &[usize],
    ivd: usize,
    batch: &[usize],
    n: usize,
    out: &mut Vec<i64>,
) {
    out.clear();
    let mut full: Vec<usize> = Vec::with_capacity(ishape.len());
    let mut bi = 0;
    for ax in 0..ishape.len() {
        if ax == ivd {
            full.push(0);
        } else {
            full.push(batch[bi]);
            bi += 1;
        }
    }
    for c in 0..n {
        if ivd < ishape.len() {
            full[ivd] = c;
        }
        out.push(vals[ravel(&full, ishape)]);
    }
}

/// StableHLO `gather` (start indices clamp).
pub(crate) fn gather(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    indices: &Tensor,
    c: &GatherConfig,
    out_shape: &[usize],
) -> Result<Tensor> {
    let out = e.alloc(name, x.dtype(), out_shape)?;
    let total = out.numel();
    if total == 0 {
        return Ok(out);
    }
    let vals = index_values(name, indices)?;
    let ishape = indices.shape();
    let rank = out_shape.len();
    let batch_pos: Vec<usize> = (0..rank).filter(|p| !c.offset_dims.contains(p)).collect();
    let offset_operand: Vec<usize> = (0..x.ndim())
        .filter(|d| !c.collapsed_slice_dims.contains(d))
        .collect();
    let mut oi = vec![0usize; rank];
    let mut bidx = vec![0usize; batch_pos.len()];
    let mut vecbuf = Vec::new();
    let mut offsets = Vec::with_capacity(total);
    let cancel = Cancel::current();
    for lin in 0..total {
        if lin % CHECK_WORK == CHECK_WORK - 1 {
            cancel.check(name)?;
        }
        unravel(lin, out_shape, &mut oi);
        for (k, &p) in batch_pos.iter().enumerate() {
            bidx[k] = oi[p];
        }
        index_vector(
            &vals,
            ishape,
            c.index_vector_dim,
            &bidx,
            c.start_index_map.len(),
            &mut vecbuf,
        );
        let mut off = x.offset() as isize;
        for (k, &d) in c.start_index_map.iter().enumerate() {
            let hi = (x.shape()[d] - c.slice_sizes[d]) as i64;
            off += vecbuf[k].clamp(0, hi) as isize * x.strides()[d];
        }
        for (k, &p) in c.offset_dims.iter().enumerate() {
            off += oi[p] as isize * x.strides()[offset_operand[k]];
        }
        offsets.push(off);
    }
    dispatch_dtype!(x.dtype(), T => {
        let src = x.storage().as_ptr() as *const T;
        // SAFETY: fresh output of `total` elements; offsets are in bounds (clamped starts).
        let dst = unsafe { out.fresh_slice_mut::<T>() };
        for (o, &off) in dst.iter_mut().zip(&offsets) {
            *o = unsafe { *src.offset(off) };
        }
    });
    Ok(out)
}

/// StableHLO `scatter` with an add combiner (windows leaving the operand are dropped).
pub(crate) fn scatter(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    c: &ScatterConfig,
) -> Result<Tensor> {
    let out = cast(e, name, x, x.dtype())?;
    let total = updates.numel();
    if total == 0 || out.numel() == 0 {
        return Ok(out);
    }
    let vals = index_values(name, indices)?;
    let ishape = indices.shape();
    let ushape = updates.shape();
    let oshape = out.shape().to_vec();
    let scatter_pos: Vec<usize> = (0..ushape.len())
        .filter(|p| !c.update_window_dims.contains(p))
        .collect();
    let window_operand: Vec<usize> = (0..x.ndim())
        .filter(|d| !c.inserted_window_dims.contains(d))
        .collect();
    let mut ui = vec![0usize; ushape.len()];
    let mut sidx = vec![0usize; scatter_pos.len()];
    let mut vecbuf = Vec::new();
    let mut full = vec![0i64; oshape.len()];
    let mut pairs: Vec<(usize, usize)> = Vec::with_capacity(total);
    let mut last_batch: Option<Vec<usize>> = None;
    let mut start = vec![0i64; oshape.len()];
    let cancel = Cancel::current();
    for lin in 0..total {
        if lin % CHECK_WORK == CHECK_WORK - 1 {
            cancel.check(name)?;
        }
        unravel(lin, ushape, &mut ui);
        for (k, &p) in scatter_pos.iter().enumerate() {
            sidx[k] = ui[p];
        }
        if last_batch.as_deref() != Some(&sidx[..]) {
            index_vector(
                &vals,
                ishape,
                c.index_vector_dim,
                &sidx,
                c.scatter_dims_to_operand_dims.len(),
                &mut vecbuf,
            );
            start.iter_mut().for_each(|s| *s = 0);
            for (k, &d) in c.scatter_dims_to_operand_dims.iter().enumerate() {
                start[d] = vecbuf[k];
            }
            last_batch = Some(sidx.clone());
        }
        full.copy_from_slice(&start);
        for (k, &wd) in c.update_window_dims.iter().enumerate() {
            full[window_operand[k]] += ui[wd] as i64;
        }
        // Drop the whole update window when its start leaves the operand (StableHLO).
        let window_ok = c
            .scatter_dims_to_operand_dims
            .iter()
            .enumerate()
            .all(|(k, &d)| {
                let wsize = window_operand
                    .iter()
                    .position(|&w| w == d)
                    .map_or(1, |p| ushape[c.update_window_dims[p]]);
                vecbuf[k] >= 0 && vecbuf[k] + wsize as i64 <= oshape[d] as i64
            });
        if !window_ok
            || full
                .iter()
                .zip(&oshape)
                .any(|(&f, &d)| f < 0 || f >= d as i64)
        {
            continue;
        }
        let idx: Vec<usize> = full.iter().map(|&f| f as usize).collect();
        pairs.push((ravel(&idx, &oshape), lin));
    }
    let u = cast(e, name, updates, updates.dtype())?;
    macro_rules! accumulate {
        ($T:ty, $add:expr) => {{
            // SAFETY: `out` is a fresh compact copy; `u` is compact; positions are in bounds.
            let dst = unsafe { out.fresh_slice_mut::<$T>() };
            let src = u.as_slice::<$T>().unwrap_or(&[]);
            for &(o, i) in &pairs {
                dst[o] = $add(dst[o], src[i]);
            }
        }};
    }
    match x.dtype() {
        DType::Bool => accumulate!(bool, |a: bool, b: bool| a | b),
        DType::I32 => accumulate!(i32, |a: i32, b: i32| a.wrapping_add(b)),
        DType::I64 => accumulate!(i64, |a: i64, b: i64| a.wrapping_add(b)),
        DType::F32 => accumulate!(f32, |a: f32, b: f32| a + b),
        DType::F64 => accumulate!(f64, |a: f64, b: f64| a + b),
        DType::C32 => accumulate!(tenferro_tensor::Complex32, |a, b| a + b),
        DType::C64 => accumulate!(tenferro_tensor::Complex64, |a, b| a + b),
    }
    Ok(out)
}
