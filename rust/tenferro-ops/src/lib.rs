//! The op catalog of tenferro: one row per primitive of `ops.md` (name, arity, dtype policy,
//! family, whether a CPU kernel exists), the parameterised [`Op`] values engines execute, and
//! shape/dtype inference that validates every argument before anything is allocated.
//!
//! Nothing else decides what an op is: dispatch, the Python surface and the tests iterate
//! [`CATALOG`]. The derivative-rule table (a later crate, `tenferro-ad`) is keyed by [`OpKind`].

// Matches over op kinds (and every other enum) are exhaustive: a new variant must be routed
// by hand, never caught by a plausible default (issue 17).
#![deny(clippy::wildcard_enum_match_arm)]

mod catalog;
mod config;
mod infer;
mod op;

pub use catalog::{row, DTypeSet, Family, OpKind, OpRow, CATALOG};
pub use config::{DotGeneralConfig, GatherConfig, PadConfig, ScatterConfig, SliceConfig};
pub use infer::{infer, infer_outputs, OutMeta};
pub use op::{BinaryOp, CompareDir, LinalgOp, Op, ReduceOp, UnaryOp};
