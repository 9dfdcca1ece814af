//! Configs of the structural and contraction primitives (StableHLO dimension numbers), with
//! structural validation. Shape-dependent checks happen in [`crate::infer`].

use tenferro_tensor::{Error, Result};

pub(crate) fn check_unique(op: &str, field: &str, v: &[usize]) -> Result<()> {
    for (i, x) in v.iter().enumerate() {
        if v[..i].contains(x) {
            return Err(Error::axis(
                op,
                format!("{field} {v:?} repeats dimension {x}"),
            ));
        }
    }
    Ok(())
}

fn check_disjoint(op: &str, fa: &str, a: &[usize], fb: &str, b: &[usize]) -> Result<()> {
    if let Some(x) = a.iter().find(|x| b.contains(x)) {
        return Err(Error::axis(
            op,
            format!("dimension {x} is in both {fa} {a:?} and {fb} {b:?}"),
        ));
    }
    Ok(())
}

pub(crate) fn check_range(op: &str, field: &str, v: &[usize], rank: usize) -> Result<()> {
    if let Some(x) = v.iter().find(|&&x| x >= rank) {
        return Err(Error::axis(
            op,
            format!("{field} {v:?} has dimension {x} out of range for rank {rank}"),
        ));
    }
    Ok(())
}

/// `slice(x, SliceConfig)`: elements `starts[i] + k*strides[i] < limits[i]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SliceConfig {
    /// First index per axis.
    pub starts: Vec<usize>,
    /// Exclusive end per axis.
    pub limits: Vec<usize>,
    /// Step per axis (≥ 1).
    pub strides: Vec<usize>,
}

/// `pad(x, PadConfig)` with zeros: negative edges crop, interior padding between elements.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PadConfig {
    /// Padding before each axis (negative crops).
    pub low: Vec<i64>,
    /// Padding after each axis (negative crops).
    pub high: Vec<i64>,
    /// Zeros between adjacent elements of each axis.
    pub interior: Vec<usize>,
}

/// StableHLO `gather` dimension numbers (no operand batching dims).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GatherConfig {
    /// Output axes that index into a slice.
    pub offset_dims: Vec<usize>,
    /// Operand axes of slice size 1 that do not appear in the output.
    pub collapsed_slice_dims: Vec<usize>,
    /// Operand axis addressed by each component of an index vector.
    pub start_index_map: Vec<usize>,
    /// Axis of `indices` holding index vectors (may equal its rank: scalar indices).
    pub index_vector_dim: usize,
    /// Slice extent per operand axis.
    pub slice_sizes: Vec<usize>,
}

/// StableHLO `scatter` dimension numbers (add combiner).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScatterConfig {
    /// Update axes that form the update window.
    pub update_window_dims: Vec<usize>,
    /// Operand axes with a window of size 1 absent from the updates.
    pub inserted_window_dims: Vec<usize>,
    /// Operand axis addressed by each component of an index vector.
    pub scatter_dims_to_operand_dims: Vec<usize>,
    /// Axis of `indices` holding index vectors.
    pub index_vector_dim: usize,
}

/// `dot_general` dimension numbers; output `[lhs free…, rhs free…, batch…]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DotGeneralConfig {
    /// Contracted axes of the left operand.
    pub lhs_contracting_dims: Vec<usize>,
    /// Contracted axes of the right operand (paired in order).
    pub rhs_contracting_dims: Vec<usize>,
    /// Batch axes of the left operand.
    pub lhs_batch_dims: Vec<usize>,
    /// Batch axes of the right operand (paired in order).
    pub rhs_batch_dims: Vec<usize>,
}

impl SliceConfig {
    /// Structural validation (equal lengths, `start ≤ limit`, `stride ≥ 1`).
    ///
    /// # Errors
    /// [`Error::Shape`] naming the offending values.
    pub fn validate(&self) -> Result<()> {
        let op = "SliceConfig";
        if self.starts.len() != self.limits.len() || self.starts.len() != self.strides.len() {
            return Err(Error::shape(
                op,
                format!(
                    "starts {:?}, limits {:?} and strides {:?} must have equal lengths",
                    self.starts, self.limits, self.strides
                ),
            ));
        }
        for i in 0..self.starts.len() {
            if self.starts[i] > self.limits[i] {
                return Err(Error::shape(
                    op,
                    format!(
                        "start {} exceeds limit {} on axis {i}",
                        self.starts[i], self.limits[i]
                    ),
                ));
            }
            if self.strides[i] == 0 {
                return Err(Error::shape(
                    op,
                    format!("stride 0 on axis {i} (strides {:?})", self.strides),
                ));
            }
        }
        Ok(())
    }
}

impl PadConfig {
    /// Structural validation (equal lengths).
    ///
    /// # Errors
    /// [`Error::Shape`] naming the offending values.
    pub fn validate(&self) -> Result<()> {
        if self.low.len() != self.high.len() || self.low.len() != self.interior.len() {
            return Err(Error::shape("PadConfig", format!("edge_padding_low {:?}, edge_padding_high {:?} and interior_padding {:?} must have equal lengths", self.low, self.high, self.interior)));
        }
        Ok(())
    }
}

impl GatherConfig {
    /// Structural validation (sorted unique offset dims, unique collapsed dims and index map).
    ///
    /// # Errors
    /// [`Error::Axis`] naming the offending values.
    pub fn validate(&self) -> Result<()> {
        let op = "GatherConfig";
        check_unique(op, "offset_dims", &self.offset_dims)?;
        if self.offset_dims.windows(2).any(|w| w[0] > w[1]) {
            return Err(Error::axis(
                op,
                format!("offset_dims {:?} must be sorted", self.offset_dims),
            ));
        }
        check_unique(op, "collapsed_slice_dims", &self.collapsed_slice_dims)?;
        check_unique(op, "start_index_map", &self.start_index_map)?;
        Ok(())
    }
}

impl ScatterConfig {
    /// Structural validation (sorted unique window dims, unique inserted dims and index map).
    ///
    /// # Errors
    /// [`Error::Axis`] naming the offending values.
    pub fn validate(&self) -> Result<()> {
        let op = "ScatterConfig";
        check_unique(op, "update_window_dims", &self.update_window_dims)?;
        if self.update_window_dims.windows(2).any(|w| w[0] > w[1]) {
            return Err(Error::axis(
                op,
                format!(
                    "update_window_dims {:?} must be sorted",
                    self.update_window_dims
                ),
            ));
        }
        check_unique(op, "inserted_window_dims", &self.inserted_window_dims)?;
        check_unique(
            op,
            "scatter_dims_to_operand_dims",
            &self.scatter_dims_to_operand_dims,
        )?;
        Ok(())
    }
}

impl DotGeneralConfig {
    /// Structural validation (equal counts, no duplicates, no role overlap).
    ///
    /// # Errors
    /// [`Error::Shape`] / [`Error::Axis`] naming the offending values.
    pub fn validate(&self) -> Result<()> {
        let op = "DotGeneralConfig";
        if self.lhs_contracting_dims.len() != self.rhs_contracting_dims.len() {
            return Err(Error::shape(
                op,
                format!(
                    "lhs_contracting_dims {:?} and rhs_contracting_dims {:?} differ in length",
                    self.lhs_contracting_dims, self.rhs_contracting_dims
                ),
            ));
        }
        if self.lhs_batch_dims.len() != self.rhs_batch_dims.len() {
            return Err(Error::shape(
                op,
                format!(
                    "lhs_batch_dims {:?} and rhs_batch_dims {:?} differ in length",
                    self.lhs_batch_dims, self.rhs_batch_dims
                ),
            ));
        }
        check_unique(op, "lhs_contracting_dims", &self.lhs_contracting_dims)?;
        check_unique(op, "rhs_contracting_dims", &self.rhs_contracting_dims)?;
        check_unique(op, "lhs_batch_dims", &self.lhs_batch_dims)?;
        check_unique(op, "rhs_batch_dims", &self.rhs_batch_dims)?;
        check_disjoint(
            op,
            "lhs_contracting_dims",
            &self.lhs_contracting_dims,
            "lhs_batch_dims",
            &self.lhs_batch_dims,
        )?;
        check_disjoint(
            op,
            "rhs_contracting_dims",
            &self.rhs_contracting_dims,
            "rhs_batch_dims",
            &self.rhs_batch_dims,
        )?;
        Ok(())
    }

    /// Validate against operand shapes and return the output shape
    /// `[lhs free…, rhs free…, batch…]`.
    ///
    /// # Errors
    /// Range and size mismatches naming the op and values.
    pub fn output_shape(&self, op: &str, lhs: &[usize], rhs: &[usize]) -> Result<Vec<usize>> {
        self.validate().map_err(|e| rename(e, op))?;
        check_range(
            op,
            "lhs_contracting_dims",
            &self.lhs_contracting_dims,
            lhs.len(),
        )?;
        check_range(op, "lhs_batch_dims", &self.lhs_batch_dims, lhs.len())?;
        check_range(
            op,
            "rhs_contracting_dims",
            &self.rhs_contracting_dims,
            rhs.len(),
        )?;
        check_range(op, "rhs_batch_dims", &self.rhs_batch_dims, rhs.len())?;
        for (&a, &b) in self
            .lhs_contracting_dims
            .iter()
            .zip(&self.rhs_contracting_dims)
        {
            if lhs[a] != rhs[b] {
                return Err(Error::shape(op, format!("contracting dimension sizes differ: lhs axis {a} has {} but rhs axis {b} has {} (lhs shape {lhs:?}, rhs shape {rhs:?})", lhs[a], rhs[b])));
            }
        }
        for (&a, &b) in self.lhs_batch_dims.iter().zip(&self.rhs_batch_dims) {
            if lhs[a] != rhs[b] {
                return Err(Error::shape(op, format!("batch dimension sizes differ: lhs axis {a} has {} but rhs axis {b} has {} (lhs shape {lhs:?}, rhs shape {rhs:?})", lhs[a], rhs[b])));
            }
        }
        let mut out: Vec<usize> = self.lhs_free(lhs.len()).iter().map(|&d| lhs[d]).collect();
        out.extend(self.rhs_free(rhs.len()).iter().map(|&d| rhs[d]));
        out.extend(self.lhs_batch_dims.iter().map(|&d| lhs[d]));
        Ok(out)
    }

    /// Free axes of the left operand, in order.
    pub fn lhs_free(&self, rank: usize) -> Vec<usize> {
        (0..rank)
            .filter(|d| !self.lhs_contracting_dims.contains(d) && !self.lhs_batch_dims.contains(d))
            .collect()
    }

    /// Free axes of the right operand, in order.
    pub fn rhs_free(&self, rank: usize) -> Vec<usize> {
        (0..rank)
            .filter(|d| !self.rhs_contracting_dims.contains(d) && !self.rhs_batch_dims.contains(d))
            .collect()
    }
}

/// Re-attribute a config error to the op being validated.
// Not an op-kind match: every other error keeps its own attribution unchanged.
#[allow(clippy::wildcard_enum_match_arm)]
pub(crate) fn rename(e: Error, op: &str) -> Error {
    match e {
        Error::Shape { message, .. } => Error::shape(op, message),
        Error::Axis { message, .. } => Error::axis(op, message),
        other => other,
    }
}
