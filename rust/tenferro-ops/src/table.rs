//! The op table: the one place a primitive is listed (issue 19, "One op table").
//!
//! [`primitive_ops!`](crate::primitive_ops) hands the table to a callback macro; see its docs
//! for the row syntax, what is generated from it and the callbacks.

/// The op table. `primitive_ops!` hands it to a callback macro, which generates
/// what it needs from it. In this crate: [`OpKind`](crate::OpKind) with `ALL`/`COUNT`, the
/// catalog rows ([`CATALOG`](crate::CATALOG), [`row`](crate::row)), the sub-enums that only name
/// ops ([`UnaryOp`](crate::UnaryOp), [`BinaryOp`](crate::BinaryOp),
/// [`ReduceOp`](crate::ReduceOp)) and the exhaustive [`Op::kind`](crate::Op::kind). In
/// `tenferro-py`: the uniform `Session` methods. The parameterised variants of
/// [`Op`](crate::Op) and [`LinalgOp`](crate::LinalgOp) stay hand-written (they carry
/// parameters); a row names the `Op` pattern it stands for.
///
/// # Rows
///
/// In catalog order (`OpKind` discriminant order), one per primitive:
///
/// ```text
/// /// Doc of the OpKind variant (and of the sub-enum variant).
/// Kind = name, arity, Family, DTYPES, group(target);
/// ```
///
/// - `Kind`: the [`OpKind`](crate::OpKind) variant; `name`: the StableHLO-style name (also the
///   Python name and `Session` method), written as an identifier;
/// - `arity`: number of tensor operands (`-1`: variadic); `Family`: a
///   [`Family`](crate::Family) variant; `DTYPES`: a [`DTypeSet`](crate::DTypeSet) constant
///   (admitted dtypes of the promoted data operands);
/// - `group(target)`: `unary(V)`, `binary(V)` or `reduce(V)` for a primitive named by the
///   variant `V` of [`UnaryOp`](crate::UnaryOp), [`BinaryOp`](crate::BinaryOp) or
///   [`ReduceOp`](crate::ReduceOp) (`Op::Unary(UnaryOp::V)`, `Op::Binary(..)`,
///   `Op::Reduce { op: ReduceOp::V, .. }`, uniform `Session` methods); `op(pattern)` for every
///   other primitive, with the [`Op`](crate::Op) pattern that is this kind.
///
/// Adding a unary primitive: its row here (the enums, the catalog row, `Op::kind`, the
/// `Session` method, `tf.prim.<name>` and the stub follow), its CPU kernel (`tenferro-cpu`, an
/// exhaustive match on `UnaryOp`), its derivative-rule row (`tenferro-ad`), its reference in
/// `tests/reference.py`, and its NumPy-named Python wrapper.
///
/// # Callbacks
///
/// - `primitive_ops!(cb)` → `cb! { rows }`, the rows as above;
/// - `primitive_ops!(cb, extra…)` → `cb! { [extra…] rows }`;
/// - `primitive_ops!(grouped cb)` → `cb! { unary: [..], binary: [..], reduce: [..], other: [..] }`
///   where `unary`, `binary` and `reduce` hold `{ #[doc..]* Kind name Variant }` and `other`
///   holds `{ #[doc..]* Kind name (pattern) }`, each in catalog order.
#[macro_export]
macro_rules! primitive_ops {
    (@table $cb:path [$($extra:tt)*]) => {
        $cb! {
            $($extra)*
            /// `-x` (bool is rejected).
            Neg = neg, 1, Unary, NUMERIC, unary(Neg);
            /// Complex conjugate (the identity on real dtypes).
            Conj = conj, 1, Unary, ALL, unary(Conj);
            /// `|x|`; real for complex input.
            Abs = abs, 1, Unary, NUMERIC, unary(Abs);
            /// Sign: `-1, 0, 1`; `z/|z|` (0 at 0) for complex input.
            Sign = sign, 1, Unary, NUMERIC, unary(Sign);
            /// `e^x`.
            Exp = exp, 1, Unary, INEXACT, unary(Exp);
            /// Natural logarithm (principal branch for complex input).
            Log = log, 1, Unary, INEXACT, unary(Log);
            /// Sine.
            Sin = sin, 1, Unary, INEXACT, unary(Sin);
            /// Cosine.
            Cos = cos, 1, Unary, INEXACT, unary(Cos);
            /// Hyperbolic tangent.
            Tanh = tanh, 1, Unary, INEXACT, unary(Tanh);
            /// Square root (principal branch for complex input).
            Sqrt = sqrt, 1, Unary, INEXACT, unary(Sqrt);
            /// `1/sqrt(x)`.
            Rsqrt = rsqrt, 1, Unary, INEXACT, unary(Rsqrt);
            /// `e^x - 1`, accurate near 0.
            Expm1 = expm1, 1, Unary, INEXACT, unary(Expm1);
            /// `log(1 + x)`, accurate near 0.
            Log1p = log1p, 1, Unary, INEXACT, unary(Log1p);
            /// Error function (real floats only).
            Erf = erf, 1, Unary, REAL_FLOAT, unary(Erf);
            /// Round to the nearest integer, halfway cases to even (NumPy's `rint`); real and
            /// imaginary parts separately for complex input.
            Round = round, 1, Unary, INEXACT, unary(Round);
            /// Largest integer not above `x` (the identity on bool and integer dtypes, as NumPy).
            Floor = floor, 1, Unary, ORDERED, unary(Floor);
            /// Smallest integer not below `x` (the identity on bool and integer dtypes).
            Ceil = ceil, 1, Unary, ORDERED, unary(Ceil);
            /// `x` rounded toward zero (the identity on bool and integer dtypes).
            Trunc = trunc, 1, Unary, ORDERED, unary(Trunc);
            /// Hyperbolic sine.
            Sinh = sinh, 1, Unary, INEXACT, unary(Sinh);
            /// Hyperbolic cosine.
            Cosh = cosh, 1, Unary, INEXACT, unary(Cosh);
            /// Bitwise NOT of integers (`!x`, two's complement); logical NOT of bool.
            BitwiseNot = bitwise_not, 1, Unary, INTEGRAL, unary(BitwiseNot);
            /// `x + y`.
            Add = add, 2, Binary, ALL, binary(Add);
            /// `x - y`.
            Sub = sub, 2, Binary, NUMERIC, binary(Sub);
            /// `x * y`.
            Mul = mul, 2, Binary, ALL, binary(Mul);
            /// `x / y` (integers truncate toward zero).
            Div = div, 2, Binary, NUMERIC, binary(Div);
            /// Remainder with the dividend's sign.
            Rem = rem, 2, Binary, REAL_NUMERIC, binary(Rem);
            /// `x ** y`.
            Pow = pow, 2, Binary, NUMERIC, binary(Pow);
            /// Elementwise maximum (NaN-propagating).
            Maximum = maximum, 2, Binary, ORDERED, binary(Maximum);
            /// Elementwise minimum (NaN-propagating).
            Minimum = minimum, 2, Binary, ORDERED, binary(Minimum);
            /// Bitwise AND of integers; logical AND of bool.
            BitwiseAnd = bitwise_and, 2, Binary, INTEGRAL, binary(BitwiseAnd);
            /// Bitwise OR of integers; logical OR of bool.
            BitwiseOr = bitwise_or, 2, Binary, INTEGRAL, binary(BitwiseOr);
            /// Bitwise XOR of integers; logical XOR of bool.
            BitwiseXor = bitwise_xor, 2, Binary, INTEGRAL, binary(BitwiseXor);
            /// `x << y`; counts outside `[0, bits)` give 0 (NumPy's results).
            ShiftLeft = shift_left, 2, Binary, INTEGER, binary(ShiftLeft);
            /// `x >> y` filling with the sign bit; counts outside `[0, bits)` give `0` or `-1`
            /// by the sign of `x` (NumPy's results).
            ShiftRightArithmetic = shift_right_arithmetic, 2, Binary, INTEGER,
                binary(ShiftRightArithmetic);
            /// `|x|` with the sign bit of `y` (IEEE `copysign`, NaN signs included).
            Copysign = copysign, 2, Binary, REAL_FLOAT, binary(Copysign);
            /// The next representable float after `x` toward `y` (C `nextafter`).
            Nextafter = nextafter, 2, Binary, REAL_FLOAT, binary(Nextafter);
            /// `compare(x, y, direction)` → bool.
            Compare = compare, 2, Binary, ALL, op(Op::Compare(_));
            /// `select(pred, on_true, on_false)`.
            Select = select, 3, Ternary, ALL, op(Op::Select);
            /// `clamp(x, lo, hi)`.
            Clamp = clamp, 3, Ternary, ORDERED, op(Op::Clamp);
            /// Checked conversion up the promotion lattice.
            Convert = convert, 1, Conversion, ALL, op(Op::Convert(_));
            /// Lossy conversion.
            Cast = cast, 1, Conversion, ALL, op(Op::Cast(_));
            /// Axis permutation (a view).
            Transpose = transpose, 1, Layout, ALL, op(Op::Transpose(_));
            /// Column-major reshape.
            Reshape = reshape, 1, Layout, ALL, op(Op::Reshape(_));
            /// StableHLO `broadcast_in_dim`.
            BroadcastInDim = broadcast_in_dim, 1, Layout, ALL, op(Op::BroadcastInDim { .. });
            /// Reverse axes.
            Reverse = reverse, 1, Layout, ALL, op(Op::Reverse(_));
            /// StableHLO `slice` (a view).
            Slice = slice, 1, Slicing, ALL, op(Op::Slice(_));
            /// `dynamic_slice(x, starts)` with clamped starts.
            DynamicSlice = dynamic_slice, 2, Slicing, ALL, op(Op::DynamicSlice { .. });
            /// `dynamic_update_slice(x, update, starts)`.
            DynamicUpdateSlice = dynamic_update_slice, 3, Slicing, ALL, op(Op::DynamicUpdateSlice);
            /// Zero padding (negative edges crop, interior padding).
            Pad = pad, 1, Slicing, ALL, op(Op::Pad(_));
            /// Concatenation along an axis.
            Concatenate = concatenate, -1, Slicing, ALL, op(Op::Concatenate { .. });
            /// StableHLO `gather`.
            Gather = gather, 2, Indexing, ALL, op(Op::Gather(_));
            /// StableHLO `scatter` with an add combiner.
            Scatter = scatter, 3, Indexing, ALL, op(Op::Scatter(_));
            /// The diagonal of two axes (a view).
            ExtractDiag = extract_diag, 1, MatrixStructure, ALL, op(Op::ExtractDiag { .. });
            /// Inverse of `extract_diag`.
            EmbedDiag = embed_diag, 1, MatrixStructure, ALL, op(Op::EmbedDiag { .. });
            /// Lower triangle.
            Tril = tril, 1, MatrixStructure, ALL, op(Op::Tril(_));
            /// Upper triangle.
            Triu = triu, 1, MatrixStructure, ALL, op(Op::Triu(_));
            /// Sum over axes.
            ReduceSum = reduce_sum, 1, Reduction, NUMERIC, reduce(Sum);
            /// Product over axes.
            ReduceProd = reduce_prod, 1, Reduction, NUMERIC, reduce(Prod);
            /// Maximum over axes.
            ReduceMax = reduce_max, 1, Reduction, ORDERED, reduce(Max);
            /// Minimum over axes.
            ReduceMin = reduce_min, 1, Reduction, ORDERED, reduce(Min);
            /// Sum of squares over axes.
            ReduceSumSquares = reduce_sum_squares, 1, Reduction, REAL_FLOAT, reduce(SumSquares);
            /// StableHLO `dot_general`.
            DotGeneral = dot_general, 2, Contraction, NUMERIC, op(Op::DotGeneral(_));
            /// `dot_general` of conjugated operands.
            DotGeneralWithConj = dot_general_with_conj, 2, Contraction, NUMERIC,
                op(Op::DotGeneralWithConj { .. });
            /// Rank-2 matrix product.
            Matmul = matmul, 2, Contraction, NUMERIC, op(Op::Matmul);
            /// Multiplication by a real scalar.
            ScaleReal = scale_real, 1, Contraction, ALL, op(Op::ScaleReal(_));
            /// Multiplication of a complex tensor by a complex scalar.
            ScaleComplex = scale_complex, 1, Contraction, COMPLEX, op(Op::ScaleComplex(_));
            /// Singular value decomposition.
            Svd = svd, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Svd { .. }));
            /// Singular values only.
            Svdvals = svdvals, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Svdvals));
            /// QR decomposition.
            Qr = qr, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Qr { .. }));
            /// Hermitian eigendecomposition.
            Eigh = eigh, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Eigh { .. }));
            /// Hermitian eigenvalues only.
            Eigvalsh = eigvalsh, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Eigvalsh));
            /// General eigendecomposition.
            Eig = eig, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Eig));
            /// Cholesky factor.
            Cholesky = cholesky, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Cholesky));
            /// LU decomposition with partial pivoting.
            Lu = lu, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Lu));
            /// Linear solve.
            Solve = solve, 2, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Solve));
            /// Triangular solve.
            TriangularSolve = triangular_solve, 2, Linalg, INEXACT,
                op(Op::Linalg(LinalgOp::TriangularSolve { .. }));
            /// Sign and log-magnitude of the determinant.
            Slogdet = slogdet, 1, Linalg, INEXACT, op(Op::Linalg(LinalgOp::Slogdet));
            /// StableHLO `fft` (`FFT`, `IFFT`, `RFFT`, `IRFFT` over listed axes).
            Fft = fft, 1, Fft, INEXACT, op(Op::Fft(_));
            /// Sorted values along an axis (stable; NaN last; complex lexicographic).
            Sort = sort, 1, Sorting, ALL, op(Op::Sort { .. });
            /// Stable sorting permutation along an axis → int64.
            Argsort = argsort, 1, Sorting, ALL, op(Op::Argsort { .. });
            /// Index of the first maximum along an axis (NaN wins) → int64.
            Argmax = argmax, 1, Sorting, ALL, op(Op::Argmax(_));
            /// Index of the first minimum along an axis (NaN wins) → int64.
            Argmin = argmin, 1, Sorting, ALL, op(Op::Argmin(_));
            /// `searchsorted(sorted, values)`: insertion indices into a sorted 1-D tensor → int64.
            SearchSorted = searchsorted, 2, Sorting, ALL, op(Op::SearchSorted { .. });
            /// Inclusive cumulative sum along an axis.
            Cumsum = cumsum, 1, Scan, NUMERIC, op(Op::Cumsum(_));
            /// Inclusive cumulative product along an axis.
            Cumprod = cumprod, 1, Scan, NUMERIC, op(Op::Cumprod(_));
        }
    };
    (grouped $cb:path) => {
        $crate::primitive_ops! { $crate::__primitive_groups, $cb }
    };
    ($cb:path, $($extra:tt)+) => {
        $crate::primitive_ops! { @table $cb [[$($extra)+]] }
    };
    ($cb:path) => {
        $crate::primitive_ops! { @table $cb [] }
    };
}

/// Splits the rows of [`primitive_ops!`](crate::primitive_ops) by group, one row per step
/// (the recursion depth is the number of rows plus a few: past about 120 rows the crates that
/// expand it need a higher `#![recursion_limit]`). Use `primitive_ops!(grouped cb)`.
#[doc(hidden)]
#[macro_export]
macro_rules! __primitive_groups {
    ([$cb:path] $($rows:tt)*) => {
        $crate::__primitive_groups! { @split [$cb] [] [] [] [] $($rows)* }
    };
    (@split $cb:tt [$($u:tt)*] $b:tt $r:tt $o:tt
        $(#[$m:meta])* $kind:ident = $name:ident, $arity:literal, $family:ident, $dtypes:ident,
        unary($v:ident); $($rest:tt)*) => {
        $crate::__primitive_groups! {
            @split $cb [$($u)* { $(#[$m])* $kind $name $v }] $b $r $o $($rest)*
        }
    };
    (@split $cb:tt $u:tt [$($b:tt)*] $r:tt $o:tt
        $(#[$m:meta])* $kind:ident = $name:ident, $arity:literal, $family:ident, $dtypes:ident,
        binary($v:ident); $($rest:tt)*) => {
        $crate::__primitive_groups! {
            @split $cb $u [$($b)* { $(#[$m])* $kind $name $v }] $r $o $($rest)*
        }
    };
    (@split $cb:tt $u:tt $b:tt [$($r:tt)*] $o:tt
        $(#[$m:meta])* $kind:ident = $name:ident, $arity:literal, $family:ident, $dtypes:ident,
        reduce($v:ident); $($rest:tt)*) => {
        $crate::__primitive_groups! {
            @split $cb $u $b [$($r)* { $(#[$m])* $kind $name $v }] $o $($rest)*
        }
    };
    (@split $cb:tt $u:tt $b:tt $r:tt [$($o:tt)*]
        $(#[$m:meta])* $kind:ident = $name:ident, $arity:literal, $family:ident, $dtypes:ident,
        op($p:pat); $($rest:tt)*) => {
        $crate::__primitive_groups! {
            @split $cb $u $b $r [$($o)* { $(#[$m])* $kind $name ($p) }] $($rest)*
        }
    };
    (@split [$cb:path] $u:tt $b:tt $r:tt $o:tt) => {
        $cb! { unary: $u, binary: $b, reduce: $r, other: $o }
    };
}
