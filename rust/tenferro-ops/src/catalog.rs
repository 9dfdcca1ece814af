//! The catalog table.

use tenferro_tensor::DType;

/// Op families of `ops.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Unary,
    Binary,
    Ternary,
    Conversion,
    Layout,
    Slicing,
    Indexing,
    MatrixStructure,
    Reduction,
    Contraction,
    Linalg,
}

impl Family {
    /// Lower-case name used by the Python surface.
    pub fn name(self) -> &'static str {
        match self {
            Family::Unary => "unary",
            Family::Binary => "binary",
            Family::Ternary => "ternary",
            Family::Conversion => "conversion",
            Family::Layout => "layout",
            Family::Slicing => "slicing",
            Family::Indexing => "indexing",
            Family::MatrixStructure => "matrix_structure",
            Family::Reduction => "reduction",
            Family::Contraction => "contraction",
            Family::Linalg => "linalg",
        }
    }
}

/// A set of dtypes (bit `i` is `DType::ALL[i]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DTypeSet(u8);

impl DTypeSet {
    /// Every dtype.
    pub const ALL: DTypeSet = DTypeSet(0b111_1111);
    /// Everything but `bool`.
    pub const NUMERIC: DTypeSet = DTypeSet(0b111_1110);
    /// Float and complex.
    pub const INEXACT: DTypeSet = DTypeSet(0b111_1000);
    /// `float32`, `float64`.
    pub const REAL_FLOAT: DTypeSet = DTypeSet(0b001_1000);
    /// Totally ordered dtypes: everything but complex.
    pub const ORDERED: DTypeSet = DTypeSet(0b001_1111);
    /// Ordered and numeric: ints and real floats.
    pub const REAL_NUMERIC: DTypeSet = DTypeSet(0b001_1110);
    /// `complex64`, `complex128`.
    pub const COMPLEX: DTypeSet = DTypeSet(0b110_0000);

    fn bit(d: DType) -> u8 {
        1 << d.index()
    }

    /// Membership.
    pub fn contains(self, d: DType) -> bool {
        self.0 & Self::bit(d) != 0
    }

    /// The members, in lattice order.
    pub fn dtypes(self) -> Vec<DType> {
        DType::ALL
            .into_iter()
            .filter(|&d| self.contains(d))
            .collect()
    }

    /// Human-readable list for error messages.
    pub fn describe(self) -> String {
        let names: Vec<&str> = self.dtypes().into_iter().map(DType::name).collect();
        names.join(", ")
    }
}

/// Declares `OpKind` and `OpKind::ALL` from one list, so the count and the list of kinds cannot
/// drift from the enum.
macro_rules! op_kinds {
    ($($kind:ident,)*) => {
        /// One primitive of the catalog.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum OpKind {
            $($kind,)*
        }

        impl OpKind {
            /// Every kind, in declaration (and catalog) order.
            pub const ALL: [OpKind; [$(OpKind::$kind,)*].len()] = [$(OpKind::$kind,)*];
            /// Number of primitives.
            pub const COUNT: usize = Self::ALL.len();
        }
    };
}

op_kinds! {
    Neg,
    Conj,
    Abs,
    Sign,
    Exp,
    Log,
    Sin,
    Cos,
    Tanh,
    Sqrt,
    Rsqrt,
    Expm1,
    Log1p,
    Erf,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Maximum,
    Minimum,
    Compare,
    Select,
    Clamp,
    Convert,
    Cast,
    Transpose,
    Reshape,
    BroadcastInDim,
    Reverse,
    Slice,
    DynamicSlice,
    DynamicUpdateSlice,
    Pad,
    Concatenate,
    Gather,
    Scatter,
    ExtractDiag,
    EmbedDiag,
    Tril,
    Triu,
    ReduceSum,
    ReduceProd,
    ReduceMax,
    ReduceMin,
    ReduceSumSquares,
    DotGeneral,
    DotGeneralWithConj,
    Matmul,
    ScaleReal,
    ScaleComplex,
    Svd,
    Svdvals,
    Qr,
    Eigh,
    Eigvalsh,
    Eig,
    Cholesky,
    Lu,
    Solve,
    TriangularSolve,
    Slogdet,
}

/// A row of the catalog.
#[derive(Clone, Copy, Debug)]
pub struct OpRow {
    /// The op.
    pub kind: OpKind,
    /// StableHLO-style name (also the Python name).
    pub name: &'static str,
    /// Number of tensor operands (`-1`: variadic).
    pub arity: i8,
    /// Family of `ops.md`.
    pub family: Family,
    /// Admitted dtypes of the (promoted) data operands.
    pub dtypes: DTypeSet,
}

const fn r(kind: OpKind, name: &'static str, arity: i8, family: Family, dtypes: DTypeSet) -> OpRow {
    OpRow {
        kind,
        name,
        arity,
        family,
        dtypes,
    }
}

use DTypeSet as D;
use Family as F;
use OpKind as K;

/// Every primitive, one row each, in `OpKind` order (row `i` is the kind with discriminant `i`,
/// checked at compile time below).
pub static CATALOG: &[OpRow] = &ROWS;

const ROWS: [OpRow; OpKind::COUNT] = [
    r(K::Neg, "neg", 1, F::Unary, D::NUMERIC),
    r(K::Conj, "conj", 1, F::Unary, D::ALL),
    r(K::Abs, "abs", 1, F::Unary, D::NUMERIC),
    r(K::Sign, "sign", 1, F::Unary, D::NUMERIC),
    r(K::Exp, "exp", 1, F::Unary, D::INEXACT),
    r(K::Log, "log", 1, F::Unary, D::INEXACT),
    r(K::Sin, "sin", 1, F::Unary, D::INEXACT),
    r(K::Cos, "cos", 1, F::Unary, D::INEXACT),
    r(K::Tanh, "tanh", 1, F::Unary, D::INEXACT),
    r(K::Sqrt, "sqrt", 1, F::Unary, D::INEXACT),
    r(K::Rsqrt, "rsqrt", 1, F::Unary, D::INEXACT),
    r(K::Expm1, "expm1", 1, F::Unary, D::INEXACT),
    r(K::Log1p, "log1p", 1, F::Unary, D::INEXACT),
    r(K::Erf, "erf", 1, F::Unary, D::REAL_FLOAT),
    r(K::Add, "add", 2, F::Binary, D::ALL),
    r(K::Sub, "sub", 2, F::Binary, D::NUMERIC),
    r(K::Mul, "mul", 2, F::Binary, D::ALL),
    r(K::Div, "div", 2, F::Binary, D::NUMERIC),
    r(K::Rem, "rem", 2, F::Binary, D::REAL_NUMERIC),
    r(K::Pow, "pow", 2, F::Binary, D::NUMERIC),
    r(K::Maximum, "maximum", 2, F::Binary, D::ORDERED),
    r(K::Minimum, "minimum", 2, F::Binary, D::ORDERED),
    r(K::Compare, "compare", 2, F::Binary, D::ALL),
    r(K::Select, "select", 3, F::Ternary, D::ALL),
    r(K::Clamp, "clamp", 3, F::Ternary, D::ORDERED),
    r(K::Convert, "convert", 1, F::Conversion, D::ALL),
    r(K::Cast, "cast", 1, F::Conversion, D::ALL),
    r(K::Transpose, "transpose", 1, F::Layout, D::ALL),
    r(K::Reshape, "reshape", 1, F::Layout, D::ALL),
    r(K::BroadcastInDim, "broadcast_in_dim", 1, F::Layout, D::ALL),
    r(K::Reverse, "reverse", 1, F::Layout, D::ALL),
    r(K::Slice, "slice", 1, F::Slicing, D::ALL),
    r(K::DynamicSlice, "dynamic_slice", 2, F::Slicing, D::ALL),
    r(
        K::DynamicUpdateSlice,
        "dynamic_update_slice",
        3,
        F::Slicing,
        D::ALL,
    ),
    r(K::Pad, "pad", 1, F::Slicing, D::ALL),
    r(K::Concatenate, "concatenate", -1, F::Slicing, D::ALL),
    r(K::Gather, "gather", 2, F::Indexing, D::ALL),
    r(K::Scatter, "scatter", 3, F::Indexing, D::ALL),
    r(
        K::ExtractDiag,
        "extract_diag",
        1,
        F::MatrixStructure,
        D::ALL,
    ),
    r(K::EmbedDiag, "embed_diag", 1, F::MatrixStructure, D::ALL),
    r(K::Tril, "tril", 1, F::MatrixStructure, D::ALL),
    r(K::Triu, "triu", 1, F::MatrixStructure, D::ALL),
    r(K::ReduceSum, "reduce_sum", 1, F::Reduction, D::NUMERIC),
    r(K::ReduceProd, "reduce_prod", 1, F::Reduction, D::NUMERIC),
    r(K::ReduceMax, "reduce_max", 1, F::Reduction, D::ORDERED),
    r(K::ReduceMin, "reduce_min", 1, F::Reduction, D::ORDERED),
    r(
        K::ReduceSumSquares,
        "reduce_sum_squares",
        1,
        F::Reduction,
        D::REAL_FLOAT,
    ),
    r(K::DotGeneral, "dot_general", 2, F::Contraction, D::NUMERIC),
    r(
        K::DotGeneralWithConj,
        "dot_general_with_conj",
        2,
        F::Contraction,
        D::NUMERIC,
    ),
    r(K::Matmul, "matmul", 2, F::Contraction, D::NUMERIC),
    r(K::ScaleReal, "scale_real", 1, F::Contraction, D::ALL),
    r(
        K::ScaleComplex,
        "scale_complex",
        1,
        F::Contraction,
        D::COMPLEX,
    ),
    r(K::Svd, "svd", 1, F::Linalg, D::INEXACT),
    r(K::Svdvals, "svdvals", 1, F::Linalg, D::INEXACT),
    r(K::Qr, "qr", 1, F::Linalg, D::INEXACT),
    r(K::Eigh, "eigh", 1, F::Linalg, D::INEXACT),
    r(K::Eigvalsh, "eigvalsh", 1, F::Linalg, D::INEXACT),
    r(K::Eig, "eig", 1, F::Linalg, D::INEXACT),
    r(K::Cholesky, "cholesky", 1, F::Linalg, D::INEXACT),
    r(K::Lu, "lu", 1, F::Linalg, D::INEXACT),
    r(K::Solve, "solve", 2, F::Linalg, D::INEXACT),
    r(
        K::TriangularSolve,
        "triangular_solve",
        2,
        F::Linalg,
        D::INEXACT,
    ),
    r(K::Slogdet, "slogdet", 1, F::Linalg, D::INEXACT),
];

// Row `i` describes the kind whose discriminant is `i`: with `ROWS` sized `OpKind::COUNT`, every
// kind has exactly one row, and `row` indexes instead of searching (no fallback row).
const _: () = {
    let mut i = 0;
    while i < ROWS.len() {
        assert!(
            ROWS[i].kind as usize == i,
            "CATALOG rows must follow OpKind order"
        );
        i += 1;
    }
};

/// The catalog row of `kind`.
pub fn row(kind: OpKind) -> &'static OpRow {
    &ROWS[kind as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_row_and_names_are_unique() {
        let mut names: Vec<&str> = CATALOG.iter().map(|r| r.name).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
        for r in CATALOG {
            assert_eq!(row(r.kind).name, r.name);
        }
    }

    #[test]
    fn dtype_sets() {
        assert!(DTypeSet::ORDERED.contains(DType::Bool));
        assert!(!DTypeSet::ORDERED.contains(DType::C32));
        assert_eq!(DTypeSet::REAL_FLOAT.dtypes(), vec![DType::F32, DType::F64]);
    }
}
