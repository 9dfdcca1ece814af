//! DLPack export (CPU, DLPack 1.0 versioned capsules with READ_ONLY; unversioned requests get
//! a copy). Layouts follow `dlpack.h` v1.0 (github.com/dmlc/dlpack).

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_void, CStr};
use tenferro_tensor::{DType, Tensor};

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

const FLAG_READ_ONLY: u64 = 1;
const FLAG_IS_COPIED: u64 = 1 << 1;
const NAME_V: &CStr = c"dltensor_versioned";
const NAME: &CStr = c"dltensor";

/// Keeps the exported tensor and its metadata alive until the consumer calls the deleter.
struct Holder {
    _tensor: Tensor,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::Bool => (6, 8),
        DType::I32 => (0, 32),
        DType::I64 => (0, 64),
        DType::F32 => (2, 32),
        DType::F64 => (2, 64),
        DType::C32 => (5, 64),
        DType::C64 => (5, 128),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

fn dl_tensor(t: &Tensor, holder: &mut Holder) -> DLTensor {
    DLTensor {
        data: (t.storage().as_ptr() as usize + t.offset() * t.dtype().itemsize()) as *mut c_void,
        device: DLDevice {
            device_type: 1,
            device_id: 0,
        },
        ndim: t.ndim() as i32,
        dtype: dl_dtype(t.dtype()),
        shape: holder.shape.as_mut_ptr(),
        strides: holder.strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

unsafe extern "C" fn delete_versioned(m: *mut DLManagedTensorVersioned) {
    if m.is_null() {
        return;
    }
    // SAFETY: `m` and its context were leaked from Boxes by `export`.
    unsafe {
        drop(Box::from_raw((*m).manager_ctx as *mut Holder));
        drop(Box::from_raw(m));
    }
}

unsafe extern "C" fn delete_unversioned(m: *mut DLManagedTensor) {
    if m.is_null() {
        return;
    }
    // SAFETY: as above.
    unsafe {
        drop(Box::from_raw((*m).manager_ctx as *mut Holder));
        drop(Box::from_raw(m));
    }
}

unsafe extern "C" fn capsule_destructor_versioned(capsule: *mut ffi::PyObject) {
    // SAFETY: called by the interpreter with a live capsule; a consumed capsule was renamed.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, NAME_V.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, NAME_V.as_ptr())
                as *mut DLManagedTensorVersioned;
            if let Some(d) = (*m).deleter {
                d(m);
            }
        } else {
            ffi::PyErr_Clear();
        }
    }
}

unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: as above.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, NAME.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, NAME.as_ptr()) as *mut DLManagedTensor;
            if let Some(d) = (*m).deleter {
                d(m);
            }
        } else {
            ffi::PyErr_Clear();
        }
    }
}

/// Build the DLPack capsule for `t`.
pub(crate) fn export<'py>(
    py: Python<'py>,
    t: &Tensor,
    max_version: Option<(u32, u32)>,
    copy: Option<bool>,
) -> PyResult<Bound<'py, PyAny>> {
    let versioned = max_version.is_some_and(|(major, _)| major >= 1);
    let has_negative = t.strides().iter().any(|&s| s < 0);
    let must_copy = copy == Some(true) || !versioned || has_negative;
    if must_copy && copy == Some(false) {
        // An unversioned (DLPack 0.x) capsule cannot carry the READ_ONLY flag, and a consumer
        // could write through it into an immutable tensor: the legacy export always copies, as
        // NumPy refuses to export a read-only array unversioned (the 2024.12 standard allows a
        // BufferError for `max_version=None`).
        let why = if has_negative {
            "DLPack cannot describe this view's negative strides"
        } else {
            "an unversioned (max_version=None or < (1, 0)) capsule cannot mark the shared memory \
             read-only, so tenferro exports a copy; pass max_version=(1, 0) to share memory"
        };
        return Err(PyBufferError::new_err(format!(
            "__dlpack__: copy=False is impossible: {why}"
        )));
    }
    let exported = if must_copy {
        crate::apply::contiguous_copy(py, t)?
    } else {
        t.storage().mark_exported();
        t.clone()
    };
    let mut holder = Box::new(Holder {
        shape: exported.shape().iter().map(|&d| d as i64).collect(),
        strides: exported.strides().iter().map(|&s| s as i64).collect(),
        _tensor: exported.clone(),
    });
    let dl = dl_tensor(&exported, &mut holder);
    let ctx = Box::into_raw(holder) as *mut c_void;
    // SAFETY: the capsule owns the leaked managed tensor; its destructor frees it unless a
    // consumer renamed the capsule (then the consumer calls the deleter).
    let capsule = unsafe {
        if versioned {
            let m = Box::into_raw(Box::new(DLManagedTensorVersioned {
                version: DLPackVersion { major: 1, minor: 0 },
                manager_ctx: ctx,
                deleter: Some(delete_versioned),
                flags: FLAG_READ_ONLY | if must_copy { FLAG_IS_COPIED } else { 0 },
                dl_tensor: dl,
            }));
            ffi::PyCapsule_New(
                m as *mut c_void,
                NAME_V.as_ptr(),
                Some(capsule_destructor_versioned),
            )
        } else {
            let m = Box::into_raw(Box::new(DLManagedTensor {
                dl_tensor: dl,
                manager_ctx: ctx,
                deleter: Some(delete_unversioned),
            }));
            ffi::PyCapsule_New(m as *mut c_void, NAME.as_ptr(), Some(capsule_destructor))
        }
    };
    // SAFETY: a new reference or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, capsule) }
}
