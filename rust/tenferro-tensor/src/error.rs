//! The one error type of the core crates. Every variant names the op and carries the offending
//! values in its message; `tenferro-py` maps each variant to one Python exception class.

/// Why a CPU engine could not be configured (`tf.errors.CpuThreadReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuThreadReason {
    ZeroThreads,
    EmptyCpuList,
    DuplicateCpu,
    CpuNotAllowed,
    UnsupportedPlatform,
    Affinity,
    Pool,
}

impl CpuThreadReason {
    /// The Python enum member name.
    pub fn name(self) -> &'static str {
        match self {
            Self::ZeroThreads => "ZERO_THREADS",
            Self::EmptyCpuList => "EMPTY_CPU_LIST",
            Self::DuplicateCpu => "DUPLICATE_CPU",
            Self::CpuNotAllowed => "CPU_NOT_ALLOWED",
            Self::UnsupportedPlatform => "UNSUPPORTED_PLATFORM",
            Self::Affinity => "AFFINITY",
            Self::Pool => "POOL",
        }
    }
}

/// Errors of tenferro's core. `op` is the user-visible name of the operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Shapes or ranks that do not fit (Python `ShapeError`, a `ValueError`).
    #[error("{op}: {message}")]
    Shape { op: String, message: String },
    /// Malformed einsum subscripts, an operand/label mismatch or an invalid path or optimizer
    /// (Python `EinsumError`, a `ShapeError`).
    #[error("{op}: {message}")]
    Einsum { op: String, message: String },
    /// An axis out of range or repeated (Python `AxisError`).
    #[error("{op}: {message}")]
    Axis { op: String, message: String },
    /// A dtype the op does not admit (Python `DTypeError`, a `TypeError`).
    #[error("{op}: {message}")]
    DType { op: String, message: String },
    /// A value outside the op's domain (Python `ValueError`).
    #[error("{op}: {message}")]
    Value { op: String, message: String },
    /// An index out of range (Python `IndexError`).
    #[error("{op}: {message}")]
    Index { op: String, message: String },
    /// Integer division or remainder by zero (Python `ZeroDivisionError`).
    #[error("{op}: integer division or remainder by zero")]
    ZeroDivision { op: String },
    /// A Python integer that does not fit the tensor's dtype (Python `OverflowError`).
    #[error("{op}: {message}")]
    Overflow { op: String, message: String },
    /// Allocation failure or a size that does not fit in memory (Python `MemoryError`).
    #[error("{op}: cannot allocate {bytes} bytes")]
    Alloc { op: String, bytes: u128 },
    /// Tensors of different runtimes in one op (Python `ContextMismatchError`).
    #[error("{op}: {message}")]
    ContextMismatch { op: String, message: String },
    /// A second session on an engine from the thread that holds it (Python `ReenteredError`).
    #[error("{op}: {message}")]
    Reentered { op: String, message: String },
    /// Waiting for an engine timed out (Python `EngineBusyError`).
    #[error("{op}: {message}")]
    EngineBusy { op: String, message: String },
    /// The engine panicked earlier and refuses work (Python `EngineBrokenError`).
    #[error("{op}: {message}")]
    EngineBroken { op: String, message: String },
    /// Engine configuration failure (Python `CpuThreadError` with `.reason`).
    #[error("{op}: {message}")]
    CpuThread {
        op: String,
        reason: CpuThreadReason,
        message: String,
    },
    /// A process-wide setting changed after it was fixed (Python `AlreadyInitializedError`).
    #[error("{op}: {message}")]
    AlreadyInitialized { op: String, message: String },
    /// A primitive without the requested derivative rule (Python `UnsupportedAdRuleError`).
    #[error("{op}: {message}")]
    UnsupportedAdRule { op: String, message: String },
    /// A gradient without a cotangent asked of a non-scalar output (Python `NonScalarGradError`).
    /// `remedy` names the call that takes an explicit cotangent.
    #[error("{op}: {op} needs a scalar output, got shape {shape:?}; use {remedy}")]
    NonScalarOutput {
        op: String,
        shape: Vec<usize>,
        remedy: &'static str,
    },
    /// `backward` found no tracked leaf reachable from the output (Python `NoGradientError`).
    #[error("{op}: no tracked leaf is reachable from this output")]
    NoGradient { op: String },
    /// `wrt[index]` of a transform was never recorded, so nothing depends on it (Python
    /// `InactiveError`).
    #[error("{op}: wrt[{index}] was never recorded (make it with rt.variable, or compute it under capture_trace)")]
    InactiveWrt { op: String, index: usize },
    /// An op routed through a session that is not entered (Python `TenferroError`).
    #[error("{op}: the session is not active; use it inside `with rt.session(engine) as s:`")]
    SessionInactive { op: String },
    /// A numerical failure of a linear-algebra op: singular matrix, non-positive-definite input,
    /// non-finite input, no convergence (Python `LinAlgError`).
    #[error("{op}: {message}")]
    LinAlg { op: String, message: String },
    /// A feature that exists in the catalog but not on this engine (Python `UnsupportedError`).
    #[error("{op}: {message}")]
    Unsupported { op: String, message: String },
    /// A broken invariant: a rule, kernel or table reached with an op it does not serve
    /// (Python `InternalError`, a `RuntimeError`). Never returned for user input.
    #[error("{op}: internal error: {message}")]
    Internal { op: String, message: String },
    /// A traced tensor (graph mode: shape and dtype, no data) asked for its values (Python
    /// `ConcretizationError`, a `TypeError`).
    #[error("{op}: {message}")]
    Concretization { op: String, message: String },
    /// A traced tensor used after its trace ended, or in another trace (Python
    /// `TracerLeakError`).
    #[error("{op}: {message}")]
    TracerLeak { op: String, message: String },
    /// An eager-only operation on a traced tensor (`.backward()`, `.grad`; Python `TraceError`).
    #[error("{op}: {message}")]
    Trace { op: String, message: String },
    /// The op stopped early because its caller asked it to (Ctrl-C in the binding; Python
    /// `KeyboardInterrupt`). Its partial results are discarded; the engine stays usable.
    #[error("{op}: interrupted")]
    Interrupted { op: String },
}

/// Result alias of the core crates.
pub type Result<T> = std::result::Result<T, Error>;

macro_rules! ctor {
    ($fn:ident, $variant:ident) => {
        #[doc = concat!("Build an [`Error::", stringify!($variant), "`] for `op`.")]
        pub fn $fn(op: impl Into<String>, message: impl Into<String>) -> Self {
            Error::$variant {
                op: op.into(),
                message: message.into(),
            }
        }
    };
}

impl Error {
    ctor!(shape, Shape);
    ctor!(einsum, Einsum);
    ctor!(axis, Axis);
    ctor!(dtype, DType);
    ctor!(value, Value);
    ctor!(index, Index);
    ctor!(overflow, Overflow);
    ctor!(context_mismatch, ContextMismatch);
    ctor!(reentered, Reentered);
    ctor!(engine_busy, EngineBusy);
    ctor!(engine_broken, EngineBroken);
    ctor!(already_initialized, AlreadyInitialized);
    ctor!(unsupported, Unsupported);
    ctor!(unsupported_ad_rule, UnsupportedAdRule);
    ctor!(linalg, LinAlg);
    ctor!(internal, Internal);
    ctor!(concretization, Concretization);
    ctor!(tracer_leak, TracerLeak);
    ctor!(trace, Trace);

    /// Allocation failure of `bytes` bytes in `op`.
    pub fn alloc(op: impl Into<String>, bytes: u128) -> Self {
        Error::Alloc {
            op: op.into(),
            bytes,
        }
    }

    /// Integer division by zero in `op`.
    pub fn zero_division(op: impl Into<String>) -> Self {
        Error::ZeroDivision { op: op.into() }
    }

    /// Engine configuration error.
    pub fn cpu_thread(
        op: impl Into<String>,
        reason: CpuThreadReason,
        message: impl Into<String>,
    ) -> Self {
        Error::CpuThread {
            op: op.into(),
            reason,
            message: message.into(),
        }
    }
}
