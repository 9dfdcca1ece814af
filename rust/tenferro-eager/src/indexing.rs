//! Basic indexing (`x[1, ::-2, None, ...]`, NumPy semantics) lowered to the primitives `reverse`,
//! `slice` and `reshape`, each through [`Session::apply`]: the result is a view of `x` (all
//! three are metadata-only on strided storage) and a recorded tensor records them, so gradients
//! flow through indexing with no recording decision of its own.

use crate::session::{EagerTensor, Host, ModeState, Operand, Session};
use tenferro_ops::{Op, SliceConfig};
use tenferro_tensor::{Error, Result};

/// One entry of a basic index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BasicIndex {
    /// An integer: selects one position and drops the axis (negative counts from the end).
    Int(i64),
    /// A Python slice `start:stop:step` (`None`: the default; values clamp as in Python).
    Slice {
        /// First position (`None`: the start in the direction of `step`).
        start: Option<i64>,
        /// Exclusive end (`None`: past the end in the direction of `step`).
        stop: Option<i64>,
        /// Step (`None`: 1; never 0).
        step: Option<i64>,
    },
    /// `None` / `np.newaxis`: a new axis of length 1.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
}

/// Python's `slice.indices(d)` followed by the slice length: `(start, step, len)` (CPython
/// `PySlice_AdjustIndices`).
fn adjust(d: i64, start: Option<i64>, stop: Option<i64>, step: i64) -> (i64, i64) {
    let (lower, upper) = if step < 0 { (-1, d - 1) } else { (0, d) };
    let clamp = |v: i64| {
        if v < 0 {
            (v.saturating_add(d)).max(lower)
        } else {
            v.min(upper)
        }
    };
    let start = start.map_or(if step < 0 { upper } else { lower }, clamp);
    let stop = stop.map_or(if step < 0 { lower } else { upper }, clamp);
    let len = if step < 0 {
        if stop < start {
            (start - stop - 1) / (-step) + 1
        } else {
            0
        }
    } else if start < stop {
        (stop - start - 1) / step + 1
    } else {
        0
    };
    (start, len)
}

/// `x[key]` for a basic index `key` (see the module docs).
///
/// # Errors
/// `Index` for more than one ellipsis, more indices than axes, or an integer out of range
/// (NumPy's messages); `Value` for a zero slice step; the errors of [`Session::apply`].
pub fn basic_index(
    session: &Session,
    x: &EagerTensor,
    key: &[BasicIndex],
    mode: &ModeState,
    host: &dyn Host,
) -> Result<EagerTensor> {
    const OP: &str = "getitem";
    let shape = x.value.shape();
    let nd = shape.len();
    let ellipses = key.iter().filter(|k| **k == BasicIndex::Ellipsis).count();
    if ellipses > 1 {
        return Err(Error::index(
            OP,
            "an index can only have a single ellipsis ('...')",
        ));
    }
    let consumed = key
        .iter()
        .filter(|k| matches!(k, BasicIndex::Int(_) | BasicIndex::Slice { .. }))
        .count();
    if consumed > nd {
        return Err(Error::index(
            OP,
            format!(
                "too many indices for array: array is {nd}-dimensional, but {consumed} were indexed"
            ),
        ));
    }
    let full = BasicIndex::Slice {
        start: None,
        stop: None,
        step: None,
    };
    let mut items: Vec<BasicIndex> = Vec::with_capacity(key.len() + nd);
    for k in key {
        if *k == BasicIndex::Ellipsis {
            items.extend(std::iter::repeat_n(full, nd - consumed));
        } else {
            items.push(*k);
        }
    }
    if ellipses == 0 {
        items.extend(std::iter::repeat_n(full, nd - consumed));
    }
    let (mut starts, mut limits, mut strides) = (
        Vec::with_capacity(nd),
        Vec::with_capacity(nd),
        Vec::with_capacity(nd),
    );
    let mut reverse_axes = Vec::new();
    let mut out_shape = Vec::with_capacity(items.len());
    let mut axis = 0usize;
    for it in &items {
        let (start, step, len) = match *it {
            BasicIndex::NewAxis | BasicIndex::Ellipsis => {
                out_shape.push(1);
                continue;
            }
            BasicIndex::Slice { start, stop, step } => {
                // `-i64::MIN` overflows; any step of magnitude >= the axis selects one element,
                // so `-i64::MAX` selects the same ones (`x[::-10**30]` saturates to `i64::MIN`).
                let step = step.unwrap_or(1).max(-i64::MAX);
                if step == 0 {
                    return Err(Error::value(OP, "slice step cannot be zero"));
                }
                let d = shape[axis] as i64;
                let (start, len) = adjust(d, start, stop, step);
                out_shape.push(len as usize);
                if step < 0 {
                    reverse_axes.push(axis);
                    // Positions of the reversed axis: d - 1 - start onwards, step -step.
                    (if len > 0 { d - 1 - start } else { 0 }, -step, len)
                } else {
                    (if len > 0 { start } else { 0 }, step, len)
                }
            }
            BasicIndex::Int(i) => {
                let d = shape[axis] as i64;
                if i < -d || i >= d {
                    return Err(Error::index(
                        OP,
                        format!("index {i} is out of bounds for axis {axis} with size {d}"),
                    ));
                }
                (if i < 0 { i + d } else { i }, 1, 1)
            }
        };
        starts.push(start as usize);
        limits.push(if len > 0 {
            (start + (len - 1) * step + 1) as usize
        } else {
            start as usize
        });
        strides.push(step as usize);
        axis += 1;
    }
    let mut cur: Option<EagerTensor> = None;
    let apply = |op: Op, cur: &mut Option<EagerTensor>| -> Result<()> {
        let input = cur.as_ref().unwrap_or(x);
        *cur = Some(session.apply1(&op, &[Operand::Tensor(input)], mode, host)?);
        Ok(())
    };
    if !reverse_axes.is_empty() {
        apply(Op::Reverse(reverse_axes), &mut cur)?;
    }
    let whole = starts.iter().all(|&s| s == 0)
        && strides.iter().all(|&s| s == 1)
        && limits.iter().zip(shape).all(|(&l, &d)| l == d);
    if !whole {
        apply(
            Op::Slice(SliceConfig {
                starts,
                limits,
                strides,
            }),
            &mut cur,
        )?;
    }
    if out_shape != shape {
        apply(Op::Reshape(out_shape), &mut cur)?;
    }
    match cur {
        Some(t) => Ok(t),
        // `x[...]`, `x[:]`: an identity `reshape` (a view), so the key obeys the rules of any
        // op — the runtime-membership check, and a recorded non-leaf on a tracked `x` (as
        // PyTorch's `x[:]`), untracked under `no_grad`.
        None => session.apply1(
            &Op::Reshape(shape.to_vec()),
            &[Operand::Tensor(x)],
            mode,
            host,
        ),
    }
}
