//! The `fft` primitive: multi-dimensional discrete Fourier transforms on RustFFT (complex) and
//! realfft (real input/output), one axis at a time.
//!
//! A transform over several axes is a sequence of 1-D passes. Each pass maps the lines along one
//! axis of its source (the strided input for the first pass, the compact output afterwards)
//! to the lines of the compact column-major output. The lines of a pass are independent: they
//! are cut into chunks of up to [`LINES_PER_CHUNK`] lines (each chunk gathered into one
//! contiguous buffer, transformed as a batch, scattered back), and the chunks are split over the
//! engine's workers above [`PARALLEL_MIN_WORK`]. Lines that are contiguous in the output
//! (the pass over its stride-1 axis) are transformed where they lie.
//!
//! Plans come from one RustFFT / realfft planner per precision, kept for the process behind a
//! lock (`planners`): a planner caches the plans of every length it made, and a plan is an `Arc`
//! shared by every worker; the lock is held only to look a plan up.
//!
//! Each worker's buffers (the plans' scratch, gathered lines) are taken once per pass from the
//! engine's buffer pool, uninitialised (every element is written before it is read): no
//! zero-filling per chunk, and no fresh pages per call for the large scratch of a long
//! transform (2^20 points: 16 MB).

use crate::cancel::Cancel;
use crate::CpuEngine;
use rayon::prelude::*;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftDirection, FftNum, FftPlanner};
use std::sync::{Arc, Mutex, OnceLock};
use tenferro_ops::{FftConfig, FftType, OutMeta};
use tenferro_tensor::{DType, Error, Result, Tensor};

/// Lines gathered into one buffer and transformed as one batch (strided passes).
const LINES_PER_CHUNK: usize = 16;

/// Elements (lines × length) from which a pass is split over the workers.
const PARALLEL_MIN_WORK: usize = 1 << 15;

/// The planners of one precision.
struct Planners<T: FftNum> {
    complex: FftPlanner<T>,
    real: RealFftPlanner<T>,
}

/// A float type RustFFT transforms, with its process-wide planners.
trait Real: FftNum {
    /// The tensor dtypes of `Self` and `Complex<Self>`.
    const REAL: DType;
    const COMPLEX: DType;
    fn planners() -> &'static Mutex<Planners<Self>>;
    fn of(x: f64) -> Self;
}

macro_rules! real {
    ($t:ty, $r:expr, $c:expr) => {
        impl Real for $t {
            const REAL: DType = $r;
            const COMPLEX: DType = $c;
            fn planners() -> &'static Mutex<Planners<$t>> {
                static P: OnceLock<Mutex<Planners<$t>>> = OnceLock::new();
                P.get_or_init(|| {
                    Mutex::new(Planners {
                        complex: FftPlanner::new(),
                        real: RealFftPlanner::new(),
                    })
                })
            }
            fn of(x: f64) -> $t {
                x as $t
            }
        }
    };
}
real!(f32, DType::F32, DType::C32);
real!(f64, DType::F64, DType::C64);

fn lock<T: Real>() -> std::sync::MutexGuard<'static, Planners<T>> {
    T::planners().lock().unwrap_or_else(|e| e.into_inner())
}

fn complex_plan<T: Real>(n: usize, inverse: bool) -> Arc<dyn Fft<T>> {
    let dir = if inverse {
        FftDirection::Inverse
    } else {
        FftDirection::Forward
    };
    lock::<T>().complex.plan_fft(n, dir)
}

fn r2c_plan<T: Real>(n: usize) -> Arc<dyn RealToComplex<T>> {
    lock::<T>().real.plan_fft_forward(n)
}

fn c2r_plan<T: Real>(n: usize) -> Arc<dyn ComplexToReal<T>> {
    lock::<T>().real.plan_fft_inverse(n)
}

/// Raw element pointer shared by the tasks of one pass.
#[derive(Clone, Copy)]
struct Ptr<E>(*mut E);
// SAFETY: the source is only read; each output line is written by exactly one task, and the
// tensors outlive the pass.
unsafe impl<E> Send for Ptr<E> {}
unsafe impl<E> Sync for Ptr<E> {}

fn base<E>(t: &Tensor) -> *mut E {
    // SAFETY: `offset` is in bounds of the storage (or the tensor is empty and never read).
    unsafe { (t.storage().as_mut_ptr() as *mut E).add(t.offset()) }
}

/// A worker's buffer of `len` elements of `E` (dtype `dtype`), from the engine's pool and not
/// zeroed: callers write every element before reading it.
struct Buf<E> {
    _storage: Tensor,
    ptr: *mut E,
    len: usize,
}

impl<E> Buf<E> {
    fn new(e: &CpuEngine, name: &str, dtype: DType, len: usize) -> Result<Buf<E>> {
        let t = Tensor::empty(name, dtype, &[len.max(1)], Some(&e.buffer_pool), false)?;
        Ok(Buf {
            ptr: base::<E>(&t),
            _storage: t,
            len,
        })
    }

    fn get(&mut self) -> &mut [E] {
        // SAFETY: the pooled storage holds `len` elements, owned by this worker alone.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// The complex buffer of `len` elements.
fn cbuf<T: Real>(e: &CpuEngine, name: &str, len: usize) -> Result<Buf<Complex<T>>> {
    Buf::new(e, name, T::COMPLEX, len)
}

/// A worker's state: its buffers, or the error of allocating them (returned by its first chunk).
type State<S> = Result<S>;

/// A complex pass's worker buffers: the plan's scratch, and the gathered lines of a strided pass.
type C2cBufs<T> = (Buf<Complex<T>>, Option<Buf<Complex<T>>>);
/// The real-to-complex pass's: scratch, gathered real lines, transformed lines.
type R2cBufs<T> = (Buf<Complex<T>>, Buf<T>, Buf<Complex<T>>);
/// The complex-to-real pass's: scratch, gathered half spectra, transformed real lines.
type C2rBufs<T> = (Buf<Complex<T>>, Buf<Complex<T>>, Buf<T>);

fn state<'a, S>(st: &'a mut State<S>, name: &str) -> Result<&'a mut S> {
    if st.is_err() {
        let placeholder = Err(Error::internal(name, "fft: worker buffers unavailable"));
        std::mem::replace(st, placeholder)?;
    }
    st.as_mut()
        .map_err(|_| Error::internal(name, "fft: worker buffers unavailable"))
}

/// The lines along `axis` of a shape: line `l` is the column-major multi-index `l` over the
/// other axes.
struct Lines {
    dims: Vec<usize>,
    src: Vec<isize>,
    dst: Vec<isize>,
    count: usize,
    src_step: isize,
    dst_step: isize,
}

impl Lines {
    fn new(shape: &[usize], axis: usize, src: &[isize], dst: &[isize]) -> Lines {
        let others = (0..shape.len()).filter(|&a| a != axis);
        let (mut dims, mut s, mut d) = (Vec::new(), Vec::new(), Vec::new());
        for a in others {
            dims.push(shape[a]);
            s.push(src[a]);
            d.push(dst[a]);
        }
        Lines {
            count: dims.iter().product(),
            dims,
            src: s,
            dst: d,
            src_step: src[axis],
            dst_step: dst[axis],
        }
    }

    /// `(source offset, destination offset)` of line `l`.
    fn offsets(&self, mut l: usize) -> (isize, isize) {
        let (mut so, mut d) = (0isize, 0isize);
        for i in 0..self.dims.len() {
            let k = l % self.dims[i];
            l /= self.dims[i];
            so += k as isize * self.src[i];
            d += k as isize * self.dst[i];
        }
        (so, d)
    }
}

/// Elements of `E` in a cache line: the padding of a worker's line buffers.
fn pad<E>() -> usize {
    64 / std::mem::size_of::<E>().max(1)
}

/// The line stride of a worker's buffer of lines of length `n`: one cache line more, so that
/// neighbouring lines never share an L1 set when `n` elements span a multiple of 4 KB.
fn padded<E>(n: usize) -> usize {
    n + pad::<E>()
}

/// Elements per line read in one tile of [`gather_lines`].
const GATHER_TILE: usize = 8;

/// Copy the lines starting at `offs[b].0` (element step `step`) of `src` into
/// `dst[b·ld..b·ld + n]`. Strided lines are read in tiles of [`GATHER_TILE`] elements across all
/// the lines of the chunk: the lines are neighbours in a compact source, so each cache line read
/// serves every line it holds (a 512-long column-major row steps 4 KB: read one line at a time,
/// every element of it lands in one L1 set and is evicted before its neighbours are used).
fn gather_lines<E: Copy>(
    name: &str,
    src: *mut E,
    step: isize,
    offs: &[(isize, isize)],
    n: usize,
    ld: usize,
    dst: &mut [E],
) -> Result<()> {
    // The buffers hold `per` padded lines and a chunk has at most `per` lines.
    if !offs.is_empty() && (offs.len() - 1) * ld + n > dst.len() {
        return Err(Error::internal(
            name,
            "fft: a chunk larger than its line buffer",
        ));
    }
    if step == 1 {
        for (b, &(so, _)) in offs.iter().enumerate() {
            // SAFETY: a contiguous line of the source view.
            dst[b * ld..b * ld + n]
                .copy_from_slice(unsafe { std::slice::from_raw_parts(src.offset(so), n) });
        }
        return Ok(());
    }
    let d = dst.as_mut_ptr();
    for j0 in (0..n).step_by(GATHER_TILE) {
        let j1 = (j0 + GATHER_TILE).min(n);
        for (b, &(so, _)) in offs.iter().enumerate() {
            for j in j0..j1 {
                // SAFETY: in bounds of the source view; `b·ld + j < dst.len()` (checked above).
                unsafe { *d.add(b * ld + j) = *src.offset(so + j as isize * step) };
            }
        }
    }
    Ok(())
}

/// Run `chunk(state, first_line, line_count)` over every chunk of `lines` lines, on the
/// engine's workers when the pass holds at least [`PARALLEL_MIN_WORK`] elements; the first error
/// wins. `init` makes a worker's state (its buffers), once per worker task rather than per chunk.
fn for_chunks<S>(
    e: &CpuEngine,
    name: &str,
    lines: usize,
    len: usize,
    per: usize,
    init: impl Fn() -> State<S> + Sync + Send,
    chunk: impl Fn(&mut S, usize, usize) -> Result<()> + Sync + Send,
) -> Result<()> {
    let per = per.max(1);
    let chunks = lines.div_ceil(per);
    let cancel = Cancel::current();
    let run = |st: &mut State<S>, c: usize| -> Result<()> {
        cancel.check(name)?;
        let l0 = c * per;
        chunk(state(st, name)?, l0, per.min(lines - l0))
    };
    match e.parallel_pool() {
        Some(pool) if chunks >= 2 && lines.saturating_mul(len) >= PARALLEL_MIN_WORK => {
            pool.install(|| (0..chunks).into_par_iter().try_for_each_init(&init, run))
        }
        _ => {
            let mut st = init();
            (0..chunks).try_for_each(|c| run(&mut st, c))
        }
    }
}

/// One complex pass along `axis`: `dst` lines = transform of `src` lines (`src` may be `dst`),
/// multiplied by `scale` unless it is 1.
#[allow(clippy::too_many_arguments)]
fn c2c_pass<T: Real>(
    e: &CpuEngine,
    name: &str,
    shape: &[usize],
    axis: usize,
    src: (*mut Complex<T>, &[isize]),
    dst: (*mut Complex<T>, &[isize]),
    inverse: bool,
    scale: f64,
) -> Result<()> {
    let n = shape[axis];
    let plan = complex_plan::<T>(n, inverse);
    let lines = Lines::new(shape, axis, src.1, dst.1);
    let (sp, dp) = (Ptr(src.0), Ptr(dst.0));
    let scale = (scale != 1.0).then(|| T::of(scale));
    let scratch_len = plan.get_inplace_scratch_len();
    let in_place_ok = lines.dst_step == 1;
    // Contiguous output lines: lines `l0..l0+k` are the block `dst[l0·n..(l0+k)·n]` (a compact
    // column-major tensor whose axis has stride 1 has only size-1 axes before it).
    let per = if in_place_ok {
        (PARALLEL_MIN_WORK / n.max(1)).clamp(1, 64)
    } else {
        LINES_PER_CHUNK
    };
    let init = || -> State<C2cBufs<T>> {
        let buf = if in_place_ok {
            None
        } else {
            Some(cbuf::<T>(
                e,
                name,
                per.min(lines.count) * padded::<Complex<T>>(n),
            )?)
        };
        Ok((cbuf::<T>(e, name, scratch_len)?, buf))
    };
    for_chunks(
        e,
        name,
        lines.count,
        n,
        per,
        init,
        |(scratch, buf), l0, k| {
            let scratch = scratch.get();
            let (sp, dp) = (sp, dp);
            if in_place_ok {
                // SAFETY: lines l0..l0+k of the compact destination are this chunk's alone.
                let block = unsafe { std::slice::from_raw_parts_mut(dp.0.add(l0 * n), k * n) };
                if sp.0 != dp.0 || lines.src_step != 1 {
                    let offs: Vec<(isize, isize)> = (0..k).map(|b| lines.offsets(l0 + b)).collect();
                    gather_lines(name, sp.0, lines.src_step, &offs, n, n, block)?;
                }
                plan.process_with_scratch(block, scratch);
                if let Some(s) = scale {
                    block.iter_mut().for_each(|v| *v = *v * s);
                }
                return Ok(());
            }
            let Some(buf) = buf.as_mut() else {
                return Err(Error::internal(
                    name,
                    "fft: strided pass without its line buffer",
                ));
            };
            let buf = buf.get();
            let ld = padded::<Complex<T>>(n);
            let offs: Vec<(isize, isize)> = (0..k).map(|b| lines.offsets(l0 + b)).collect();
            gather_lines(name, sp.0, lines.src_step, &offs, n, ld, buf)?;
            for b in 0..k {
                plan.process_with_scratch(&mut buf[b * ld..b * ld + n], scratch);
            }
            for j in 0..n {
                for (b, &(_, d)) in offs.iter().enumerate() {
                    let v = buf[b * ld + j];
                    let v = scale.map_or(v, |s| v * s);
                    // SAFETY: each destination line belongs to this chunk only.
                    unsafe { *dp.0.offset(d + j as isize * lines.dst_step) = v };
                }
            }
            Ok(())
        },
    )
}

/// Execute `fft` with the output metadata already inferred.
pub(crate) fn fft(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    c: &FftConfig,
    meta: &OutMeta,
) -> Result<Tensor> {
    let out = Tensor::empty(name, meta.dtype, &meta.shape, Some(&e.buffer_pool), false)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let inverse_scale = 1.0 / c.size() as f64;
    match (c.fft_type, x.dtype()) {
        (FftType::Fft, DType::C32) => complex::<f32>(e, name, x, &out, c, false, 1.0)?,
        (FftType::Fft, DType::C64) => complex::<f64>(e, name, x, &out, c, false, 1.0)?,
        (FftType::Ifft, DType::C32) => complex::<f32>(e, name, x, &out, c, true, inverse_scale)?,
        (FftType::Ifft, DType::C64) => complex::<f64>(e, name, x, &out, c, true, inverse_scale)?,
        (FftType::Rfft, DType::F32) => rfft::<f32>(e, name, x, &out, c)?,
        (FftType::Rfft, DType::F64) => rfft::<f64>(e, name, x, &out, c)?,
        (FftType::Irfft, DType::C32) => irfft::<f32>(e, name, x, &out, c, inverse_scale)?,
        (FftType::Irfft, DType::C64) => irfft::<f64>(e, name, x, &out, c, inverse_scale)?,
        (t, d) => {
            return Err(Error::dtype(
                name,
                format!("{} does not take a {d} operand", t.name()),
            ))
        }
    }
    Ok(out)
}

/// `FFT` / `IFFT`: the passes over `c.axes`, the first reading `x`, the last scaling.
fn complex<T: Real>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    out: &Tensor,
    c: &FftConfig,
    inverse: bool,
    scale: f64,
) -> Result<()> {
    let shape = out.shape();
    let dst = base::<Complex<T>>(out);
    let last = c.axes.len() - 1;
    for (i, &ax) in c.axes.iter().enumerate() {
        let src = if i == 0 {
            (base::<Complex<T>>(x), x.strides())
        } else {
            (dst, out.strides())
        };
        let s = if i == last { scale } else { 1.0 };
        c2c_pass::<T>(e, name, shape, ax, src, (dst, out.strides()), inverse, s)?;
    }
    Ok(())
}

/// `RFFT`: the real-to-complex pass over the last axis (reading `x`), then complex passes over
/// the other axes in place.
fn rfft<T: Real>(e: &CpuEngine, name: &str, x: &Tensor, out: &Tensor, c: &FftConfig) -> Result<()> {
    let k = c.axes.len() - 1;
    let ax = c.axes[k];
    let n = c.lengths[k];
    let h = n / 2 + 1;
    let plan = r2c_plan::<T>(n);
    let scratch_len = plan.get_scratch_len();
    let lines = Lines::new(x.shape(), ax, x.strides(), out.strides());
    let (sp, dp) = (Ptr(base::<T>(x)), Ptr(base::<Complex<T>>(out)));
    let per = LINES_PER_CHUNK.min(lines.count);
    let init = || -> State<R2cBufs<T>> {
        Ok((
            cbuf::<T>(e, name, scratch_len)?,
            Buf::new(e, name, T::REAL, per * padded::<T>(n))?,
            cbuf::<T>(e, name, per * h)?,
        ))
    };
    for_chunks(e, name, lines.count, n, per, init, |bufs, l0, cnt| {
        let (sp, dp) = (sp, dp);
        let (scratch, input, output) = (bufs.0.get(), bufs.1.get(), bufs.2.get());
        let offs: Vec<(isize, isize)> = (0..cnt).map(|b| lines.offsets(l0 + b)).collect();
        let ld = padded::<T>(n);
        gather_lines(name, sp.0, lines.src_step, &offs, n, ld, input)?;
        for b in 0..cnt {
            let line = &mut input[b * ld..b * ld + n];
            plan.process_with_scratch(line, &mut output[b * h..(b + 1) * h], scratch)
                .map_err(|err| Error::internal(name, format!("realfft: {err}")))?;
        }
        // Frequency-major: neighbouring lines are neighbours in the compact output.
        for j in 0..h {
            for (b, &(_, d)) in offs.iter().enumerate() {
                // SAFETY: each destination line belongs to this chunk only.
                unsafe { *dp.0.offset(d + j as isize * lines.dst_step) = output[b * h + j] };
            }
        }
        Ok(())
    })?;
    let dst = base::<Complex<T>>(out);
    for &a in &c.axes[..k] {
        c2c_pass::<T>(
            e,
            name,
            out.shape(),
            a,
            (dst, out.strides()),
            (dst, out.strides()),
            false,
            1.0,
        )?;
    }
    Ok(())
}

/// `IRFFT`: inverse complex passes over all axes but the last (into a compact temporary), then
/// the complex-to-real pass over the last axis, scaled by `1/N`.
fn irfft<T: Real>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    out: &Tensor,
    c: &FftConfig,
    scale: f64,
) -> Result<()> {
    let k = c.axes.len() - 1;
    let ax = c.axes[k];
    let n = c.lengths[k];
    let h = n / 2 + 1;
    let tmp;
    let src: &Tensor = if k == 0 {
        x
    } else {
        tmp = Tensor::empty(name, x.dtype(), x.shape(), Some(&e.buffer_pool), false)?;
        let dst = base::<Complex<T>>(&tmp);
        for (i, &a) in c.axes[..k].iter().enumerate() {
            let s = if i == 0 {
                (base::<Complex<T>>(x), x.strides())
            } else {
                (dst, tmp.strides())
            };
            c2c_pass::<T>(e, name, x.shape(), a, s, (dst, tmp.strides()), true, 1.0)?;
        }
        &tmp
    };
    let plan = c2r_plan::<T>(n);
    let scratch_len = plan.get_scratch_len();
    let lines = Lines::new(src.shape(), ax, src.strides(), out.strides());
    let (sp, dp) = (Ptr(base::<Complex<T>>(src)), Ptr(base::<T>(out)));
    let s = T::of(scale);
    let per = LINES_PER_CHUNK.min(lines.count);
    let init = || -> State<C2rBufs<T>> {
        Ok((
            cbuf::<T>(e, name, scratch_len)?,
            cbuf::<T>(e, name, per * padded::<Complex<T>>(h))?,
            Buf::new(e, name, T::REAL, per * padded::<T>(n))?,
        ))
    };
    for_chunks(e, name, lines.count, n, per, init, |bufs, l0, cnt| {
        let (sp, dp) = (sp, dp);
        let (scratch, input, output) = (bufs.0.get(), bufs.1.get(), bufs.2.get());
        let offs: Vec<(isize, isize)> = (0..cnt).map(|b| lines.offsets(l0 + b)).collect();
        let (ldh, ldn) = (padded::<Complex<T>>(h), padded::<T>(n));
        gather_lines(name, sp.0, lines.src_step, &offs, h, ldh, input)?;
        for b in 0..cnt {
            let line = &mut input[b * ldh..b * ldh + h];
            // The imaginary parts of the zero and Nyquist frequencies do not enter a real
            // signal's spectrum: ignored, as NumPy's (pocketfft's) c2r does.
            line[0].im = T::zero();
            if n.is_multiple_of(2) {
                line[h - 1].im = T::zero();
            }
            plan.process_with_scratch(line, &mut output[b * ldn..b * ldn + n], scratch)
                .map_err(|err| Error::internal(name, format!("realfft: {err}")))?;
        }
        // Sample-major: neighbouring lines are neighbours in the compact output.
        for j in 0..n {
            for (b, &(_, d)) in offs.iter().enumerate() {
                // SAFETY: each destination line belongs to this chunk only.
                unsafe { *dp.0.offset(d + j as isize * lines.dst_step) = output[b * ldn + j] * s };
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tenferro_ops::Op;
    use tenferro_runtime::Engine;
    use tenferro_tensor::Complex64;

    fn naive(x: &[Complex64], inverse: bool) -> Vec<Complex64> {
        let n = x.len();
        let sign = if inverse { 1.0 } else { -1.0 };
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .fold(Complex64::new(0.0, 0.0), |acc, (j, v)| {
                        let t = sign * 2.0 * std::f64::consts::PI * (j * k % n) as f64 / n as f64;
                        acc + v * Complex64::new(t.cos(), t.sin())
                    })
            })
            .collect()
    }

    #[test]
    fn strided_batched_fft_matches_the_naive_dft_on_every_axis() {
        for threads in [1, 2] {
            let e = CpuEngine::new(Some(threads)).unwrap();
            let shape = [5usize, 6, 7];
            let data: Vec<Complex64> = (0..210)
                .map(|i| Complex64::new((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos()))
                .collect();
            let x = Tensor::from_vec(&shape, data).unwrap();
            for ax in 0..3 {
                let cfg = FftConfig {
                    fft_type: FftType::Fft,
                    axes: vec![ax],
                    lengths: vec![shape[ax]],
                };
                let op = Op::Fft(cfg);
                let meta = tenferro_ops::infer(&op, &[(x.dtype(), x.shape())]).unwrap();
                let y = e.execute(&op, &[&x], &meta).unwrap();
                let xv = x.to_vec::<Complex64>();
                let yv = y.to_vec::<Complex64>();
                // Lines along `ax` (column-major).
                let st: Vec<usize> = vec![1, shape[0], shape[0] * shape[1]];
                for l in 0..210 / shape[ax] {
                    let mut idx = [0usize; 3];
                    let mut r = l;
                    for a in (0..3).filter(|&a| a != ax) {
                        idx[a] = r % shape[a];
                        r /= shape[a];
                    }
                    let at = |j: usize| {
                        let mut i = idx;
                        i[ax] = j;
                        i[0] * st[0] + i[1] * st[1] + i[2] * st[2]
                    };
                    let line: Vec<Complex64> = (0..shape[ax]).map(|j| xv[at(j)]).collect();
                    let want = naive(&line, false);
                    for j in 0..shape[ax] {
                        assert!((yv[at(j)] - want[j]).norm() < 1e-12, "axis {ax} line {l}");
                    }
                }
            }
        }
    }
}
