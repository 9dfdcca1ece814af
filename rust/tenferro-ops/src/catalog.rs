//! The catalog table.

use tenferro_tensor::DType;

/// Op families of `ops.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Elementwise, one operand.
    Unary,
    /// Elementwise, two operands (NumPy broadcasting).
    Binary,
    /// Elementwise, three operands (`select`, `clamp`).
    Ternary,
    /// Dtype conversions.
    Conversion,
    /// Axis permutations, reshapes, broadcasts, reversals.
    Layout,
    /// Static and dynamic slices, padding, concatenation.
    Slicing,
    /// `gather` and `scatter`.
    Indexing,
    /// Diagonals and triangles.
    MatrixStructure,
    /// Reductions over axes.
    Reduction,
    /// Tensor contractions and scalings.
    Contraction,
    /// Dense linear algebra.
    Linalg,
    /// Discrete Fourier transforms.
    Fft,
    /// Sorting and searching (`sort`, `argsort`, `argmax`, `argmin`, `searchsorted`).
    Sorting,
    /// Cumulative scans (`cumsum`, `cumprod`).
    Scan,
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
            Family::Fft => "fft",
            Family::Sorting => "sorting",
            Family::Scan => "scan",
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
    /// `bool`, `int32`, `int64` (the bitwise ops).
    pub const INTEGRAL: DTypeSet = DTypeSet(0b000_0111);
    /// `int32`, `int64` (the shifts).
    pub const INTEGER: DTypeSet = DTypeSet(0b000_0110);

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

/// Generates `OpKind` (with `ALL` and `COUNT`) and the catalog rows from the op table.
macro_rules! define_catalog {
    ($(
        $(#[$m:meta])*
        $kind:ident = $name:ident, $arity:literal, $family:ident, $dtypes:ident, $group:ident $target:tt;
    )*) => {
        /// One primitive of the catalog (rows of the op table, `primitive_ops!`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum OpKind {
            $($(#[$m])* $kind,)*
        }

        impl OpKind {
            /// Every kind, in declaration (and catalog) order.
            pub const ALL: [OpKind; [$(OpKind::$kind,)*].len()] = [$(OpKind::$kind,)*];
            /// Number of primitives.
            pub const COUNT: usize = Self::ALL.len();
        }

        const ROWS: [OpRow; OpKind::COUNT] = [$(
            OpRow {
                kind: OpKind::$kind,
                name: stringify!($name),
                arity: $arity,
                family: Family::$family,
                dtypes: DTypeSet::$dtypes,
            },
        )*];
    };
}

crate::primitive_ops!(define_catalog);

/// Every primitive, one row each, in `OpKind` order (row `i` is the kind with discriminant `i`,
/// checked at compile time below).
pub static CATALOG: &[OpRow] = &ROWS;

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
    fn grouped_rows_agree_with_their_family_and_arity() {
        use crate::{BinaryOp, Op, ReduceOp, UnaryOp};
        let family_count = |f: Family| CATALOG.iter().filter(|r| r.family == f).count();
        assert_eq!(UnaryOp::ALL.len(), family_count(Family::Unary));
        assert_eq!(ReduceOp::ALL.len(), family_count(Family::Reduction));
        for u in UnaryOp::ALL {
            let r = row(Op::Unary(u).kind());
            assert_eq!((r.family, r.arity), (Family::Unary, 1), "{}", r.name);
        }
        for b in BinaryOp::ALL {
            let r = row(Op::Binary(b).kind());
            assert_eq!((r.family, r.arity), (Family::Binary, 2), "{}", r.name);
        }
        for op in ReduceOp::ALL {
            let r = row(Op::Reduce { op, axes: vec![] }.kind());
            assert_eq!((r.family, r.arity), (Family::Reduction, 1), "{}", r.name);
            assert!(r.name.starts_with("reduce_"), "{}", r.name);
        }
        // Distinct sub-enum values are distinct kinds (no two rows share a variant).
        let mut kinds: Vec<OpKind> = UnaryOp::ALL.iter().map(|&u| Op::Unary(u).kind()).collect();
        kinds.extend(BinaryOp::ALL.iter().map(|&b| Op::Binary(b).kind()));
        kinds.extend(
            ReduceOp::ALL
                .iter()
                .map(|&op| Op::Reduce { op, axes: vec![] }.kind()),
        );
        let n = kinds.len();
        kinds.sort_by_key(|&k| k as usize);
        kinds.dedup();
        assert_eq!(kinds.len(), n);
    }

    #[test]
    fn op_kind_names_the_row_of_its_pattern() {
        use crate::{LinalgOp, Op};
        assert_eq!(
            Op::Linalg(LinalgOp::Svd {
                full_matrices: true,
                eps: 0.0
            })
            .name(),
            "svd"
        );
        assert_eq!(
            Op::Linalg(LinalgOp::TriangularSolve { lower: true }).name(),
            "triangular_solve"
        );
        assert_eq!(Op::Concatenate { axis: 0 }.name(), "concatenate");
        assert_eq!(Op::Matmul.kind(), OpKind::Matmul);
        assert_eq!(row(OpKind::Concatenate).arity, -1);
        assert_eq!(row(OpKind::Erf).dtypes, DTypeSet::REAL_FLOAT);
        assert_eq!(OpKind::ALL[0], OpKind::Neg);
        assert_eq!(OpKind::COUNT, CATALOG.len());
    }

    #[test]
    fn dtype_sets() {
        assert!(DTypeSet::ORDERED.contains(DType::Bool));
        assert!(!DTypeSet::ORDERED.contains(DType::C32));
        assert_eq!(DTypeSet::REAL_FLOAT.dtypes(), vec![DType::F32, DType::F64]);
    }
}
