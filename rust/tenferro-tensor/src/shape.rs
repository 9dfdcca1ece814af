//! Checked shape arithmetic, axis normalisation and NumPy broadcasting.

use crate::error::{Error, Result};

/// Element count of `shape`, checked. As NumPy, a shape whose nonzero extents multiply past
/// `isize::MAX` elements is too big even when another extent is zero: an [`Error::Value`]
/// ("array is too big"), never an allocation error for a size that was never computed.
pub fn checked_numel(op: &str, shape: &[usize]) -> Result<usize> {
    let mut nonzero = 1usize;
    let mut zero = false;
    for &d in shape {
        if d == 0 {
            zero = true;
            continue;
        }
        nonzero = match nonzero.checked_mul(d) {
            Some(n) if n <= isize::MAX as usize => n,
            _ => return Err(too_big(op, shape)),
        };
    }
    Ok(if zero { 0 } else { nonzero })
}

fn too_big(op: &str, shape: &[usize]) -> Error {
    let count = shape
        .iter()
        .filter(|&&d| d != 0)
        .fold(1u128, |a, &d| a.saturating_mul(d as u128));
    Error::value(
        op,
        format!(
            "shape {shape:?} is too big: {count} elements (the limit is {} = isize::MAX)",
            isize::MAX
        ),
    )
}

/// Bytes of `numel` elements of `itemsize` bytes, checked: more than `isize::MAX` bytes is an
/// [`Error::Value`] (NumPy's "array is too big"), not an allocation failure.
pub fn checked_bytes(op: &str, numel: usize, itemsize: usize) -> Result<usize> {
    numel
        .checked_mul(itemsize)
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| {
            Error::value(
                op,
                format!(
                    "{numel} elements of {itemsize} bytes ({} bytes) are more than isize::MAX bytes",
                    numel as u128 * itemsize as u128
                ),
            )
        })
}

/// Column-major compact strides (in elements) of `shape`.
pub fn col_major_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = Vec::with_capacity(shape.len());
    let mut acc: isize = 1;
    for &d in shape {
        strides.push(acc);
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// Normalise a possibly negative `axis` against `ndim`.
pub fn normalize_axis(op: &str, axis: i64, ndim: usize) -> Result<usize> {
    let n = ndim as i64;
    if axis < -n || axis >= n {
        return Err(Error::axis(
            op,
            format!("axis {axis} is out of bounds for array of dimension {ndim}"),
        ));
    }
    Ok(if axis < 0 { axis + n } else { axis } as usize)
}

/// Normalise a list of axes; duplicates are an [`Error::Axis`].
pub fn normalize_axes(op: &str, axes: &[i64], ndim: usize) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let ax = normalize_axis(op, a, ndim)?;
        if out.contains(&ax) {
            return Err(Error::axis(op, format!("repeated axis {a} in {axes:?}")));
        }
        out.push(ax);
    }
    Ok(out)
}

/// NumPy broadcasting of several shapes (aligned at the trailing axis).
pub fn broadcast_shapes(op: &str, shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for s in shapes {
        let pad = ndim - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[pad + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(Error::shape(
                    op,
                    format!(
                        "operands could not be broadcast together with shapes {}",
                        shapes
                            .iter()
                            .map(|s| format!("{s:?}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Validate that `perm` is a permutation of `0..ndim`.
pub fn check_permutation(op: &str, perm: &[usize], ndim: usize) -> Result<()> {
    let mut seen = vec![false; ndim];
    if perm.len() != ndim {
        return Err(Error::axis(
            op,
            format!("permutation {perm:?} does not match a tensor of rank {ndim}"),
        ));
    }
    for &p in perm {
        if p >= ndim || std::mem::replace(&mut seen[p], true) {
            return Err(Error::axis(
                op,
                format!("{perm:?} is not a permutation of 0..{ndim}"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(
            broadcast_shapes("add", &[&[3, 1], &[4]]).unwrap(),
            vec![3, 4]
        );
        assert_eq!(
            broadcast_shapes("add", &[&[], &[0, 2]]).unwrap(),
            vec![0, 2]
        );
        assert!(broadcast_shapes("add", &[&[3], &[4]]).is_err());
    }

    #[test]
    fn overflow_is_checked() {
        assert!(checked_numel("zeros", &[1 << 62, 8]).is_err());
        assert!(checked_bytes("zeros", 1 << 62, 8).is_err());
    }

    #[test]
    fn axes() {
        assert_eq!(normalize_axis("sum", -1, 3).unwrap(), 2);
        assert!(normalize_axis("sum", 3, 3).is_err());
        assert!(normalize_axes("sum", &[0, -3], 3).is_err());
        assert!(check_permutation("transpose", &[1, 1], 2).is_err());
    }
}
