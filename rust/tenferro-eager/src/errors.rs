//! Constructors of the AD and session errors the eager core raises (variants of the one core
//! error enum, `tenferro_tensor::Error`).

use tenferro_tensor::Error;

/// An explicit session used outside its `with` block.
pub(crate) fn session_inactive(op: &str) -> Error {
    Error::ad(
        op,
        "TenferroError",
        "the session is not active; use it inside `with rt.session(engine) as s:`",
    )
}

/// A gradient asked of a non-scalar output without a cotangent.
pub(crate) fn non_scalar_output(op: &str, message: String) -> Error {
    Error::ad(op, "NonScalarGradError", message)
}

/// A backward pass from an output no tracked leaf reaches.
pub(crate) fn no_gradient(op: &str, message: &str) -> Error {
    Error::ad(op, "NoGradientError", message)
}

/// A forward-mode source that was never recorded.
pub(crate) fn inactive(op: &str, message: String) -> Error {
    Error::ad(op, "InactiveError", message)
}
