//! [`Dims`]: a tensor's shape and strides, inline (no heap allocation) up to [`INLINE_AXES`]
//! axes. Making a tiny op's output header then costs no `malloc`/`free` pair per vector, while
//! the header stays small enough (56 bytes; a `Tensor` is 80) that moving a tensor by value is
//! a few register moves rather than a `memcpy` call (a 6-axis inline header, 136-byte tensors,
//! measured: the saved allocations came back as `memcpy`).

/// Axes kept inline: vectors, matrices and batches of matrices (the TFIM example's 8×2×8 site
/// tensors) allocate nothing for their metadata.
pub(crate) const INLINE_AXES: usize = 3;

/// Shape and strides (in elements) of one view, of equal length.
#[derive(Clone)]
pub(crate) enum Dims {
    Inline {
        n: u8,
        shape: [usize; INLINE_AXES],
        strides: [isize; INLINE_AXES],
    },
    Heap {
        shape: Box<[usize]>,
        strides: Box<[isize]>,
    },
}

impl Dims {
    /// `shape[i]`, `strides[i]` from `f(i)` for `i < n`.
    #[inline]
    pub(crate) fn from_fn(n: usize, mut f: impl FnMut(usize) -> (usize, isize)) -> Dims {
        if n <= INLINE_AXES {
            let mut shape = [0usize; INLINE_AXES];
            let mut strides = [0isize; INLINE_AXES];
            for i in 0..n {
                (shape[i], strides[i]) = f(i);
            }
            Dims::Inline {
                n: n as u8,
                shape,
                strides,
            }
        } else {
            let (shape, strides): (Vec<usize>, Vec<isize>) = (0..n).map(f).unzip();
            Dims::Heap {
                shape: shape.into_boxed_slice(),
                strides: strides.into_boxed_slice(),
            }
        }
    }

    /// From vectors of equal length (the caller checks).
    pub(crate) fn from_vecs(shape: Vec<usize>, strides: Vec<isize>) -> Dims {
        debug_assert_eq!(shape.len(), strides.len());
        if shape.len() <= INLINE_AXES {
            Dims::from_fn(shape.len(), |i| (shape[i], strides[i]))
        } else {
            Dims::Heap {
                shape: shape.into_boxed_slice(),
                strides: strides.into_boxed_slice(),
            }
        }
    }

    /// A compact column-major layout of `shape` (as [`crate::shape::col_major_strides`]).
    #[inline]
    pub(crate) fn compact(shape: &[usize]) -> Dims {
        let mut acc: isize = 1;
        Dims::from_fn(shape.len(), |i| {
            let s = acc;
            acc = acc.wrapping_mul(shape[i].max(1) as isize);
            (shape[i], s)
        })
    }

    #[inline]
    pub(crate) fn shape(&self) -> &[usize] {
        match self {
            Dims::Inline { n, shape, .. } => &shape[..*n as usize],
            Dims::Heap { shape, .. } => shape,
        }
    }

    #[inline]
    pub(crate) fn strides(&self) -> &[isize] {
        match self {
            Dims::Inline { n, strides, .. } => &strides[..*n as usize],
            Dims::Heap { strides, .. } => strides,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap_agree() {
        for n in 0..=INLINE_AXES + 3 {
            let shape: Vec<usize> = (0..n).map(|i| i + 2).collect();
            let strides = crate::shape::col_major_strides(&shape);
            let a = Dims::compact(&shape);
            let b = Dims::from_vecs(shape.clone(), strides.clone());
            assert_eq!(a.shape(), &shape[..]);
            assert_eq!(a.strides(), &strides[..]);
            assert_eq!(b.shape(), &shape[..]);
            assert_eq!(b.strides(), &strides[..]);
            assert_eq!(matches!(a, Dims::Inline { .. }), n <= INLINE_AXES);
            let c = b.clone();
            assert_eq!(c.shape(), b.shape());
        }
    }

    #[test]
    fn headers_stay_small() {
        // Moves of tensors by value stay inline register/vector moves (no `memcpy` call).
        assert!(std::mem::size_of::<Dims>() <= 56);
        assert!(std::mem::size_of::<crate::Tensor>() <= 80);
    }
}
