//! `Tensor`: an immutable strided view (dtype, shape, strides in elements, offset) of a storage.
//! Compact tensors are column-major (leftmost axis fastest). Transpose, reversal, strided slicing
//! and broadcasting only change metadata.

use crate::dims::Dims;
use crate::dtype::{DType, Element, ScalarKind};
use crate::error::{Error, Result};
use crate::shape::{check_permutation, checked_bytes, checked_numel};
use crate::storage::{BufferPool, Storage};
use num_complex::Complex64;
use std::sync::Arc;

/// A Python scalar as seen by the core: weakly typed until combined with a tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Complex(Complex64),
}

impl Scalar {
    /// The weak kind of this scalar.
    pub fn kind(self) -> ScalarKind {
        match self {
            Scalar::Bool(_) => ScalarKind::Bool,
            Scalar::Int(_) => ScalarKind::Int,
            Scalar::Float(_) => ScalarKind::Float,
            Scalar::Complex(_) => ScalarKind::Complex,
        }
    }
}

/// A dense strided tensor view.
#[derive(Clone)]
pub struct Tensor {
    dtype: DType,
    /// Shape and strides (inline up to 3 axes: no allocation for a small op's output header).
    dims: Dims,
    offset: usize,
    storage: Arc<Storage>,
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("dtype", &self.dtype)
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("offset", &self.offset)
            .finish()
    }
}

impl Tensor {
    /// Allocate a compact column-major tensor (contents unspecified unless `zeroed`).
    ///
    /// # Errors
    /// [`Error::Alloc`] if the size overflows or the allocation fails.
    pub fn empty(
        op: &str,
        dtype: DType,
        shape: &[usize],
        pool: Option<&Arc<BufferPool>>,
        zeroed: bool,
    ) -> Result<Tensor> {
        let numel = checked_numel(op, shape)?;
        let bytes = checked_bytes(op, numel, dtype.itemsize())?;
        let storage = Storage::allocate(op, bytes, pool, zeroed)?;
        Ok(Tensor {
            dtype,
            dims: Dims::compact(shape),
            offset: 0,
            storage,
        })
    }

    /// A compact tensor holding `data` in column-major order.
    ///
    /// # Errors
    /// [`Error::Shape`] if `data.len()` is not the product of `shape`.
    pub fn from_vec<T: Element>(shape: &[usize], data: Vec<T>) -> Result<Tensor> {
        let numel = checked_numel("tensor", shape)?;
        if numel != data.len() {
            return Err(Error::shape(
                "tensor",
                format!("{} values do not fill shape {shape:?}", data.len()),
            ));
        }
        let t = Tensor::empty("tensor", T::DTYPE, shape, None, false)?;
        // SAFETY: freshly allocated, exactly `numel` elements.
        unsafe { t.fresh_slice_mut::<T>().copy_from_slice(&data) };
        Ok(t)
    }

    /// A view of `storage` with explicit metadata; validates that every element is in bounds.
    ///
    /// # Errors
    /// [`Error::Shape`] if ranks differ or an element lies outside the storage.
    pub fn from_parts(
        dtype: DType,
        shape: Vec<usize>,
        strides: Vec<isize>,
        offset: usize,
        storage: Arc<Storage>,
    ) -> Result<Tensor> {
        if shape.len() != strides.len() {
            return Err(Error::shape(
                "view",
                format!("shape {shape:?} and strides {strides:?} differ in rank"),
            ));
        }
        let t = Tensor {
            dtype,
            dims: Dims::from_vecs(shape, strides),
            offset,
            storage,
        };
        t.check_bounds()?;
        Ok(t)
    }

    fn check_bounds(&self) -> Result<()> {
        if self.numel() == 0 {
            return Ok(());
        }
        let (lo, hi) = self.offset_range();
        let cap = (self.storage.bytes() / self.dtype.itemsize()) as i128;
        if lo < 0 || hi >= cap {
            return Err(Error::shape(
                "view",
                format!(
                    "view shape {:?} strides {:?} offset {} exceeds storage of {cap} elements",
                    self.shape(),
                    self.strides(),
                    self.offset
                ),
            ));
        }
        Ok(())
    }

    /// Lowest and highest element offsets reached (for non-empty tensors).
    fn offset_range(&self) -> (i128, i128) {
        let mut lo = self.offset as i128;
        let mut hi = lo;
        for (&d, &s) in self.shape().iter().zip(self.strides()) {
            let ext = (d as i128 - 1) * s as i128;
            if ext < 0 {
                lo += ext;
            } else {
                hi += ext;
            }
        }
        (lo, hi)
    }

    /// Element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// Shape (column-major axes order is the same as NumPy's axes order).
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.dims.shape()
    }
    /// Strides in elements (may be zero or negative).
    #[inline]
    pub fn strides(&self) -> &[isize] {
        self.dims.strides()
    }
    /// Offset of element `[0, ..., 0]` from the storage base, in elements.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// The storage behind the view.
    #[inline]
    pub fn storage(&self) -> &Arc<Storage> {
        &self.storage
    }
    /// Rank.
    #[inline]
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }
    /// Number of elements (cannot overflow: it was checked when the storage was allocated, and
    /// views never reach more elements than their storage).
    #[inline]
    pub fn numel(&self) -> usize {
        self.shape().iter().product()
    }

    /// Compact column-major: the layout kernels produce and read fastest.
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        let mut acc = 1isize;
        for (&d, &s) in self.shape().iter().zip(self.strides()) {
            if d == 0 {
                return true;
            }
            if d != 1 && s != acc {
                return false;
            }
            acc *= d as isize;
        }
        true
    }

    /// Compact row-major (C order).
    pub fn is_c_contiguous(&self) -> bool {
        let mut acc = 1isize;
        for (&d, &s) in self.shape().iter().zip(self.strides()).rev() {
            if d == 0 {
                return true;
            }
            if d != 1 && s != acc {
                return false;
            }
            acc *= d as isize;
        }
        true
    }

    /// Pointer to element `[0, ..., 0]`.
    pub fn data_ptr<T: Element>(&self) -> *const T {
        debug_assert_eq!(T::DTYPE, self.dtype);
        // SAFETY: `offset` lies within the storage (checked at construction) or the tensor is
        // empty, in which case the pointer is never dereferenced.
        unsafe { (self.storage.as_ptr() as *const T).add(self.offset) }
    }

    /// The elements as a slice when the tensor is compact column-major.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        if T::DTYPE != self.dtype || !self.is_contiguous() {
            return None;
        }
        let n = self.numel();
        if n == 0 {
            return Some(&[]);
        }
        // SAFETY: compact, in bounds, immutable while shared.
        Some(unsafe { std::slice::from_raw_parts(self.data_ptr::<T>(), n) })
    }

    /// Mutable access to a freshly allocated compact tensor.
    ///
    /// # Safety
    /// The caller must be the only user of the storage (just allocated, not yet shared), and
    /// the tensor must be compact with element type `T`.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn fresh_slice_mut<T: Element>(&self) -> &mut [T] {
        debug_assert!(self.is_contiguous() && T::DTYPE == self.dtype);
        let n = self.numel();
        if n == 0 {
            return &mut [];
        }
        // SAFETY: guaranteed by the caller.
        unsafe { std::slice::from_raw_parts_mut(self.storage.as_mut_ptr() as *mut T, n) }
    }

    /// Copy the elements out in column-major order.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        let mut out = Vec::with_capacity(self.numel());
        self.for_each_offset(|off| {
            // SAFETY: offsets produced by the view are in bounds.
            out.push(unsafe { *(self.storage.as_ptr() as *const T).offset(off) })
        });
        out
    }

    /// Visit the storage offset of every element in column-major order (slow path; kernels use
    /// their own strided loops).
    pub fn for_each_offset(&self, mut f: impl FnMut(isize)) {
        let n = self.numel();
        if n == 0 {
            return;
        }
        let mut idx = vec![0usize; self.ndim()];
        let mut off = self.offset as isize;
        for _ in 0..n {
            f(off);
            for ((i, &d), &s) in idx.iter_mut().zip(self.shape()).zip(self.strides()) {
                *i += 1;
                off += s;
                if *i < d {
                    break;
                }
                off -= s * d as isize;
                *i = 0;
            }
        }
    }

    fn with_meta(&self, shape: Vec<usize>, strides: Vec<isize>, offset: usize) -> Tensor {
        self.with_dims(Dims::from_vecs(shape, strides), offset)
    }

    fn with_dims(&self, dims: Dims, offset: usize) -> Tensor {
        Tensor {
            dtype: self.dtype,
            dims,
            offset,
            storage: self.storage.clone(),
        }
    }

    /// `transpose(perm)` as a view: output axis `i` is input axis `perm[i]`.
    ///
    /// # Errors
    /// [`Error::Axis`] if `perm` is not a permutation of the axes.
    pub fn transpose_view(&self, perm: &[usize]) -> Result<Tensor> {
        check_permutation("transpose", perm, self.ndim())?;
        let (shape, strides) = (self.shape(), self.strides());
        Ok(self.with_dims(
            Dims::from_fn(perm.len(), |i| (shape[perm[i]], strides[perm[i]])),
            self.offset,
        ))
    }

    /// `reverse(axes)` as a view (negative strides).
    ///
    /// # Errors
    /// [`Error::Axis`] for an axis out of range or repeated.
    pub fn reverse_view(&self, axes: &[usize]) -> Result<Tensor> {
        let mut strides = self.strides().to_vec();
        let mut offset = self.offset as isize;
        let mut seen = vec![false; self.ndim()];
        for &ax in axes {
            if ax >= self.ndim() || std::mem::replace(&mut seen[ax], true) {
                return Err(Error::axis(
                    "reverse",
                    format!(
                        "axes {axes:?} out of range or repeated for rank {}",
                        self.ndim()
                    ),
                ));
            }
            if self.shape()[ax] > 0 {
                offset += strides[ax] * (self.shape()[ax] as isize - 1);
            }
            strides[ax] = -strides[ax];
        }
        if self.numel() == 0 {
            offset = self.offset as isize;
        }
        Ok(self.with_meta(self.shape().to_vec(), strides, offset as usize))
    }

    /// `broadcast_in_dim(shape, dims)` as a view: input axis `i` becomes output axis `dims[i]`
    /// (unique, any order, as StableHLO), whose size must equal the input's or the input's
    /// must be 1.
    ///
    /// # Errors
    /// [`Error::Shape`] for a rank or size mismatch, [`Error::Axis`] for bad `dims`.
    pub fn broadcast_in_dim_view(&self, shape: &[usize], dims: &[usize]) -> Result<Tensor> {
        let op = "broadcast_in_dim";
        if dims.len() != self.ndim() {
            return Err(Error::shape(
                op,
                format!(
                    "broadcast_dimensions {dims:?} must have one entry per input axis (rank {})",
                    self.ndim()
                ),
            ));
        }
        checked_numel(op, shape)?;
        let mut strides = vec![0isize; shape.len()];
        for (i, &d) in dims.iter().enumerate() {
            if d >= shape.len() || dims[..i].contains(&d) {
                return Err(Error::axis(
                    op,
                    format!(
                        "broadcast_dimensions {dims:?} must be unique and below rank {}",
                        shape.len()
                    ),
                ));
            }
            let src = self.shape()[i];
            if src == shape[d] {
                strides[d] = self.strides()[i];
            } else if src != 1 {
                return Err(Error::shape(
                    op,
                    format!(
                        "input shape {:?} cannot broadcast to {shape:?} along dims {dims:?}",
                        self.shape()
                    ),
                ));
            }
        }
        Ok(self.with_meta(shape.to_vec(), strides, self.offset))
    }

    /// NumPy-style broadcast to `shape` (trailing alignment) as a view.
    ///
    /// # Errors
    /// [`Error::Shape`] if the shapes are not broadcast-compatible.
    pub fn broadcast_to_view(&self, shape: &[usize]) -> Result<Tensor> {
        if shape.len() < self.ndim() {
            return Err(Error::shape(
                "broadcast_to",
                format!("cannot broadcast shape {:?} to {shape:?}", self.shape()),
            ));
        }
        let pad = shape.len() - self.ndim();
        let dims: Vec<usize> = (pad..shape.len()).collect();
        self.broadcast_in_dim_view(shape, &dims)
    }

    /// Column-major `reshape` as a view when the strides allow it, else `None`.
    pub fn reshape_view(&self, new_shape: &[usize]) -> Option<Tensor> {
        if self.is_contiguous() {
            return Some(self.with_dims(Dims::compact(new_shape), self.offset));
        }
        if self.numel() == 0 {
            return None;
        }
        // Group axes (size-1 axes dropped) into runs whose column-major strides chain.
        let old: Vec<(usize, isize)> = self
            .shape()
            .iter()
            .zip(self.strides())
            .filter(|(&d, _)| d != 1)
            .map(|(&d, &s)| (d, s))
            .collect();
        let mut strides = vec![0isize; new_shape.len()];
        let (mut oi, mut ni) = (0usize, 0usize);
        while ni < new_shape.len() {
            if new_shape[ni] == 1 {
                strides[ni] = 1;
                ni += 1;
                continue;
            }
            if oi >= old.len() {
                return None;
            }
            // Extend both runs until their products agree.
            let (mut op, mut np) = (old[oi].0, new_shape[ni]);
            let (o0, n0) = (oi, ni);
            while op != np {
                if op < np {
                    oi += 1;
                    if oi >= old.len() {
                        return None;
                    }
                    op *= old[oi].0;
                } else {
                    ni += 1;
                    if ni >= new_shape.len() {
                        return None;
                    }
                    np *= new_shape[ni];
                }
            }
            for k in o0..oi {
                if old[k + 1].1 != old[k].1 * old[k].0 as isize {
                    return None;
                }
            }
            let mut s = old[o0].1;
            for (k, st) in strides.iter_mut().enumerate().take(ni + 1).skip(n0) {
                *st = s;
                s *= new_shape[k] as isize;
            }
            oi += 1;
            ni += 1;
        }
        if oi != old.len() {
            return None;
        }
        Some(self.with_meta(new_shape.to_vec(), strides, self.offset))
    }

    /// Basic slicing along `axis`: `start + k*step` for `k < len` (already normalised by the
    /// caller, NumPy's `slice.indices` semantics; `step != 0`).
    ///
    /// # Errors
    /// [`Error::Index`] if the selection leaves the axis.
    pub fn slice_axis_view(
        &self,
        axis: usize,
        start: usize,
        len: usize,
        step: isize,
    ) -> Result<Tensor> {
        let d = self.shape()[axis];
        if len > 0 {
            let last = start as i128 + (len as i128 - 1) * step as i128;
            if start >= d || last < 0 || last >= d as i128 {
                return Err(Error::index(
                    "slice",
                    format!("slice start {start} step {step} length {len} leaves axis {axis} of size {d}"),
                ));
            }
        }
        let mut shape = self.shape().to_vec();
        let mut strides = self.strides().to_vec();
        shape[axis] = len;
        let offset = if len > 0 {
            (self.offset as isize + start as isize * self.strides()[axis]) as usize
        } else {
            self.offset
        };
        strides[axis] = self.strides()[axis] * step;
        Ok(self.with_meta(shape, strides, offset))
    }

    /// Select index `i` along `axis`, dropping the axis.
    ///
    /// # Errors
    /// [`Error::Index`] if `i` is out of range.
    pub fn index_axis_view(&self, axis: usize, i: usize) -> Result<Tensor> {
        let d = self.shape()[axis];
        if i >= d {
            return Err(Error::index(
                "index",
                format!("index {i} is out of bounds for axis {axis} with size {d}"),
            ));
        }
        let mut shape = self.shape().to_vec();
        let mut strides = self.strides().to_vec();
        let offset = (self.offset as isize + i as isize * strides[axis]) as usize;
        shape.remove(axis);
        strides.remove(axis);
        Ok(self.with_meta(shape, strides, offset))
    }

    /// The diagonal of axes `a` and `b` as a view: it takes `a`'s place, `b` disappears
    /// (length `min(shape[a], shape[b])`, stride `strides[a] + strides[b]`).
    ///
    /// # Errors
    /// [`Error::Axis`] for equal or out-of-range axes.
    pub fn extract_diag_view(&self, a: usize, b: usize) -> Result<Tensor> {
        if a == b || a >= self.ndim() || b >= self.ndim() {
            return Err(Error::axis(
                "extract_diag",
                format!(
                    "axes ({a}, {b}) must be distinct and below rank {}",
                    self.ndim()
                ),
            ));
        }
        let mut shape = self.shape().to_vec();
        let mut strides = self.strides().to_vec();
        shape[a] = self.shape()[a].min(self.shape()[b]);
        strides[a] = self.strides()[a] + self.strides()[b];
        shape.remove(b);
        strides.remove(b);
        Ok(self.with_meta(shape, strides, self.offset))
    }

    /// Insert a size-1 axis at `axis` (view).
    pub fn expand_dims_view(&self, axis: usize) -> Tensor {
        let mut shape = self.shape().to_vec();
        let mut strides = self.strides().to_vec();
        let axis = axis.min(shape.len());
        shape.insert(axis, 1);
        strides.insert(axis, 0);
        self.with_meta(shape, strides, self.offset)
    }

    /// Element strides usable for export when the storage has element alignment.
    pub fn byte_strides(&self) -> Vec<isize> {
        let item = self.dtype.itemsize() as isize;
        self.strides().iter().map(|&s| s * item).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec(shape, (0..n as i64).collect::<Vec<i64>>()).unwrap()
    }

    #[test]
    fn transpose_and_reverse_are_views() {
        let t = iota(&[2, 3]);
        let tt = t.transpose_view(&[1, 0]).unwrap();
        assert_eq!(tt.strides(), &[2, 1]);
        assert_eq!(tt.to_vec::<i64>(), vec![0, 2, 4, 1, 3, 5]);
        let r = t.reverse_view(&[1]).unwrap();
        assert_eq!(r.strides(), &[1, -2]);
        assert_eq!(r.to_vec::<i64>(), vec![4, 5, 2, 3, 0, 1]);
        assert!(Arc::ptr_eq(t.storage(), r.storage()));
    }

    #[test]
    fn reshape_view_on_strided_input() {
        let t = iota(&[2, 3, 4]);
        // Reversal of the leading axis keeps axes 1,2 chained: merging them is a view.
        let v = t.slice_axis_view(0, 0, 1, 1).unwrap();
        let r = v.reshape_view(&[1, 12]).unwrap();
        assert_eq!(r.to_vec::<i64>(), v.to_vec::<i64>());
        let tt = t.transpose_view(&[2, 1, 0]).unwrap();
        assert!(tt.reshape_view(&[24]).is_none());
        assert_eq!(
            tt.reshape_view(&[4, 3, 2]).unwrap().to_vec::<i64>(),
            tt.to_vec::<i64>()
        );
    }

    #[test]
    fn broadcast_and_bounds() {
        let t = iota(&[3]);
        let b = t.broadcast_in_dim_view(&[3, 2], &[0]).unwrap();
        assert_eq!(b.strides(), &[1, 0]);
        assert_eq!(b.to_vec::<i64>(), vec![0, 1, 2, 0, 1, 2]);
        assert!(t.broadcast_in_dim_view(&[4, 2], &[0]).is_err());
        let bad = Tensor::from_parts(DType::I64, vec![4], vec![1], 0, t.storage().clone());
        assert!(bad.is_err());
    }
}
