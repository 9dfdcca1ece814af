//! The eager core of tenferro (`architecture.md`): everything an eager op and a backward pass do
//! below the Python binding, with no Python in it, so `cargo test` exercises it directly.
//!
//! * [`Runtime`] — AD state: id, the registry of tracked leaves (their nodes hold the gradient
//!   slots), the owning [`Context`].
//! * [`Session`] — a runtime paired with a borrowed engine (`Arc<dyn Engine>`: the core never
//!   names a concrete engine), or the implicit session; [`Session::apply`] is the one path of
//!   every eager op: resolve runtime and engine, check membership (`ContextMismatch`), promote
//!   weak scalars, execute, record under the [`ModeState`] passed in.
//! * [`Session::run_program`] — einsum's lowered [`Program`](tenferro_runtime::Program)s, one
//!   [`Exec::apply_vars`] per step.
//! * [`autodiff`] — `variable`, gradient slots, `backward` with accumulation, `vjp`, `jvp`; the
//!   derivative rules run through the same path ([`Exec::rules`] implements
//!   [`tenferro_ad::Apply`]).
//! * [`basic_index`] — NumPy basic indexing as `reverse`/`slice`/`reshape` views through
//!   [`Session::apply`].
//! * [`Host`] — what the caller provides: how a job runs (the binding releases the GIL and
//!   serves Ctrl-C), how to wait for a busy engine, the default engine.
//!
//! Why a crate of its own rather than a module of `tenferro-ad`: `tenferro-ad` is the rule
//! table and the graph algorithms, which graph mode will also drive from an emitting context;
//! sessions, engine lending and runtime resolution are eager policy on top of it.

#![deny(clippy::wildcard_enum_match_arm)]

pub mod autodiff;
mod indexing;
mod runtime;
mod session;

pub use indexing::{basic_index, BasicIndex};
pub use runtime::{default_runtime, live_runtimes, Context, Runtime};
pub use session::concretization_because;
pub use session::{
    copy_for, promote_weak_scalars, scalar_tensor, DirectHost, EagerTensor, Exec, Host, ModeState,
    Operand, RuleExec, Session, WeakScalars, IMPLICIT,
};
pub use tenferro_ad::Value;
