//! Strided iteration: NumPy-style broadcast operands coalesced against a compact column-major
//! output, walked in runs along the fastest axis, split into chunks across the engine's pool.

use tenferro_tensor::Tensor;

/// Elements per gather buffer when a run is not unit-stride.
pub(crate) const BLOCK: usize = 256;

/// Iteration plan over `N` input operands for an output of shape `shape` (compact col-major).
pub(crate) struct Plan<const N: usize> {
    /// Coalesced extents (no size-1 axes; at least one axis).
    pub shape: Vec<usize>,
    /// Per-input strides (elements) for the coalesced axes.
    pub strides: [Vec<isize>; N],
    /// Per-input base offsets (elements from the storage base).
    pub bases: [isize; N],
}

impl<const N: usize> Plan<N> {
    /// Build a plan; every input must already be broadcast to `out_shape` (same rank).
    pub fn new(out_shape: &[usize], inputs: [&Tensor; N]) -> Plan<N> {
        let mut shape: Vec<usize> = Vec::with_capacity(out_shape.len());
        let mut strides: [Vec<isize>; N] = std::array::from_fn(|_| Vec::new());
        // The output's stride of the last coalesced axis (the output is compact column-major).
        let mut last_out_stride = 0isize;
        let mut acc = 1isize;
        for (ax, &d) in out_shape.iter().enumerate() {
            if d == 1 {
                continue;
            }
            let merge = !shape.is_empty() && {
                let last = shape.len() - 1;
                let prev_extent = shape[last] as isize;
                (0..N).all(|k| inputs[k].strides()[ax] == strides[k][last] * prev_extent)
                    && acc == last_out_stride * prev_extent
            };
            if merge {
                let last = shape.len() - 1;
                shape[last] *= d;
            } else {
                shape.push(d);
                last_out_stride = acc;
                for k in 0..N {
                    strides[k].push(inputs[k].strides()[ax]);
                }
            }
            acc *= d as isize;
        }
        if shape.is_empty() {
            shape.push(1);
            for s in strides.iter_mut() {
                s.push(0);
            }
        }
        let bases = std::array::from_fn(|k| inputs[k].offset() as isize);
        Plan {
            shape,
            strides,
            bases,
        }
    }

    /// Visit output positions `[start, end)` as runs along axis 0: `f(out_pos, offsets,
    /// run_len, inner_strides)`; offsets are element offsets of each input for the run start.
    pub fn for_runs(
        &self,
        start: usize,
        end: usize,
        mut f: impl FnMut(usize, [isize; N], usize, [isize; N]),
    ) {
        if start >= end {
            return;
        }
        let nd = self.shape.len();
        let mut index = MultiIndex::new(nd);
        let idx = index.as_mut_slice();
        let mut rem = start;
        for ax in 0..nd {
            idx[ax] = rem % self.shape[ax];
            rem /= self.shape[ax];
        }
        let mut off: [isize; N] = std::array::from_fn(|k| {
            self.bases[k]
                + (0..nd)
                    .map(|ax| idx[ax] as isize * self.strides[k][ax])
                    .sum::<isize>()
        });
        let inner: [isize; N] = std::array::from_fn(|k| self.strides[k][0]);
        let mut pos = start;
        while pos < end {
            let run = (self.shape[0] - idx[0]).min(end - pos);
            f(pos, off, run, inner);
            pos += run;
            // Advance: axis 0 moved by `run`; carry into higher axes.
            for k in 0..N {
                off[k] += run as isize * inner[k];
            }
            idx[0] += run;
            let mut ax = 0;
            while ax < nd && idx[ax] == self.shape[ax] {
                for k in 0..N {
                    off[k] -= self.shape[ax] as isize * self.strides[k][ax];
                }
                idx[ax] = 0;
                ax += 1;
                if ax < nd {
                    idx[ax] += 1;
                    for k in 0..N {
                        off[k] += self.strides[k][ax];
                    }
                }
            }
        }
    }
}

/// A zeroed multi-index over `nd` axes, held on the stack up to 8 axes: the strided walkers run
/// on every elementwise op and reduction, and the usual ranks then allocate nothing.
pub(crate) struct MultiIndex {
    small: [usize; 8],
    large: Vec<usize>,
    nd: usize,
}

impl MultiIndex {
    pub fn new(nd: usize) -> Self {
        let large = if nd > 8 { vec![0; nd] } else { Vec::new() };
        MultiIndex {
            small: [0; 8],
            large,
            nd,
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [usize] {
        if self.nd <= 8 {
            &mut self.small[..self.nd]
        } else {
            &mut self.large
        }
    }
}

/// A raw pointer that may cross threads (each thread writes a disjoint range).
#[derive(Clone, Copy)]
pub(crate) struct SendPtr<T>(pub *mut T);
// SAFETY: used only to write disjoint output ranges from pool workers.
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}
impl<T> SendPtr<T> {
    /// The pointer (a method, so closures capture the `Send` wrapper, not the raw field).
    #[inline(always)]
    pub fn get(&self) -> *mut T {
        self.0
    }
}

/// A raw const pointer that may cross threads (read-only input storage).
#[derive(Clone, Copy)]
pub(crate) struct SendConstPtr<T>(pub *const T);
// SAFETY: input storage is immutable while the op runs.
unsafe impl<T> Send for SendConstPtr<T> {}
unsafe impl<T> Sync for SendConstPtr<T> {}
impl<T> SendConstPtr<T> {
    /// The pointer (a method, so closures capture the `Send` wrapper, not the raw field).
    #[inline(always)]
    pub fn get(&self) -> *const T {
        self.0
    }
}

/// Read `len` elements starting at `base + off` with stride `stride` into `buf` (or borrow them
/// directly when unit-stride). `buf` starts uninitialised: only the `len` elements written here
/// are read back (zeroing a whole block per call cost more than a tiny op's work).
///
/// # Safety
/// Every element read must be in bounds of its storage; `len <= BLOCK`.
#[inline]
pub(crate) unsafe fn load<'a, T>(
    base: *const T,
    off: isize,
    stride: isize,
    len: usize,
    buf: &'a mut [std::mem::MaybeUninit<T>; BLOCK],
) -> &'a [T]
where
    T: Copy + 'a,
{
    // SAFETY: caller guarantees bounds; the first `len` elements of `buf` are written before
    // the returned slice covers them.
    unsafe {
        if stride == 1 {
            std::slice::from_raw_parts(base.offset(off), len)
        } else if stride == 0 {
            // A broadcast operand: one value for the whole run.
            let v = *base.offset(off);
            for b in buf.iter_mut().take(len) {
                b.write(v);
            }
            std::slice::from_raw_parts(buf.as_ptr() as *const T, len)
        } else {
            let p = base.offset(off);
            for (i, b) in buf.iter_mut().take(len).enumerate() {
                b.write(*p.offset(i as isize * stride));
            }
            // The buffer outlives the returned slice by the signature's lifetime.
            std::slice::from_raw_parts(buf.as_ptr() as *const T, len)
        }
    }
}
