//! The seven dtypes, their promotion lattice (`ops.md`) and weak Python scalars (NumPy 2 / JAX).

use crate::error::{Error, Result};
use num_complex::{Complex32, Complex64};

/// Element types of tenferro tensors. Python sees them as NumPy dtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I32,
    I64,
    F32,
    F64,
    C32,
    C64,
}

impl DType {
    /// Every dtype, in lattice order.
    pub const ALL: [DType; 7] = [
        DType::Bool,
        DType::I32,
        DType::I64,
        DType::F32,
        DType::F64,
        DType::C32,
        DType::C64,
    ];

    /// The position of the dtype in [`DType::ALL`] (lattice order).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// NumPy's name of the dtype (`"float64"`, `"complex64"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::C32 => "complex64",
            DType::C64 => "complex128",
        }
    }

    /// Parse NumPy's name of a dtype.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bytes per element.
    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 | DType::C32 => 8,
            DType::C64 => 16,
        }
    }

    /// `bool`.
    pub fn is_bool(self) -> bool {
        self == DType::Bool
    }
    /// `int32` or `int64`.
    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }
    /// `float32` or `float64`.
    pub fn is_real_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
    /// `complex64` or `complex128`.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C32 | DType::C64)
    }
    /// Float or complex (the dtypes that can carry derivatives).
    pub fn is_inexact(self) -> bool {
        self.is_real_float() || self.is_complex()
    }

    /// The real dtype of the same precision (`complex64 → float32`); identity otherwise.
    pub fn to_real(self) -> DType {
        match self {
            DType::C32 => DType::F32,
            DType::C64 => DType::F64,
            d => d,
        }
    }

    /// The complex dtype of the same precision (`float32 → complex64`, ints → `complex128`).
    pub fn to_complex(self) -> DType {
        match self {
            DType::F32 | DType::C32 => DType::C32,
            _ => DType::C64,
        }
    }

    /// The buffer-protocol format code (`d f Zd Zf q i ?`).
    pub fn format_code(self) -> &'static str {
        match self {
            DType::Bool => "?",
            DType::I32 => "i",
            DType::I64 => "q",
            DType::F32 => "f",
            DType::F64 => "d",
            DType::C32 => "Zf",
            DType::C64 => "Zd",
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The promotion lattice of `ops.md`: `bool+T→T`; `i32+i64→i64`; int with a real float → `f64`;
/// int with a complex → `c128`; `f32+f64→f64`; `f32+c64→c64`; `f32+c128→c128`; `f64+c64→c128`;
/// `c64+c128→c128`.
pub fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    match (lo, hi) {
        (Bool, t) => t,
        (I32, I64) => I64,
        (I32 | I64, F32 | F64) => F64,
        (I32 | I64, C32 | C64) => C64,
        (F32, F64) => F64,
        (F32, C32) => C32,
        (F32, C64) => C64,
        (F64, C32 | C64) => C64,
        (C32, C64) => C64,
        _ => hi,
    }
}

/// The kind of a *weak* Python scalar: it adapts to the tensor's dtype instead of widening it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Bool,
    Int,
    Float,
    Complex,
}

/// Result dtype of `tensor(dtype) ⊕ weak scalar(kind)` (NumPy 2 / JAX weak typing):
/// `x_f32 * 2.0 → f32`, `x_i32 + 1 → i32`, `x_i32 * 0.5 → f64`, `x_f32 * 1j → c64`.
pub fn promote_weak(t: DType, s: ScalarKind) -> DType {
    use DType::*;
    match (s, t) {
        (ScalarKind::Bool, t) => t,
        (ScalarKind::Int, Bool) => I64,
        (ScalarKind::Int, t) => t,
        (ScalarKind::Float, Bool | I32 | I64) => F64,
        (ScalarKind::Float, t) => t,
        (ScalarKind::Complex, F32 | C32) => C32,
        (ScalarKind::Complex, _) => C64,
    }
}

/// The default dtype of a lone Python scalar (NumPy: `bool`, `int64`, `float64`, `complex128`).
pub fn scalar_default_dtype(s: ScalarKind) -> DType {
    match s {
        ScalarKind::Bool => DType::Bool,
        ScalarKind::Int => DType::I64,
        ScalarKind::Float => DType::F64,
        ScalarKind::Complex => DType::C64,
    }
}

/// `convert(from → to)` is allowed only up the lattice (`promote(from, to) == to`).
pub fn check_convert(op: &str, from: DType, to: DType) -> Result<()> {
    if promote(from, to) == to {
        Ok(())
    } else {
        Err(Error::dtype(
            op,
            format!(
                "cannot convert {from} to {to}: convert only goes up the promotion lattice \
                 (use cast for a lossy conversion)"
            ),
        ))
    }
}

/// A Rust element type of a tensor.
pub trait Element: Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static {
    /// The dtype of this element type.
    const DTYPE: DType;
}

macro_rules! element {
    ($t:ty, $d:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
        }
    };
}
element!(bool, Bool);
element!(i32, I32);
element!(i64, I64);
element!(f32, F32);
element!(f64, F64);
element!(Complex32, C32);
element!(Complex64, C64);

/// Call `$body` with `$T` bound to the element type of `$dtype`.
#[macro_export]
macro_rules! dispatch_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::DType::Bool => {
                type $T = bool;
                $body
            }
            $crate::DType::I32 => {
                type $T = i32;
                $body
            }
            $crate::DType::I64 => {
                type $T = i64;
                $body
            }
            $crate::DType::F32 => {
                type $T = f32;
                $body
            }
            $crate::DType::F64 => {
                type $T = f64;
                $body
            }
            $crate::DType::C32 => {
                type $T = $crate::Complex32;
                $body
            }
            $crate::DType::C64 => {
                type $T = $crate::Complex64;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_the_position_in_all() {
        for (i, d) in DType::ALL.into_iter().enumerate() {
            assert_eq!(d.index(), i);
        }
    }
    use DType::*;

    #[test]
    fn lattice_matches_ops_md() {
        let cases = [
            (Bool, F32, F32),
            (I32, I32, I32),
            (I32, I64, I64),
            (I32, F32, F64),
            (I64, F64, F64),
            (I32, C32, C64),
            (F32, F64, F64),
            (F32, C32, C32),
            (F32, C64, C64),
            (F64, C32, C64),
            (C32, C64, C64),
        ];
        for (a, b, r) in cases {
            assert_eq!(promote(a, b), r, "{a}+{b}");
            assert_eq!(promote(b, a), r, "{b}+{a}");
        }
        // Associativity over all triples: the lattice is a join semi-lattice.
        for a in DType::ALL {
            for b in DType::ALL {
                for c in DType::ALL {
                    assert_eq!(promote(promote(a, b), c), promote(a, promote(b, c)));
                }
            }
        }
    }

    #[test]
    fn weak_scalars() {
        assert_eq!(promote_weak(F32, ScalarKind::Float), F32);
        assert_eq!(promote_weak(I32, ScalarKind::Int), I32);
        assert_eq!(promote_weak(I32, ScalarKind::Float), F64);
        assert_eq!(promote_weak(F32, ScalarKind::Complex), C32);
        assert_eq!(promote_weak(Bool, ScalarKind::Int), I64);
    }

    #[test]
    fn convert_only_up() {
        assert!(check_convert("convert", F32, F64).is_ok());
        assert!(check_convert("convert", F64, F32).is_err());
        assert!(check_convert("convert", C32, F32).is_err());
        assert!(check_convert("convert", I64, F64).is_ok());
    }
}
