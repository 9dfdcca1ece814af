//! The op catalog of tenferro: one row per primitive of `ops.md` (name, arity, family,
//! dtype policy), the parameterised [`Op`] values engines execute, and
//! shape/dtype inference that validates every argument before anything is allocated.
//!
//! The op table, [`primitive_ops!`], is the one place a primitive is listed: [`OpKind`], the
//! catalog rows, [`UnaryOp`]/[`BinaryOp`]/[`ReduceOp`], [`Op::kind`] and the binding's uniform
//! `Session` methods are generated from it. Nothing else decides what an op is: dispatch, the
//! Python surface and the tests iterate [`CATALOG`]. The derivative-rule table (a later crate,
//! `tenferro-ad`) is keyed by [`OpKind`].

// Matches over op kinds (and every other enum) are exhaustive: a new variant must be routed
// by hand, never caught by a plausible default (issue 17).
#![deny(clippy::wildcard_enum_match_arm)]
// Every public item is documented, the ones generated from the op table included.
#![deny(missing_docs)]

mod catalog;
mod config;
mod fft;
mod infer;
mod op;
mod table;

pub use catalog::{row, DTypeSet, Family, OpKind, OpRow, CATALOG};
pub use config::{DotGeneralConfig, GatherConfig, PadConfig, ScatterConfig, SliceConfig};
pub use fft::{FftConfig, FftType};
pub use infer::{infer, infer_outputs, OutMeta};
pub use op::{BinaryOp, CompareDir, LinalgOp, Op, ReduceOp, UnaryOp};
