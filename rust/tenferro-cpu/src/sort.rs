//! Sorting, searching and scans: `sort`, `argsort`, `argmax`, `argmin`, `searchsorted`,
//! `cumsum`, `cumprod`.
//!
//! Every kernel works on *lines*: the 1-D slices along the op's axis, one per position of the
//! other axes. Lines are split across the engine's workers by [`CpuEngine::drive`] (its
//! thresholds and cancellation pieces), each worker gathering a line into a buffer, working on
//! it and writing the compact output line.
//!
//! Order: each element maps to an unsigned key whose integer order is NumPy's sort order
//! (floats by the sign-flip transform of their bits, Herf 2001 "Radix tricks"; NaN → the
//! largest key, `-0.0` and `0.0` one key; complex by real part, then imaginary part, as
//! NumPy's `CLT`). Keys of up to 64 bits are sorted by an LSD radix sort (11-bit digits, all
//! histograms in one pass, passes whose digit is constant skipped), which is stable; 128-bit
//! keys (complex128) and short lines use the standard library's stable sort. The value sort
//! of real dtypes sorts a bijective key (NaNs moved to the end first, in input order), maps it
//! back, and restores the input order of `-0.0`/`0.0` inside the run of zeros, so the output is
//! exactly NumPy's stable sort (`kind='stable'`).

use crate::cancel::Cancel;
use crate::strided::{SendConstPtr, SendPtr};
use crate::CpuEngine;
use tenferro_tensor::{Complex32, Complex64, DType, Element, Error, Result, Tensor};

/// Value sorts of lines shorter than this use the comparison sort (pdqsort on the keys): the
/// radix sort's six 2048-entry histograms cost about as much as `n log n` comparisons there.
const SORT_RADIX_MIN: usize = 4096;
/// The same for `argsort` (its comparison sort reads the keys through the indices: dearer).
const ARGSORT_RADIX_MIN: usize = 1024;
/// Bits per radix digit.
const RB: u32 = 11;
const RSIZE: usize = 1 << RB;

/// An unsigned sort key.
pub(crate) trait RadixKey: Copy + Ord + Send + Sync + Default {
    /// Width in bits.
    const BITS: u32;
    /// Whether the radix sort applies (else the comparison sort).
    const RADIX: bool;
    /// The `RB`-bit digit at `shift`.
    fn digit(self, shift: u32) -> usize;
    /// Bitwise not (descending order).
    fn not(self) -> Self;
}

macro_rules! radix_key {
    ($($t:ty, $radix:literal);*) => {$(
        impl RadixKey for $t {
            const BITS: u32 = <$t>::BITS;
            const RADIX: bool = $radix;
            #[inline(always)]
            fn digit(self, shift: u32) -> usize {
                ((self >> shift) as usize) & (RSIZE - 1)
            }
            #[inline(always)]
            fn not(self) -> Self {
                !self
            }
        }
    )*};
}
radix_key!(u32, true; u64, true; u128, false);

/// The sort order of a dtype.
pub(crate) trait Keyed: Element {
    /// Key type.
    type K: RadixKey;
    /// NaN (either part, for complex).
    fn is_nan(self) -> bool;
    /// The canonical key: NaN the largest, `-0.0 == 0.0`; complex lexicographic.
    fn key(self) -> Self::K;
    /// The key of descending order, NaN still the largest (last).
    fn key_desc(self) -> Self::K;
}

/// Dtypes whose value sort maps a bijective key back (real dtypes).
pub(crate) trait ValueKey: Keyed {
    /// A bijective order-preserving key of a non-NaN value (`-0.0 < 0.0`).
    fn vkey(self) -> Self::K;
    /// Inverse of [`ValueKey::vkey`].
    fn from_vkey(k: Self::K) -> Self;
    /// `-0.0` or `0.0`.
    fn is_zero(self) -> bool;
}

macro_rules! float_keyed {
    ($t:ty, $k:ty) => {
        impl Keyed for $t {
            type K = $k;
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn key(self) -> $k {
                if self.is_nan() {
                    <$k>::MAX
                } else if self == 0.0 {
                    (0.0 as $t).vkey()
                } else {
                    self.vkey()
                }
            }
            #[inline(always)]
            fn key_desc(self) -> $k {
                if self.is_nan() {
                    <$k>::MAX
                } else {
                    // Non-NaN keys are >= 1 (the key 0 is a negative NaN), so `!k < MAX`.
                    !self.key()
                }
            }
        }
        impl ValueKey for $t {
            #[inline(always)]
            fn vkey(self) -> $k {
                const SIGN: $k = 1 << (<$k>::BITS - 1);
                let b = self.to_bits();
                if b & SIGN != 0 {
                    !b
                } else {
                    b | SIGN
                }
            }
            #[inline(always)]
            fn from_vkey(k: $k) -> $t {
                const SIGN: $k = 1 << (<$k>::BITS - 1);
                <$t>::from_bits(if k & SIGN != 0 { k & !SIGN } else { !k })
            }
            #[inline(always)]
            fn is_zero(self) -> bool {
                self == 0.0
            }
        }
    };
}
float_keyed!(f64, u64);
float_keyed!(f32, u32);

macro_rules! int_keyed {
    ($t:ty, $k:ty, $sign:expr) => {
        impl Keyed for $t {
            type K = $k;
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn key(self) -> $k {
                self.vkey()
            }
            #[inline(always)]
            fn key_desc(self) -> $k {
                !self.vkey()
            }
        }
        impl ValueKey for $t {
            #[inline(always)]
            fn vkey(self) -> $k {
                (self as $k) ^ $sign
            }
            #[inline(always)]
            fn from_vkey(k: $k) -> $t {
                (k ^ $sign) as $t
            }
            #[inline(always)]
            fn is_zero(self) -> bool {
                false
            }
        }
    };
}
int_keyed!(i64, u64, 1 << 63);
int_keyed!(i32, u32, 1 << 31);

impl Keyed for bool {
    type K = u32;
    #[inline(always)]
    fn is_nan(self) -> bool {
        false
    }
    #[inline(always)]
    fn key(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn key_desc(self) -> u32 {
        !(self as u32)
    }
}

impl ValueKey for bool {
    #[inline(always)]
    fn vkey(self) -> u32 {
        self as u32
    }
    #[inline(always)]
    fn from_vkey(k: u32) -> bool {
        k != 0
    }
    #[inline(always)]
    fn is_zero(self) -> bool {
        false
    }
}

macro_rules! complex_keyed {
    ($t:ty, $k:ty, $half:ty) => {
        impl Keyed for $t {
            type K = $k;
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.re.is_nan() || self.im.is_nan()
            }
            #[inline(always)]
            fn key(self) -> $k {
                ((self.re.key() as $k) << <$half>::BITS) | self.im.key() as $k
            }
            #[inline(always)]
            fn key_desc(self) -> $k {
                ((self.re.key_desc() as $k) << <$half>::BITS) | self.im.key_desc() as $k
            }
        }
    };
}
complex_keyed!(Complex32, u64, u32);
complex_keyed!(Complex64, u128, u64);

/// Stable LSD radix sort of `keys` carrying `pay` (a slice of `()` when nothing rides along).
/// `kbuf`/`pbuf` are scratch of the same lengths.
fn radix_sort<K: RadixKey, P: Copy>(keys: &mut [K], pay: &mut [P], kbuf: &mut [K], pbuf: &mut [P]) {
    let n = keys.len();
    let passes = K::BITS.div_ceil(RB) as usize;
    let mut hist = vec![[0usize; RSIZE]; passes];
    for &k in keys.iter() {
        for (p, h) in hist.iter_mut().enumerate() {
            h[k.digit(p as u32 * RB)] += 1;
        }
    }
    let mut in_buf = false;
    for (p, h) in hist.iter_mut().enumerate() {
        let shift = p as u32 * RB;
        if h.contains(&n) {
            continue; // one digit value: this pass would not move anything
        }
        let mut sum = 0;
        for c in h.iter_mut() {
            let t = *c;
            *c = sum;
            sum += t;
        }
        let (sk, sp, dk, dp) = if in_buf {
            (&*kbuf, &*pbuf, &mut *keys, &mut *pay)
        } else {
            (&*keys, &*pay, &mut *kbuf, &mut *pbuf)
        };
        for i in 0..n {
            let k = sk[i];
            let d = k.digit(shift);
            let at = h[d];
            h[d] = at + 1;
            dk[at] = k;
            dp[at] = sp[i];
        }
        in_buf = !in_buf;
    }
    if in_buf {
        keys.copy_from_slice(kbuf);
        pay.copy_from_slice(pbuf);
    }
}

/// Scratch of one worker, reused across its lines.
struct Scratch<K, T> {
    keys: Vec<K>,
    kbuf: Vec<K>,
    idx: Vec<u32>,
    ibuf: Vec<u32>,
    vals: Vec<T>,
}

impl<K: RadixKey, T: Copy> Scratch<K, T> {
    fn new() -> Self {
        Scratch {
            keys: Vec::new(),
            kbuf: Vec::new(),
            idx: Vec::new(),
            ibuf: Vec::new(),
            vals: Vec::new(),
        }
    }
}

/// The stable sorting permutation of `line` into `perm`.
fn argsort_line<T: Keyed>(line: &[T], desc: bool, s: &mut Scratch<T::K, T>, perm: &mut Vec<usize>) {
    let n = line.len();
    perm.clear();
    let key = |v: T| if desc { v.key_desc() } else { v.key() };
    if T::K::RADIX && n >= ARGSORT_RADIX_MIN && n <= u32::MAX as usize {
        s.keys.clear();
        s.keys.extend(line.iter().map(|&v| key(v)));
        s.idx.clear();
        s.idx.extend(0..n as u32);
        s.kbuf.resize(n, T::K::default());
        s.ibuf.resize(n, 0);
        radix_sort(&mut s.keys, &mut s.idx, &mut s.kbuf, &mut s.ibuf);
        perm.extend(s.idx.iter().map(|&i| i as usize));
    } else {
        s.keys.clear();
        s.keys.extend(line.iter().map(|&v| key(v)));
        perm.extend(0..n);
        let keys = &s.keys;
        perm.sort_by_key(|&i| keys[i]);
    }
}

/// Sort `line` (real dtypes) in place: exactly NumPy's stable sort (module docs).
fn sort_line<T: ValueKey>(line: &mut [T], desc: bool, s: &mut Scratch<T::K, T>) {
    let n = line.len();
    // NaNs to the end, in input order.
    s.vals.clear();
    let mut m = 0;
    for i in 0..n {
        let v = line[i];
        if v.is_nan() {
            s.vals.push(v);
        } else {
            line[m] = v;
            m += 1;
        }
    }
    line[m..].copy_from_slice(&s.vals);
    let body = &mut line[..m];
    s.keys.clear();
    if desc {
        s.keys.extend(body.iter().map(|&v| v.vkey().not()));
    } else {
        s.keys.extend(body.iter().map(|&v| v.vkey()));
    }
    // Zeros in input order (their signs), restored into the zero run below.
    s.vals.clear();
    s.vals.extend(body.iter().copied().filter(|v| v.is_zero()));
    if T::K::RADIX && m >= SORT_RADIX_MIN {
        s.kbuf.resize(m, T::K::default());
        let mut unit = vec![(); m];
        let mut ubuf = vec![(); m];
        radix_sort(&mut s.keys, &mut unit, &mut s.kbuf, &mut ubuf);
    } else {
        s.keys.sort_unstable();
    }
    for (o, &k) in body.iter_mut().zip(&s.keys) {
        *o = T::from_vkey(if desc { k.not() } else { k });
    }
    if !s.vals.is_empty() {
        if let Some(start) = body.iter().position(|v| v.is_zero()) {
            body[start..start + s.vals.len()].copy_from_slice(&s.vals);
        }
    }
}

/// Offsets of the start of every line along `axis` (the other axes in column-major order),
/// for a tensor with `shape`, `strides` and `offset`.
fn line_starts(shape: &[usize], strides: &[isize], offset: isize, axis: usize) -> Vec<isize> {
    let mut starts = vec![offset];
    for (a, (&d, &st)) in shape.iter().zip(strides).enumerate() {
        if a == axis {
            continue;
        }
        let prev = std::mem::take(&mut starts);
        starts.reserve(prev.len() * d);
        for j in 0..d {
            starts.extend(prev.iter().map(|&o| o + j as isize * st));
        }
    }
    starts
}

fn col_major(shape: &[usize]) -> Vec<isize> {
    let mut acc = 1isize;
    shape
        .iter()
        .map(|&d| {
            let s = acc;
            acc *= d as isize;
            s
        })
        .collect()
}

/// Per-line driver: `body(input line, output pointer, output stride, scratch)` for each line,
/// lines split across the pool. The output has `out_shape` (compact); `keep_axis`: the output
/// has the axis (else it was removed and each line writes one element).
#[allow(clippy::too_many_arguments)]
fn for_lines<T: Element, O: Element, S>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    out: &Tensor,
    keep_axis: bool,
    cost: usize,
    mk: impl Fn() -> S + Sync,
    body: impl Fn(&mut [T], *mut O, isize, &mut S) + Sync,
) -> Result<()> {
    let n = x.shape()[axis];
    let istarts = line_starts(x.shape(), x.strides(), x.offset() as isize, axis);
    let (ostarts, ostride) = if keep_axis {
        let st = col_major(x.shape());
        (line_starts(x.shape(), &st, 0, axis), st[axis])
    } else {
        ((0..istarts.len() as isize).collect(), 0)
    };
    if n == 0 && keep_axis {
        return Ok(());
    }
    let istride = x.strides()[axis];
    let base = SendConstPtr(x.storage().as_ptr() as *const T);
    let optr = SendPtr(out.storage().as_mut_ptr() as *mut O);
    let lines = istarts.len();
    e.drive(lines, n.max(1) * cost, |l0, l1| {
        let mut s = mk();
        let mut buf: Vec<T> = Vec::with_capacity(n);
        for l in l0..l1 {
            buf.clear();
            let p = base.get();
            // SAFETY: every element of the line is inside the input view.
            unsafe {
                let start = p.offset(istarts[l]);
                if istride == 1 {
                    buf.extend_from_slice(std::slice::from_raw_parts(start, n));
                } else {
                    buf.extend((0..n).map(|i| *start.offset(i as isize * istride)));
                }
            }
            // SAFETY: lines write disjoint output positions inside `out`.
            let o = unsafe { optr.get().offset(ostarts[l]) };
            body(&mut buf, o, ostride, &mut s);
        }
    });
    Cancel::current().check(name)
}

/// Cost of sorting one element relative to an add (for the parallel split).
const SORT_COST: usize = 16;

fn write_line<O: Copy>(o: *mut O, stride: isize, vals: impl Iterator<Item = O>) {
    for (i, v) in vals.enumerate() {
        // SAFETY: the caller's line of the output.
        unsafe { *o.offset(i as isize * stride) = v };
    }
}

fn argsort_t<T: Keyed>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    desc: bool,
) -> Result<Tensor> {
    let out = e.alloc(name, DType::I64, x.shape())?;
    for_lines::<T, i64, _>(
        e,
        name,
        x,
        axis,
        &out,
        true,
        SORT_COST,
        || (Scratch::<T::K, T>::new(), Vec::new()),
        |line, o, st, (s, perm)| {
            argsort_line(line, desc, s, perm);
            write_line(o, st, perm.iter().map(|&i| i as i64));
        },
    )?;
    Ok(out)
}

fn sort_real<T: ValueKey>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    desc: bool,
) -> Result<Tensor> {
    let out = e.alloc(name, T::DTYPE, x.shape())?;
    for_lines::<T, T, _>(
        e,
        name,
        x,
        axis,
        &out,
        true,
        SORT_COST,
        Scratch::<T::K, T>::new,
        |line, o, st, s| {
            sort_line(line, desc, s);
            write_line(o, st, line.iter().copied());
        },
    )?;
    Ok(out)
}

fn sort_complex<T: Keyed>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    desc: bool,
) -> Result<Tensor> {
    let out = e.alloc(name, T::DTYPE, x.shape())?;
    for_lines::<T, T, _>(
        e,
        name,
        x,
        axis,
        &out,
        true,
        SORT_COST,
        || (Scratch::<T::K, T>::new(), Vec::new()),
        |line, o, st, (s, perm)| {
            argsort_line(line, desc, s, perm);
            write_line(o, st, perm.iter().map(|&i| line[i]));
        },
    )?;
    Ok(out)
}

/// `sort(x, axis, descending)`.
pub(crate) fn sort(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    desc: bool,
) -> Result<Tensor> {
    match x.dtype() {
        DType::Bool => sort_real::<bool>(e, name, x, axis, desc),
        DType::I32 => sort_real::<i32>(e, name, x, axis, desc),
        DType::I64 => sort_real::<i64>(e, name, x, axis, desc),
        DType::F32 => sort_real::<f32>(e, name, x, axis, desc),
        DType::F64 => sort_real::<f64>(e, name, x, axis, desc),
        DType::C32 => sort_complex::<Complex32>(e, name, x, axis, desc),
        DType::C64 => sort_complex::<Complex64>(e, name, x, axis, desc),
    }
}

/// `argsort(x, axis, descending)` → int64 (stable).
pub(crate) fn argsort(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    desc: bool,
) -> Result<Tensor> {
    match x.dtype() {
        DType::Bool => argsort_t::<bool>(e, name, x, axis, desc),
        DType::I32 => argsort_t::<i32>(e, name, x, axis, desc),
        DType::I64 => argsort_t::<i64>(e, name, x, axis, desc),
        DType::F32 => argsort_t::<f32>(e, name, x, axis, desc),
        DType::F64 => argsort_t::<f64>(e, name, x, axis, desc),
        DType::C32 => argsort_t::<Complex32>(e, name, x, axis, desc),
        DType::C64 => argsort_t::<Complex64>(e, name, x, axis, desc),
    }
}

fn arg_extreme_t<T: Keyed>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    out_shape: &[usize],
    max: bool,
) -> Result<Tensor> {
    let out = e.alloc(name, DType::I64, out_shape)?;
    for_lines::<T, i64, _>(
        e,
        name,
        x,
        axis,
        &out,
        false,
        2,
        || (),
        |line, o, _, _| {
            let at = match line.iter().position(|v| v.is_nan()) {
                Some(i) => i,
                None => {
                    let mut best = 0;
                    let mut bk = line[0].key();
                    for (i, v) in line.iter().enumerate().skip(1) {
                        let k = v.key();
                        if (max && k > bk) || (!max && k < bk) {
                            best = i;
                            bk = k;
                        }
                    }
                    best
                }
            };
            // SAFETY: this line's output element.
            unsafe { *o = at as i64 };
        },
    )?;
    Ok(out)
}

/// `argmax`/`argmin(x, axis)` → int64: the first extreme, or the first NaN.
pub(crate) fn arg_extreme(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    out_shape: &[usize],
    max: bool,
) -> Result<Tensor> {
    match x.dtype() {
        DType::Bool => arg_extreme_t::<bool>(e, name, x, axis, out_shape, max),
        DType::I32 => arg_extreme_t::<i32>(e, name, x, axis, out_shape, max),
        DType::I64 => arg_extreme_t::<i64>(e, name, x, axis, out_shape, max),
        DType::F32 => arg_extreme_t::<f32>(e, name, x, axis, out_shape, max),
        DType::F64 => arg_extreme_t::<f64>(e, name, x, axis, out_shape, max),
        DType::C32 => arg_extreme_t::<Complex32>(e, name, x, axis, out_shape, max),
        DType::C64 => arg_extreme_t::<Complex64>(e, name, x, axis, out_shape, max),
    }
}

fn searchsorted_t<T: Keyed>(
    e: &CpuEngine,
    name: &str,
    sorted: &Tensor,
    values: &Tensor,
    right: bool,
) -> Result<Tensor> {
    let keys: Vec<T::K> = sorted.to_vec::<T>().into_iter().map(T::key).collect();
    let vals: Vec<T> = values.to_vec::<T>();
    let out = e.alloc(name, DType::I64, values.shape())?;
    let optr = SendPtr(out.storage().as_mut_ptr() as *mut i64);
    let cost = (usize::BITS - keys.len().leading_zeros()) as usize + 1;
    e.drive(vals.len(), cost, |i0, i1| {
        for (i, v) in vals.iter().enumerate().take(i1).skip(i0) {
            let k = v.key();
            let at = if right {
                keys.partition_point(|&a| a <= k)
            } else {
                keys.partition_point(|&a| a < k)
            };
            // SAFETY: disjoint output positions; `out` is compact like `vals`' order.
            unsafe { *optr.get().add(i) = at as i64 };
        }
    });
    Cancel::current().check(name)?;
    Ok(out)
}

/// `searchsorted(sorted, values, right)` → int64 of `values`' shape.
pub(crate) fn searchsorted(
    e: &CpuEngine,
    name: &str,
    sorted: &Tensor,
    values: &Tensor,
    right: bool,
) -> Result<Tensor> {
    match sorted.dtype() {
        DType::Bool => searchsorted_t::<bool>(e, name, sorted, values, right),
        DType::I32 => searchsorted_t::<i32>(e, name, sorted, values, right),
        DType::I64 => searchsorted_t::<i64>(e, name, sorted, values, right),
        DType::F32 => searchsorted_t::<f32>(e, name, sorted, values, right),
        DType::F64 => searchsorted_t::<f64>(e, name, sorted, values, right),
        DType::C32 => searchsorted_t::<Complex32>(e, name, sorted, values, right),
        DType::C64 => searchsorted_t::<Complex64>(e, name, sorted, values, right),
    }
}

fn scan_t<T: Element>(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Tensor> {
    let out = e.alloc(name, T::DTYPE, x.shape())?;
    for_lines::<T, T, _>(
        e,
        name,
        x,
        axis,
        &out,
        true,
        1,
        || (),
        |line, o, st, _| {
            for i in 1..line.len() {
                line[i] = f(line[i - 1], line[i]);
            }
            write_line(o, st, line.iter().copied());
        },
    )?;
    Ok(out)
}

/// `cumsum(x, axis)` / `cumprod(x, axis)`: sequential, as NumPy's `add.accumulate`; integers
/// wrap.
pub(crate) fn scan(
    e: &CpuEngine,
    name: &str,
    x: &Tensor,
    axis: usize,
    prod: bool,
) -> Result<Tensor> {
    macro_rules! go {
        ($t:ty, $add:expr, $mul:expr) => {
            if prod {
                scan_t::<$t>(e, name, x, axis, $mul)
            } else {
                scan_t::<$t>(e, name, x, axis, $add)
            }
        };
    }
    match x.dtype() {
        DType::I32 => go!(i32, |a: i32, b| a.wrapping_add(b), |a: i32, b| a
            .wrapping_mul(b)),
        DType::I64 => go!(i64, |a: i64, b| a.wrapping_add(b), |a: i64, b| a
            .wrapping_mul(b)),
        DType::F32 => go!(f32, |a, b| a + b, |a, b| a * b),
        DType::F64 => go!(f64, |a, b| a + b, |a, b| a * b),
        DType::C32 => go!(Complex32, |a, b| a + b, |a, b| a * b),
        DType::C64 => go!(Complex64, |a, b| a + b, |a, b| a * b),
        DType::Bool => Err(Error::internal(name, "bool reached the scan kernel")),
    }
}
