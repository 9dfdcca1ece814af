//! Shape and dtype inference: validates every argument and computes the output metadata
//! before any allocation.

use crate::catalog::row;
use crate::op::{Op, ReduceOp, UnaryOp};
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
            let n_new = checked_numel(name, shape)?;
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
}
