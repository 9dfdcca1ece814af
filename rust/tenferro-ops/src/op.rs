//! Parameterised ops: what an engine is asked to execute.

use crate::catalog::OpKind;
use crate::config::{DotGeneralConfig, GatherConfig, PadConfig, ScatterConfig, SliceConfig};
use crate::fft::FftConfig;
use tenferro_tensor::{Complex64, DType};

/// Generates the sub-enums that only name ops (`UnaryOp`, `BinaryOp`, `ReduceOp`) and
/// `Op::kind` from the op table: grouped rows map from their sub-enum, every other row names its
/// `Op` pattern, and the match is exhaustive (an `Op` variant without a row does not compile).
macro_rules! define_op_enums {
    (
        unary: [$({ $(#[$um:meta])* $uk:ident $un:ident $u:ident })*],
        binary: [$({ $(#[$bm:meta])* $bk:ident $bn:ident $b:ident })*],
        reduce: [$({ $(#[$rm:meta])* $rk:ident $rn:ident $r:ident })*],
        other: [$({ $(#[$om:meta])* $ok:ident $on:ident ($op:pat) })*]
    ) => {
        /// Elementwise unary primitives (the `unary(..)` rows of the op table).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum UnaryOp {
            $($(#[$um])* $u,)*
        }

        /// Elementwise binary primitives with NumPy broadcasting (the `binary(..)` rows of the
        /// op table).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum BinaryOp {
            $($(#[$bm])* $b,)*
        }

        /// Reductions (the `reduce(..)` rows of the op table).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ReduceOp {
            $($(#[$rm])* $r,)*
        }

        impl UnaryOp {
            /// Every unary primitive, in catalog order.
            pub const ALL: [UnaryOp; [$(UnaryOp::$u,)*].len()] = [$(UnaryOp::$u,)*];
        }

        impl BinaryOp {
            /// Every binary primitive of `BinaryOp`, in catalog order.
            pub const ALL: [BinaryOp; [$(BinaryOp::$b,)*].len()] = [$(BinaryOp::$b,)*];
        }

        impl ReduceOp {
            /// Every reduction, in catalog order.
            pub const ALL: [ReduceOp; [$(ReduceOp::$r,)*].len()] = [$(ReduceOp::$r,)*];
        }

        impl Op {
            /// The catalog kind of this op.
            pub fn kind(&self) -> OpKind {
                match self {
                    Op::Unary(u) => match u {
                        $(UnaryOp::$u => OpKind::$uk,)*
                    },
                    Op::Binary(b) => match b {
                        $(BinaryOp::$b => OpKind::$bk,)*
                    },
                    Op::Reduce { op, .. } => match op {
                        $(ReduceOp::$r => OpKind::$rk,)*
                    },
                    $($op => OpKind::$ok,)*
                }
            }
        }
    };
}

crate::primitive_ops!(grouped define_op_enums);

/// Comparison directions of `compare` (StableHLO `ComparisonDirection`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CompareDir {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareDir {
    /// All directions.
    pub const ALL: [CompareDir; 6] = [
        CompareDir::Eq,
        CompareDir::Ne,
        CompareDir::Lt,
        CompareDir::Le,
        CompareDir::Gt,
        CompareDir::Ge,
    ];

    /// Upper-case name (`"EQ"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            CompareDir::Eq => "EQ",
            CompareDir::Ne => "NE",
            CompareDir::Lt => "LT",
            CompareDir::Le => "LE",
            CompareDir::Gt => "GT",
            CompareDir::Ge => "GE",
        }
    }

    /// Parse a case-insensitive name.
    pub fn parse(s: &str) -> Option<CompareDir> {
        CompareDir::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s))
    }

    /// Whether the direction needs a total order (rejects complex).
    pub fn is_ordering(self) -> bool {
        !matches!(self, CompareDir::Eq | CompareDir::Ne)
    }
}

/// Dense linear-algebra ops (`ops.md`, "Extension families", `linalg`). Matrices are axes 0
/// (rows) and 1 (columns); every further axis is a batch axis (batch-last, like `dot_general`'s
/// output). The Python surface (`tf.linalg`) moves NumPy's leading batch axes there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinalgOp {
    /// `a = U·diag(S)·Vh` → `(U, S, Vh)`, `S` real and non-increasing. `eps` broadens the
    /// inverse gaps of the derivative rules (`autodiff.md`).
    Svd {
        /// Square `U` (`m×m`) and `Vh` (`n×n`) instead of the thin factors.
        full_matrices: bool,
        /// Lorentzian broadening of `1/(s_j² − s_i²)` and `1/s`.
        eps: f64,
    },
    /// Singular values only → `S` (real, non-increasing), no singular vectors. Its derivative
    /// rules recompute `svd` (as PyTorch's `linalg_svdvals`, which computes the vectors only
    /// when the input requires grad); `tf.linalg.svdvals` runs `svd` instead when it records.
    Svdvals,
    /// `a = Q·R` → `(Q, R)` with a real non-negative diagonal of `R`.
    Qr {
        /// `Q` is `m×m` and `R` `m×n` (else `m×k`, `k×n`).
        complete: bool,
    },
    /// Hermitian eigendecomposition from the lower triangle → `(w, V)`, `w` real ascending.
    Eigh {
        /// Lorentzian broadening of `1/(λ_j − λ_i)`.
        eps: f64,
    },
    /// Eigenvalues only of the Hermitian matrix given by the lower triangle → `w` (real,
    /// ascending); derivative rules recompute `eigh`, as for [`LinalgOp::Svdvals`].
    Eigvalsh,
    /// General eigendecomposition → `(w, V)`, both complex.
    Eig,
    /// Lower Cholesky factor of the Hermitian matrix given by the lower triangle.
    Cholesky,
    /// `a = P·L·U` → `(P, L, U)` (partial pivoting, `L` unit lower).
    Lu,
    /// `x` with `a·x = b` (`a` square, `b` a matrix).
    Solve,
    /// `x` with `tri(a)·x = b`, reading the lower (or upper) triangle of `a` only.
    TriangularSolve {
        /// Read the lower triangle (else the upper).
        lower: bool,
    },
    /// `(sign, logabsdet)` of `det(a)`; `sign` has `a`'s dtype, `logabsdet` is real.
    Slogdet,
}

impl LinalgOp {
    /// Number of outputs.
    pub fn num_outputs(self) -> usize {
        match self {
            LinalgOp::Svd { .. } | LinalgOp::Lu => 3,
            LinalgOp::Qr { .. } | LinalgOp::Eigh { .. } | LinalgOp::Eig | LinalgOp::Slogdet => 2,
            LinalgOp::Svdvals
            | LinalgOp::Eigvalsh
            | LinalgOp::Cholesky
            | LinalgOp::Solve
            | LinalgOp::TriangularSolve { .. } => 1,
        }
    }
}

/// One primitive with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Elementwise unary op.
    Unary(UnaryOp),
    /// Elementwise binary op.
    Binary(BinaryOp),
    /// `compare(x, y, dir)` → bool.
    Compare(CompareDir),
    /// `select(pred, on_true, on_false)`.
    Select,
    /// `clamp(x, lo, hi)`.
    Clamp,
    /// Checked conversion up the lattice.
    Convert(DType),
    /// Lossy conversion.
    Cast(DType),
    /// Output axis `i` is input axis `perm[i]`.
    Transpose(Vec<usize>),
    /// Column-major reshape.
    Reshape(Vec<usize>),
    /// StableHLO `broadcast_in_dim`.
    BroadcastInDim {
        /// Output shape.
        shape: Vec<usize>,
        /// Output axis of each input axis.
        dims: Vec<usize>,
    },
    /// Reverse the listed axes.
    Reverse(Vec<usize>),
    /// Reduce over `axes` (normalised, unique).
    Reduce {
        /// Which reduction.
        op: ReduceOp,
        /// Axes to reduce.
        axes: Vec<usize>,
    },
    /// StableHLO `slice` (a view).
    Slice(SliceConfig),
    /// Zero padding (negative edges crop, interior padding).
    Pad(PadConfig),
    /// `dynamic_slice(x, starts)` with clamped starts; operand 1 holds the starts.
    DynamicSlice {
        /// Slice extent per axis.
        sizes: Vec<usize>,
    },
    /// `dynamic_update_slice(x, update, starts)`; operand 2 holds the starts.
    DynamicUpdateSlice,
    /// Concatenate along `axis`.
    Concatenate {
        /// Axis (normalised).
        axis: usize,
    },
    /// StableHLO `gather`; operand 1 holds integer indices.
    Gather(GatherConfig),
    /// StableHLO `scatter` with an add combiner; operand 1 holds integer indices.
    Scatter(ScatterConfig),
    /// The diagonal of axes `a`, `b` takes `a`'s place; `b` disappears (a view).
    ExtractDiag {
        /// First axis.
        a: usize,
        /// Second axis.
        b: usize,
    },
    /// Inverse of `ExtractDiag`: axis `b` is re-inserted, zeros off the diagonal.
    EmbedDiag {
        /// Axis holding the diagonal.
        a: usize,
        /// Position of the re-inserted axis in the output.
        b: usize,
    },
    /// Lower triangle of axes 0, 1 (keep `j - i <= k`).
    Tril(i64),
    /// Upper triangle of axes 0, 1 (keep `j - i >= k`).
    Triu(i64),
    /// `dot_general`; output `[lhs free…, rhs free…, batch…]`.
    DotGeneral(DotGeneralConfig),
    /// `dot_general` of the conjugated flagged operands.
    DotGeneralWithConj {
        /// Dimension numbers.
        config: DotGeneralConfig,
        /// Conjugate the left operand.
        lhs_conj: bool,
        /// Conjugate the right operand.
        rhs_conj: bool,
    },
    /// Rank-2 matrix product.
    Matmul,
    /// Multiply by a real scalar (rounded for integers; bool: zero → false).
    ScaleReal(f64),
    /// Multiply a complex tensor by a complex scalar.
    ScaleComplex(Complex64),
    /// A linear-algebra op (several outputs for decompositions: [`Op::num_outputs`]).
    Linalg(LinalgOp),
    /// StableHLO `fft` over the config's axes.
    Fft(FftConfig),
    /// Sorted values along `axis` (stable: ties keep their order; NaN last, `-0.0 == 0.0`;
    /// complex by real part, then imaginary part, as NumPy).
    Sort {
        /// Axis (normalised).
        axis: usize,
        /// Largest first (ties still in input order; NaN still last).
        descending: bool,
    },
    /// Stable sorting permutation along `axis` (int64), the order [`Op::Sort`] puts values in.
    Argsort {
        /// Axis (normalised).
        axis: usize,
        /// Largest first (ties still in input order; NaN still last).
        descending: bool,
    },
    /// Index (int64) of the first maximum along the axis, which disappears; NaN wins.
    Argmax(usize),
    /// Index (int64) of the first minimum along the axis, which disappears; NaN wins.
    Argmin(usize),
    /// `searchsorted(sorted, values)`: for each value, the insertion index into the 1-D
    /// ascending `sorted` (NaN last) that keeps it sorted (int64, `values`' shape).
    SearchSorted {
        /// Insert after equal elements (NumPy `side='right'`), else before.
        right: bool,
    },
    /// Inclusive cumulative sum along an axis (normalised).
    Cumsum(usize),
    /// Inclusive cumulative product along an axis (normalised).
    Cumprod(usize),
}

impl Op {
    /// Whether operand `i` is a data operand (promoted to the common dtype) rather than a
    /// predicate or an integer index operand.
    pub fn is_data_operand(&self, i: usize) -> bool {
        match self {
            Op::Select => i > 0,
            Op::DynamicSlice { .. } | Op::Gather(_) | Op::Scatter(_) => i != 1,
            Op::DynamicUpdateSlice => i != 2,
            Op::Unary(_)
            | Op::Binary(_)
            | Op::Compare(_)
            | Op::Clamp
            | Op::Convert(_)
            | Op::Cast(_)
            | Op::Transpose(_)
            | Op::Reshape(_)
            | Op::BroadcastInDim { .. }
            | Op::Reverse(_)
            | Op::Reduce { .. }
            | Op::Slice(_)
            | Op::Pad(_)
            | Op::Concatenate { .. }
            | Op::ExtractDiag { .. }
            | Op::EmbedDiag { .. }
            | Op::Tril(_)
            | Op::Triu(_)
            | Op::DotGeneral(_)
            | Op::DotGeneralWithConj { .. }
            | Op::Matmul
            | Op::ScaleReal(_)
            | Op::ScaleComplex(_)
            | Op::Linalg(_)
            | Op::Fft(_)
            | Op::Sort { .. }
            | Op::Argsort { .. }
            | Op::Argmax(_)
            | Op::Argmin(_)
            | Op::SearchSorted { .. }
            | Op::Cumsum(_)
            | Op::Cumprod(_) => true,
        }
    }

    /// Number of outputs (1 for every primitive but the decompositions).
    pub fn num_outputs(&self) -> usize {
        match self {
            Op::Linalg(l) => l.num_outputs(),
            Op::Unary(_)
            | Op::Binary(_)
            | Op::Compare(_)
            | Op::Select
            | Op::Clamp
            | Op::Convert(_)
            | Op::Cast(_)
            | Op::Transpose(_)
            | Op::Reshape(_)
            | Op::BroadcastInDim { .. }
            | Op::Reverse(_)
            | Op::Reduce { .. }
            | Op::Slice(_)
            | Op::Pad(_)
            | Op::DynamicSlice { .. }
            | Op::DynamicUpdateSlice
            | Op::Concatenate { .. }
            | Op::Gather(_)
            | Op::Scatter(_)
            | Op::ExtractDiag { .. }
            | Op::EmbedDiag { .. }
            | Op::Tril(_)
            | Op::Triu(_)
            | Op::DotGeneral(_)
            | Op::DotGeneralWithConj { .. }
            | Op::Matmul
            | Op::ScaleReal(_)
            | Op::ScaleComplex(_)
            | Op::Fft(_)
            | Op::Sort { .. }
            | Op::Argsort { .. }
            | Op::Argmax(_)
            | Op::Argmin(_)
            | Op::SearchSorted { .. }
            | Op::Cumsum(_)
            | Op::Cumprod(_) => 1,
        }
    }

    /// The catalog name of this op.
    pub fn name(&self) -> &'static str {
        crate::catalog::row(self.kind()).name
    }
}
