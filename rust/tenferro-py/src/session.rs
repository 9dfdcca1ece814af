//! `tf.Session`'s methods: one per primitive (argument conversion, then one call of the eager
//! core's `Session::apply`), `constant`, and the `with` protocol.

use crate::apply::tensor_from_object;
use crate::args::{
    attr_axes, attr_dims, attr_i64s, axes_arg, axis_of, diag_axes, dot_config_for,
    index_vector_dim_of, ndim_of, parse_axes, parse_compare_dir, parse_shape, real_factor,
    sorted_axes, to_usize_dims,
};
use crate::classes::{runtime_object, ModeState, PyCpuEngine, PyRuntime, PySession, PyTensor};
use crate::convert::dtype_from_py;
use crate::errors::PyResultExt;
use crate::host::PyHost;
use crate::mode::{current_state, reset_state, set_state, with_session};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyModule, PyTuple};
use tenferro_ops::{
    BinaryOp, FftConfig, FftType, GatherConfig, LinalgOp, Op, PadConfig, ReduceOp, ScatterConfig,
    SliceConfig, UnaryOp,
};

/// The `Session` class's methods: the uniform ones generated from the op table's `unary(..)`,
/// `binary(..)` and `reduce(..)` rows (callback of `tenferro_ops::primitive_ops!(grouped ..)`),
/// the others written out below.
macro_rules! session_methods {
    (
        unary: [$({ $(#[$um:meta])* $uk:ident $u:ident $U:ident })*],
        binary: [$({ $(#[$bm:meta])* $bk:ident $b:ident $B:ident })*],
        reduce: [$({ $(#[$rm:meta])* $rk:ident $r:ident $R:ident })*],
        other: $other:tt
    ) => {
        /// `(name, group)` of every primitive with a uniform `Session` method generated from
        /// the op table (`group`: `"unary"`, `"binary"` or `"reduce"`), groups in that order,
        /// catalog order within each; `tools/gen_stub.py` writes the stub's Session section
        /// from it.
        #[pyfunction]
        pub fn _primitive_groups() -> Vec<(&'static str, &'static str)> {
            vec![
                $((stringify!($u), "unary"),)*
                $((stringify!($b), "binary"),)*
                $((stringify!($r), "reduce"),)*
            ]
        }

        #[pymethods]
        impl PySession {
            $(
                #[doc = concat!("Primitive `", stringify!($u), "`, elementwise (ops.md, unary family).\n\n",
                    "Parameters\n----------\nx : Tensor, array_like or Python scalar\n    Any shape; a dtype admitted by the catalog row (``tf.prim.CATALOG``).\n\n",
                    "Returns\n-------\nTensor\n    Same shape and dtype (``abs`` of complex is real).\n\n",
                    "Raises\n------\ntenferro.errors.DTypeError\n    If the dtype is not admitted (the message names the op and the dtype).")]
                fn $u(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    self.dispatch(py, Op::Unary(UnaryOp::$U), &[x])
                }
            )*
            $(
                #[doc = concat!("Primitive `", stringify!($b), "`, elementwise with NumPy broadcasting (ops.md, binary family).\n\n",
                    "Parameters\n----------\nx, y : Tensor, array_like or Python scalar\n    Broadcast-compatible shapes; dtypes promoted by the lattice (Python scalars are weak).\n\n",
                    "Returns\n-------\nTensor\n    The broadcast shape and the promoted dtype. Integer ``div``/``rem`` truncate toward zero.\n\n",
                    "Raises\n------\ntenferro.errors.ShapeError\n    Shapes that do not broadcast.\ntenferro.errors.DTypeError\n    A promoted dtype the op does not admit.\nZeroDivisionError\n    Integer ``div``/``rem`` by zero.\nValueError\n    Integer ``pow`` with a negative exponent.")]
                fn $b(&self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                    self.dispatch(py, Op::Binary(BinaryOp::$B), &[x, y])
                }
            )*
            $(
                #[doc = concat!("Primitive `", stringify!($r), "` over ``axes`` (ops.md, reductions).\n\n",
                    "Parameters\n----------\nx : Tensor or array_like\n    Any shape.\naxes : None, int or sequence of int\n    Axes to reduce (negative allowed); ``None`` reduces all, ``()`` keeps the shape.\n\n",
                    "Returns\n-------\nTensor\n    ``x``'s shape without ``axes``; the dtype is kept. Float sums are pairwise.\n\n",
                    "Raises\n------\ntenferro.errors.AxisError\n    An axis out of range or repeated.\ntenferro.errors.DTypeError\n    A dtype the reduction does not admit.\nValueError\n    ``reduce_max``/``reduce_min`` over an empty axis.")]
                #[pyo3(signature = (x, axes=None))]
                fn $r(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axes: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
                    let axes = parse_axes(py, stringify!($r), axes, ndim_of(py, x)?)?;
                    self.dispatch(py, Op::Reduce { op: ReduceOp::$R, axes }, &[x])
                }
            )*

            /// `compare(x, y, direction)` → bool; direction is a ``tf.CompareDir`` or its name.
            fn compare(&self, py: Python<'_>, x: &Bound<'_, PyAny>, y: &Bound<'_, PyAny>, direction: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let d = parse_compare_dir(direction)?;
                self.dispatch(py, Op::Compare(d), &[x, y])
            }

            /// `select(pred, on_true, on_false)` (broadcasting).
            fn select(&self, py: Python<'_>, pred: &Bound<'_, PyAny>, on_true: &Bound<'_, PyAny>, on_false: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Select, &[pred, on_true, on_false])
            }

            /// Alias of ``select``.
            fn where_select(&self, py: Python<'_>, pred: &Bound<'_, PyAny>, on_true: &Bound<'_, PyAny>, on_false: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Select, &[pred, on_true, on_false])
            }

            /// `clamp(x, lo, hi)` = `min(max(x, lo), hi)`, NaN-propagating.
            fn clamp(&self, py: Python<'_>, x: &Bound<'_, PyAny>, lo: &Bound<'_, PyAny>, hi: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Clamp, &[x, lo, hi])
            }

            /// Checked conversion up the promotion lattice (``DTypeError`` otherwise).
            fn convert(&self, py: Python<'_>, x: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let d = dtype_from_py(py, "convert", dtype)?;
                self.dispatch(py, Op::Convert(d), &[x])
            }

            /// Lossy conversion (float→int truncates, complex→real drops the imaginary part).
            fn cast(&self, py: Python<'_>, x: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let d = dtype_from_py(py, "cast", dtype)?;
                self.dispatch(py, Op::Cast(d), &[x])
            }

            /// `transpose(x, perm)`: output axis ``i`` is input axis ``perm[i]`` (a view).
            fn transpose(&self, py: Python<'_>, x: &Bound<'_, PyAny>, perm: Vec<i64>) -> PyResult<PyTensor> {
                let perm = axes_arg(py, "transpose", "perm", &perm, ndim_of(py, x)?)?;
                self.dispatch(py, Op::Transpose(perm), &[x])
            }

            /// Column-major `reshape(x, shape)` (a view when the strides allow).
            fn reshape(&self, py: Python<'_>, x: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let s = parse_shape("reshape", shape)?;
                self.dispatch(py, Op::Reshape(s), &[x])
            }

            /// StableHLO `broadcast_in_dim(x, shape, dims)`: input axis ``i`` → output axis ``dims[i]``.
            fn broadcast_in_dim(&self, py: Python<'_>, x: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>, dims: Vec<i64>) -> PyResult<PyTensor> {
                let s = parse_shape("broadcast_in_dim", shape)?;
                let d = axes_arg(py, "broadcast_in_dim", "dims", &dims, s.len())?;
                self.dispatch(py, Op::BroadcastInDim { shape: s, dims: d }, &[x])
            }

            /// `reverse(x, axes)` (a view with negative strides).
            fn reverse(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axes: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let axes = parse_axes(py, "reverse", Some(axes), ndim_of(py, x)?)?;
                self.dispatch(py, Op::Reverse(axes), &[x])
            }

            /// StableHLO ``slice(x, tf.SliceConfig(starts=, limits=, strides=None))`` (a view).
            ///
            /// Raises ``ShapeError`` for ranks/limits that do not fit ``x``.
            fn slice(&self, py: Python<'_>, x: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let starts = attr_dims(py, "slice", config, "starts")?;
                let limits = attr_dims(py, "slice", config, "limits")?;
                let strides = match config.getattr("strides") {
                    Ok(v) if !v.is_none() => attr_dims(py, "slice", config, "strides")?,
                    _ => vec![1; starts.len()],
                };
                self.dispatch(py, Op::Slice(SliceConfig { starts, limits, strides }), &[x])
            }

            /// ``pad(x, tf.PadConfig(edge_padding_low=, edge_padding_high=, interior_padding=))``
            /// with zeros; negative edges crop.
            fn pad(&self, py: Python<'_>, x: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let c = PadConfig {
                    low: attr_i64s("pad", config, "edge_padding_low")?,
                    high: attr_i64s("pad", config, "edge_padding_high")?,
                    interior: attr_dims(py, "pad", config, "interior_padding")?,
                };
                self.dispatch(py, Op::Pad(c), &[x])
            }

            /// ``dynamic_slice(x, starts, sizes)``: ``starts`` a rank-1 integer tensor; starts clamp.
            fn dynamic_slice(&self, py: Python<'_>, x: &Bound<'_, PyAny>, starts: &Bound<'_, PyAny>, sizes: Vec<i64>) -> PyResult<PyTensor> {
                let sizes = to_usize_dims("dynamic_slice", &sizes)?;
                self.dispatch(py, Op::DynamicSlice { sizes }, &[x, starts])
            }

            /// ``dynamic_update_slice(x, update, starts)``: ``update`` written at clamped starts.
            fn dynamic_update_slice(&self, py: Python<'_>, x: &Bound<'_, PyAny>, update: &Bound<'_, PyAny>, starts: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::DynamicUpdateSlice, &[x, update, starts])
            }

            /// ``concatenate(xs, axis)``: tensors of equal rank joined along ``axis`` (promoted dtype).
            fn concatenate(&self, py: Python<'_>, xs: &Bound<'_, PyAny>, axis: i64) -> PyResult<PyTensor> {
                let items: Vec<Bound<'_, PyAny>> = xs.try_iter()?.collect::<PyResult<_>>()?;
                if items.is_empty() {
                    return Err(PyValueError::new_err("concatenate: need at least one tensor"));
                }
                let ax = axis_of(py, "concatenate", axis, ndim_of(py, &items[0])?)?;
                let refs: Vec<&Bound<'_, PyAny>> = items.iter().collect();
                self.dispatch(py, Op::Concatenate { axis: ax }, &refs)
            }

            /// StableHLO ``gather(x, indices, tf.GatherConfig(...))``; out-of-bounds starts clamp.
            fn gather(&self, py: Python<'_>, x: &Bound<'_, PyAny>, indices: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let (xn, inn) = (ndim_of(py, x)?, ndim_of(py, indices)?);
                let index_vector_dim = index_vector_dim_of(py, "gather", config, inn)?;
                let offset = attr_i64s("gather", config, "offset_dims")?;
                // Output rank: the batch axes of `indices` (all but the index vector) + the offsets.
                let out_rank = inn - usize::from(index_vector_dim < inn) + offset.len();
                let c = GatherConfig {
                    offset_dims: sorted_axes(py, "gather", "offset_dims", &offset, out_rank)?,
                    collapsed_slice_dims: attr_axes(py, "gather", config, "collapsed_slice_dims", xn)?,
                    start_index_map: attr_axes(py, "gather", config, "start_index_map", xn)?,
                    index_vector_dim,
                    slice_sizes: attr_dims(py, "gather", config, "slice_sizes")?,
                };
                self.dispatch(py, Op::Gather(c), &[x, indices])
            }

            /// StableHLO ``scatter(x, indices, updates, tf.ScatterConfig(...))`` adding at
            /// duplicates; windows leaving ``x`` are dropped.
            fn scatter(&self, py: Python<'_>, x: &Bound<'_, PyAny>, indices: &Bound<'_, PyAny>, updates: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let (xn, inn, un) = (ndim_of(py, x)?, ndim_of(py, indices)?, ndim_of(py, updates)?);
                let c = ScatterConfig {
                    update_window_dims: sorted_axes(py, "scatter", "update_window_dims", &attr_i64s("scatter", config, "update_window_dims")?, un)?,
                    inserted_window_dims: sorted_axes(py, "scatter", "inserted_window_dims", &attr_i64s("scatter", config, "inserted_window_dims")?, xn)?,
                    scatter_dims_to_operand_dims: attr_axes(py, "scatter", config, "scatter_dims_to_operand_dims", xn)?,
                    index_vector_dim: index_vector_dim_of(py, "scatter", config, inn)?,
                };
                self.dispatch(py, Op::Scatter(c), &[x, indices, updates])
            }

            /// ``extract_diag(x, axis_a=0, axis_b=1)``: the diagonal takes ``axis_a``'s place,
            /// ``axis_b`` disappears (a view).
            #[pyo3(signature = (x, axis_a=0, axis_b=1))]
            fn extract_diag(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis_a: i64, axis_b: i64) -> PyResult<PyTensor> {
                let nd = ndim_of(py, x)?;
                let (a, b) = diag_axes(py, "extract_diag", axis_a, axis_b, nd)?;
                self.dispatch(py, Op::ExtractDiag { a, b }, &[x])
            }

            /// ``embed_diag(x, axis_a=0, axis_b=1)``: inverse of ``extract_diag``; ``axis_b`` is
            /// re-inserted (output coordinates), zeros off the diagonal.
            #[pyo3(signature = (x, axis_a=0, axis_b=1))]
            fn embed_diag(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis_a: i64, axis_b: i64) -> PyResult<PyTensor> {
                let nd = ndim_of(py, x)? + 1;
                let (a, b) = diag_axes(py, "embed_diag", axis_a, axis_b, nd)?;
                self.dispatch(py, Op::EmbedDiag { a, b }, &[x])
            }

            /// ``tril(x, k=0)`` on axes 0 (rows) and 1 (columns): keeps ``j - i <= k``.
            #[pyo3(signature = (x, k=0))]
            fn tril(&self, py: Python<'_>, x: &Bound<'_, PyAny>, k: i64) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Tril(k), &[x])
            }

            /// ``triu(x, k=0)`` on axes 0 (rows) and 1 (columns): keeps ``j - i >= k``.
            #[pyo3(signature = (x, k=0))]
            fn triu(&self, py: Python<'_>, x: &Bound<'_, PyAny>, k: i64) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Triu(k), &[x])
            }

            /// ``dot_general(lhs, rhs, tf.DotGeneralConfig(...))``: output axes
            /// ``[lhs free…, rhs free…, batch…]`` (batch last). GEMM through faer.
            fn dot_general(&self, py: Python<'_>, lhs: &Bound<'_, PyAny>, rhs: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let c = dot_config_for(py, "dot_general", config, lhs, rhs)?;
                self.dispatch(py, Op::DotGeneral(c), &[lhs, rhs])
            }

            /// ``dot_general`` of the conjugated flagged operands (no copy: faer reads the
            /// conjugate in place).
            fn dot_general_with_conj(&self, py: Python<'_>, lhs: &Bound<'_, PyAny>, rhs: &Bound<'_, PyAny>, config: &Bound<'_, PyAny>, lhs_conj: bool, rhs_conj: bool) -> PyResult<PyTensor> {
                let c = dot_config_for(py, "dot_general_with_conj", config, lhs, rhs)?;
                self.dispatch(py, Op::DotGeneralWithConj { config: c, lhs_conj, rhs_conj }, &[lhs, rhs])
            }

            /// Rank-2 ``matmul(a, b)`` (``tf.matmul`` / ``@`` give NumPy batching).
            fn matmul(&self, py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Matmul, &[a, b])
            }

            /// ``scale_real(x, factor)``: multiply by a real Python number (integers round the
            /// product; for bool a zero factor gives False).
            fn scale_real(&self, py: Python<'_>, x: &Bound<'_, PyAny>, factor: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let f = real_factor("scale_real", factor)?;
                self.dispatch(py, Op::ScaleReal(f), &[x])
            }

            /// ``scale_complex(x, factor)``: multiply a complex tensor by a complex number.
            fn scale_complex(&self, py: Python<'_>, x: &Bound<'_, PyAny>, factor: num_complex::Complex64) -> PyResult<PyTensor> {
                self.dispatch(py, Op::ScaleComplex(factor), &[x])
            }

            /// ``svd(a, full_matrices=True, eps=1e-12)`` → ``(U, S, Vh)`` with ``a = U·diag(S)·Vh``;
            /// matrices on axes 0, 1, batch axes last (``tf.linalg.svd`` has NumPy's layout).
            /// ``eps`` broadens the inverse gaps of the derivative rules.
            #[pyo3(signature = (a, full_matrices=true, eps=1e-12))]
            fn svd<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>, full_matrices: bool, eps: f64) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Svd { full_matrices, eps }), &[a])
            }

            /// ``qr(a, complete=False)`` → ``(Q, R)``, ``R`` with a non-negative real diagonal
            /// (batch axes last).
            #[pyo3(signature = (a, complete=false))]
            fn qr<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>, complete: bool) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Qr { complete }), &[a])
            }

            /// ``eigh(a, eps=1e-12)`` → ``(w, V)`` from the lower triangle, ``w`` ascending
            /// (batch axes last).
            #[pyo3(signature = (a, eps=1e-12))]
            fn eigh<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>, eps: f64) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Eigh { eps }), &[a])
            }

            /// ``svdvals(a)`` → ``S`` (real, non-increasing, batch axes last) without computing
            /// singular vectors; its derivative rules recompute ``svd``.
            fn svdvals(&self, py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::Svdvals), &[a])
            }

            /// ``eigvalsh(a)`` → ``w`` (real, ascending, batch axes last) of the Hermitian matrix
            /// of the lower triangle, without eigenvectors; its derivative rules recompute ``eigh``.
            fn eigvalsh(&self, py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::Eigvalsh), &[a])
            }

            /// Whether an op on ``x`` here would be recorded for differentiation (grad mode and
            /// ``x`` tracked, or a transform capturing the trace).
            fn _records(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<bool> {
                let state = current_state(py)?;
                let ops: Vec<tenferro_eager::Operand<'_>> = match x.cast::<PyTensor>() {
                    Ok(t) => vec![tenferro_eager::Operand::Tensor(&t.get().inner)],
                    Err(_) => Vec::new(),
                };
                Ok(state.get().core.would_record(&ops))
            }

            /// ``eig(a)`` → complex ``(w, V)`` (batch axes last).
            fn eig<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Eig), &[a])
            }

            /// ``cholesky(a)``: lower factor of the Hermitian matrix given by the lower triangle.
            fn cholesky(&self, py: Python<'_>, a: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::Cholesky), &[a])
            }

            /// ``lu(a)`` → ``(P, L, U)`` with ``a = P·L·U`` (batch axes last).
            fn lu<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Lu), &[a])
            }

            /// ``solve(a, b)``: ``x`` with ``a·x = b`` (``b`` a matrix; batch axes last).
            fn solve(&self, py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::Solve), &[a, b])
            }

            /// ``triangular_solve(a, b, lower=True)``: ``x`` with ``tri(a)·x = b``.
            #[pyo3(signature = (a, b, lower=true))]
            fn triangular_solve(&self, py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, lower: bool) -> PyResult<PyTensor> {
                self.dispatch(py, Op::Linalg(LinalgOp::TriangularSolve { lower }), &[a, b])
            }

            /// ``slogdet(a)`` → ``(sign, logabsdet)`` (batch axes last).
            fn slogdet<'py>(&self, py: Python<'py>, a: &Bound<'_, PyAny>) -> PyResult<Bound<'py, PyTuple>> {
                self.dispatch_tuple(py, Op::Linalg(LinalgOp::Slogdet), &[a])
            }

            /// ``fft(x, fft_type, fft_length, axes=None)``: StableHLO ``fft`` (``fft_type`` one of
            /// ``"FFT"``, ``"IFFT"``, ``"RFFT"``, ``"IRFFT"``, case-insensitive) over ``axes``
            /// (default: the last ``len(fft_length)`` axes; for ``RFFT``/``IRFFT`` the last listed
            /// axis is the real one). ``IFFT``/``IRFFT`` are normalised by ``1/prod(fft_length)``.
            #[pyo3(signature = (x, fft_type, fft_length, axes=None))]
            fn fft(&self, py: Python<'_>, x: &Bound<'_, PyAny>, fft_type: &Bound<'_, PyAny>, fft_length: Vec<i64>, axes: Option<Vec<i64>>) -> PyResult<PyTensor> {
                let name: Option<String> = fft_type
                    .extract::<String>()
                    .ok()
                    .or_else(|| fft_type.getattr("name").ok().and_then(|n| n.extract().ok()));
                let t = name.as_deref().and_then(FftType::parse).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "fft: fft_type must be one of FFT, IFFT, RFFT, IRFFT (case-insensitive), got {}",
                        fft_type.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))
                })?;
                let rank = ndim_of(py, x)?;
                let lengths = to_usize_dims("fft", &fft_length)?;
                let axes = match axes {
                    Some(a) => axes_arg(py, "fft", "axes", &a, rank)?,
                    None => {
                        if lengths.len() > rank {
                            return Err(tenferro_tensor::Error::axis("fft", format!("fft_length {fft_length:?} has more entries than the operand's rank {rank}"))).py(py);
                        }
                        (rank - lengths.len()..rank).collect()
                    }
                };
                self.dispatch(py, Op::Fft(FftConfig { fft_type: t, axes, lengths }), &[x])
            }

            /// ``sort(x, axis=-1, descending=False)``: sorted values along ``axis``, stable (ties
            /// keep their order, ``-0.0 == 0.0``), NaN last also when descending; complex by real
            /// then imaginary part (NumPy's order).
            #[pyo3(signature = (x, axis=-1, descending=false))]
            fn sort(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis: i64, descending: bool) -> PyResult<PyTensor> {
                let axis = axis_of(py, "sort", axis, ndim_of(py, x)?)?;
                self.dispatch(py, Op::Sort { axis, descending }, &[x])
            }

            /// ``argsort(x, axis=-1, descending=False)`` → int64: the stable permutation that
            /// ``sort`` applies along ``axis``.
            #[pyo3(signature = (x, axis=-1, descending=false))]
            fn argsort(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis: i64, descending: bool) -> PyResult<PyTensor> {
                let axis = axis_of(py, "argsort", axis, ndim_of(py, x)?)?;
                self.dispatch(py, Op::Argsort { axis, descending }, &[x])
            }

            /// ``argmax(x, axis)`` → int64 with ``axis`` removed: the first maximum, or the first
            /// NaN (NumPy).
            fn argmax(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis: i64) -> PyResult<PyTensor> {
                let axis = axis_of(py, "argmax", axis, ndim_of(py, x)?)?;
                self.dispatch(py, Op::Argmax(axis), &[x])
            }

            /// ``argmin(x, axis)`` → int64 with ``axis`` removed: the first minimum, or the first
            /// NaN (NumPy).
            fn argmin(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis: i64) -> PyResult<PyTensor> {
                let axis = axis_of(py, "argmin", axis, ndim_of(py, x)?)?;
                self.dispatch(py, Op::Argmin(axis), &[x])
            }

            /// ``searchsorted(sorted, values, right=False)`` → int64 of ``values``' shape: where
            /// each value goes into the 1-D ascending ``sorted`` (NaN last) to keep it sorted,
            /// before equal elements (after them with ``right``).
            #[pyo3(signature = (sorted, values, right=false))]
            fn searchsorted(&self, py: Python<'_>, sorted: &Bound<'_, PyAny>, values: &Bound<'_, PyAny>, right: bool) -> PyResult<PyTensor> {
                self.dispatch(py, Op::SearchSorted { right }, &[sorted, values])
            }

            /// ``cumsum(x, axis)``: inclusive cumulative sum along ``axis`` (sequential, as
            /// NumPy's ``cumsum``; integers wrap).
            fn cumsum(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis: i64) -> PyResult<PyTensor> {
                let axis = axis_of(py, "cumsum", axis, ndim_of(py, x)?)?;
                self.dispatch(py, Op::Cumsum(axis), &[x])
            }

            /// ``cumprod(x, axis)``: inclusive cumulative product along ``axis`` (integers wrap);
            /// its derivative is exact at zeros.
            fn cumprod(&self, py: Python<'_>, x: &Bound<'_, PyAny>, axis: i64) -> PyResult<PyTensor> {
                let axis = axis_of(py, "cumprod", axis, ndim_of(py, x)?)?;
                self.dispatch(py, Op::Cumprod(axis), &[x])
            }

            /// An untracked tensor of the session's runtime holding a copy of ``data``.
            fn constant(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<PyTensor> {
                let t = tensor_from_object(py, data, true)?;
                let state = current_state(py)?;
                Ok(self.core.constant(t, &state.get().core).py(py)?.into())
            }

            fn __enter__(slf: &Bound<'_, Self>) -> PyResult<Py<Self>> {
                let py = slf.py();
                let this = slf.get();
                if this.target.is_none() {
                    return Err(PyTypeError::new_err("the implicit session cannot be entered"));
                }
                let host = PyHost::new(py);
                host.finish(this.core.enter(&host))?;
                let state = current_state(py)?;
                let token = match set_state(py, with_session(py, state.get(), slf)) {
                    Ok(t) => t,
                    Err(e) => {
                        this.core.exit();
                        return Err(e);
                    }
                };
                let set = current_state(py)?.into_any().unbind();
                *this.token.lock().unwrap_or_else(|e| e.into_inner()) = Some((token, set));
                Ok(slf.clone().unbind())
            }

            #[pyo3(signature = (*_args))]
            fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, PyTuple>) -> PyResult<bool> {
                let mut slot = self.token.lock().unwrap_or_else(|e| e.into_inner());
                let state = current_state(py)?;
                let st = state.get();
                let pos = st
                    .core
                    .sessions
                    .iter()
                    .rposition(|s| std::sync::Arc::ptr_eq(s, &self.core));
                let unchanged = slot
                    .as_ref()
                    .is_some_and(|(_, set)| set.bind(py).is(state.as_any()));
                match pos {
                    // Nothing entered since (innermost): restore the state from before
                    // `__enter__`.
                    Some(_) if unchanged => {
                        if let Some((tok, set)) = slot.take() {
                            if let Err(e) = reset_state(py, tok.clone_ref(py)) {
                                *slot = Some((tok, set));
                                return Err(exit_elsewhere(py, e));
                            }
                        }
                    }
                    // Exited out of order: drop only this session from the calling context's
                    // stack (a token reset would also drop the sessions and grad modes entered
                    // after it, which are still open).
                    Some(i) => {
                        let mut next = ModeState {
                            core: st.core.clone(),
                            sessions: st.sessions.iter().map(|s| s.clone_ref(py)).collect(),
                        };
                        next.core.sessions.remove(i);
                        next.sessions.remove(i);
                        set_state(py, next)?;
                        slot.take();
                    }
                    // Entered in another thread or context: that context still runs on it.
                    None if self.core.is_active() => {
                        return Err(exit_elsewhere(py, PyValueError::new_err(
                            "the calling context did not enter it",
                        )));
                    }
                    None => {
                        slot.take();
                    }
                }
                self.core.exit();
                Ok(false)
            }

            /// The session's runtime (``None`` for the implicit session).
            #[getter]
            fn runtime(&self, py: Python<'_>) -> Option<Py<PyRuntime>> {
                self.target.as_ref().map(|(r, _)| r.clone_ref(py))
            }

            /// The session's engine (``None`` for the implicit session).
            #[getter]
            fn engine(&self, py: Python<'_>) -> Option<Py<PyCpuEngine>> {
                self.target.as_ref().map(|(_, e)| e.clone_ref(py))
            }

            fn __repr__(&self) -> String {
                match self.core.target() {
                    Some((r, e)) => format!("Session(runtime={}, engine={})", r.id(), e.describe()),
                    None => "Session(implicit)".to_string(),
                }
            }
        }
    };
}

/// `Session.__exit__` called from a thread or context that did not enter the session.
fn exit_elsewhere(py: Python<'_>, cause: PyErr) -> PyErr {
    let e = crate::errors::to_pyerr(py, tenferro_eager::Session::foreign_exit_error());
    e.set_cause(py, Some(cause));
    e
}

// One method per `unary(..)`, `binary(..)` and `reduce(..)` row of the op table.
tenferro_ops::primitive_ops!(grouped session_methods);

/// The runtime an op on ``tensor`` (or, without one, a factory) runs on here: the innermost
/// active session's, else ``tensor``'s, else the default runtime (the one resolution rule).
#[pyfunction]
#[pyo3(signature = (tensor=None))]
pub fn _current_runtime(
    py: Python<'_>,
    tensor: Option<&Bound<'_, PyTensor>>,
) -> PyResult<Py<PyRuntime>> {
    let state = current_state(py)?;
    let rt =
        tenferro_eager::IMPLICIT.runtime_for(tensor.map(|t| &t.get().runtime), &state.get().core);
    runtime_object(py, &rt)
}

/// The implicit session object used by ``tf.prim``.
#[pyfunction]
pub fn _implicit_session() -> PySession {
    PySession::implicit()
}

/// Register the class and functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySession>()?;
    m.add_function(wrap_pyfunction!(_implicit_session, m)?)?;
    m.add_function(wrap_pyfunction!(_current_runtime, m)?)?;
    m.add_function(wrap_pyfunction!(_primitive_groups, m)?)?;
    Ok(())
}
