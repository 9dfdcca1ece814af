//! The tensor model of tenferro: dtypes and their promotion lattice, column-major storage with a
//! per-engine buffer pool, and strided views (arbitrary, possibly negative strides and an offset).
//!
//! This crate has no threads and no Python: it is the vocabulary every other crate speaks.

mod dims;
pub mod dtype;
pub mod error;
pub mod shape;
pub mod storage;
pub mod tensor;

pub use dtype::{promote, promote_weak, DType, Element, ScalarKind};
pub use error::{CpuThreadReason, Error, Result};
pub use storage::{BufferPool, BufferPoolStats, Storage};
pub use tensor::{Scalar, Tensor};

/// Complex numbers as used by tenferro (`num-complex`).
pub use num_complex::{Complex32, Complex64};
