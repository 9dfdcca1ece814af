//! Storage: one contiguous allocation (64-byte aligned) or foreign memory kept alive by its owner,
//! and the per-engine buffer pool that recycles owned allocations of equal size.
//!
//! A storage that was exported (buffer protocol, `__array_interface__`, DLPack) is never given
//! back to a pool: it is freed when the last reference, including the exporter's, goes away.

use crate::error::{Error, Result};
use std::alloc::{self, Layout};
use std::collections::{HashMap, VecDeque};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

const ALIGN: usize = 64;

/// An owned, 64-byte aligned allocation of `bytes` bytes (at least one byte is reserved).
struct Buffer {
    ptr: NonNull<u8>,
    bytes: usize,
}

// SAFETY: a Buffer is a plain heap allocation; access is synchronised by its owners.
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    fn layout(bytes: usize) -> Option<Layout> {
        Layout::from_size_align(bytes.max(1), ALIGN).ok()
    }

    fn allocate(op: &str, bytes: usize, zeroed: bool) -> Result<Buffer> {
        let layout = Self::layout(bytes).ok_or_else(|| Error::alloc(op, bytes as u128))?;
        // SAFETY: the layout has non-zero size.
        let raw = unsafe {
            if zeroed {
                alloc::alloc_zeroed(layout)
            } else {
                alloc::alloc(layout)
            }
        };
        NonNull::new(raw)
            .map(|ptr| Buffer { ptr, bytes })
            .ok_or_else(|| Error::alloc(op, bytes as u128))
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some(layout) = Self::layout(self.bytes) {
            // SAFETY: allocated by `Buffer::allocate` with this very layout.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) }
        }
    }
}

/// Statistics of a buffer pool (`tf.BufferPoolStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferPoolStats {
    /// Buffers currently retained for reuse.
    pub buffers: usize,
    /// Bytes currently retained for reuse.
    pub retained_bytes: usize,
    /// The retention limit in bytes.
    pub capacity_bytes: usize,
    /// Allocations served from the pool.
    pub hits: u64,
    /// Allocations that went to the system allocator.
    pub misses: u64,
    /// Storages handed out by the pool (hits and misses) and not yet dropped: the buffers of
    /// this engine alive now, whether or not they will return to the pool.
    pub live: usize,
    /// The most `live` storages at any time since the pool was created or
    /// [`BufferPool::reset_peak_live`] was called.
    pub peak_live: usize,
    /// Bytes of the `live` storages (requested sizes): the engine's memory in use now.
    pub live_bytes: usize,
    /// The most `live_bytes` at any time since the pool was created or
    /// [`BufferPool::reset_peak_live`] was called.
    pub peak_live_bytes: usize,
}

/// The hasher of the pool's size keys: one multiply (the std SipHash showed in the profile of
/// small-op programs, which take and return a buffer per step; sizes need no DoS resistance).
#[derive(Default)]
struct SizeHasher(u64);

impl std::hash::Hasher for SizeHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type SizeMap<V> = HashMap<usize, V, std::hash::BuildHasherDefault<SizeHasher>>;

struct PoolState {
    /// Free buffers per exact size with the stamp of their return, oldest first.
    free: SizeMap<VecDeque<(u64, Buffer)>>,
    /// `(size, stamp)` of every return, oldest first; entries whose buffer was taken since are
    /// skipped (and dropped) by eviction.
    order: VecDeque<(usize, u64)>,
    stamp: u64,
    /// Buffers retained.
    count: usize,
    retained: usize,
    limit: usize,
    hits: u64,
    misses: u64,
    live: usize,
    peak_live: usize,
    live_bytes: usize,
    peak_live_bytes: usize,
}

/// A per-engine pool of freed allocations, keyed by exact byte size, bounded by `limit` bytes.
/// A returned buffer that does not fit evicts the least recently returned ones, so a program
/// whose sizes change (a new network after a large one) is not left with a full pool of stale
/// sizes and every allocation a miss.
pub struct BufferPool {
    state: Mutex<PoolState>,
}

/// Default retention limit: 1 GiB.
pub const DEFAULT_POOL_LIMIT: usize = 1 << 30;
/// Buffers per size kept at most (bounds the bookkeeping of pathological patterns).
const MAX_PER_SIZE: usize = 32;

impl PoolState {
    fn count_live(&mut self, bytes: usize) {
        self.live += 1;
        self.peak_live = self.peak_live.max(self.live);
        self.live_bytes += bytes;
        self.peak_live_bytes = self.peak_live_bytes.max(self.live_bytes);
    }

    /// Remove the least recently returned buffer still retained.
    fn evict_oldest(&mut self) -> Option<Buffer> {
        while let Some((size, stamp)) = self.order.pop_front() {
            let Some(list) = self.free.get_mut(&size) else {
                continue;
            };
            // Each size's list is in return order; a taken buffer's entry no longer matches.
            if list.front().is_some_and(|(s, _)| *s == stamp) {
                let (_, b) = list.pop_front()?;
                if list.is_empty() {
                    self.free.remove(&size);
                }
                self.retained -= b.bytes;
                self.count -= 1;
                return Some(b);
            }
        }
        None
    }

    fn rebuild_order(&mut self) {
        let mut all: Vec<(u64, usize)> = self
            .free
            .iter()
            .flat_map(|(&size, l)| l.iter().map(move |(stamp, _)| (*stamp, size)))
            .collect();
        all.sort_unstable();
        self.order = all.into_iter().map(|(stamp, size)| (size, stamp)).collect();
    }
}

impl BufferPool {
    /// A new pool retaining at most `limit` bytes.
    pub fn new(limit: usize) -> Arc<BufferPool> {
        Arc::new(BufferPool {
            state: Mutex::new(PoolState {
                free: SizeMap::default(),
                order: VecDeque::new(),
                stamp: 0,
                count: 0,
                retained: 0,
                limit,
                hits: 0,
                misses: 0,
                live: 0,
                peak_live: 0,
                live_bytes: 0,
                peak_live_bytes: 0,
            }),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        // A poisoned pool only holds plain buffers: keep using it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A buffer of `bytes` bytes if one is retained (a hit: the caller's storage counts as
    /// live from now), else `None` (a miss: the caller allocates and reports success with
    /// [`BufferPool::allocated`]). A live storage stops counting at [`BufferPool::release`] or
    /// [`BufferPool::give_back`].
    fn take(&self, bytes: usize) -> Option<Buffer> {
        let mut s = self.lock();
        // The most recently returned buffer of the size (warmest in cache).
        let found = s.free.get_mut(&bytes).and_then(|v| v.pop_back());
        match found {
            Some((_, b)) => {
                s.retained -= b.bytes;
                s.count -= 1;
                s.hits += 1;
                s.count_live(bytes);
                Some(b)
            }
            None => {
                s.misses += 1;
                None
            }
        }
    }

    /// After a miss, the caller's allocation of `bytes` bytes succeeded: its storage is live.
    /// (A second lock only on misses, which pay for the system allocator anyway; a failed
    /// allocation never counts towards the peak.)
    fn allocated(&self, bytes: usize) {
        self.lock().count_live(bytes);
    }

    /// A storage of `bytes` bytes handed out by the pool is gone without returning its buffer
    /// (exported).
    fn release(&self, bytes: usize) {
        let mut s = self.lock();
        s.live = s.live.saturating_sub(1);
        s.live_bytes = s.live_bytes.saturating_sub(bytes);
    }

    fn give_back(&self, buf: Buffer) {
        let mut evicted = Vec::new();
        {
            let mut s = self.lock();
            s.live = s.live.saturating_sub(1);
            s.live_bytes = s.live_bytes.saturating_sub(buf.bytes);
            if buf.bytes > s.limit
                || s.free
                    .get(&buf.bytes)
                    .is_some_and(|l| l.len() >= MAX_PER_SIZE)
            {
                return; // dropped after the guard: freed
            }
            while s.retained + buf.bytes > s.limit {
                match s.evict_oldest() {
                    Some(b) => evicted.push(b),
                    None => return,
                }
            }
            let (bytes, stamp) = (buf.bytes, s.stamp);
            s.stamp += 1;
            s.free.entry(bytes).or_default().push_back((stamp, buf));
            s.order.push_back((bytes, stamp));
            s.retained += bytes;
            s.count += 1;
            // Entries of taken buffers accumulate in `order`: rebuild it when mostly stale.
            if s.order.len() > 4 * s.count + 64 {
                s.rebuild_order();
            }
        }
        drop(evicted); // freed outside the lock
    }

    /// Current statistics.
    pub fn stats(&self) -> BufferPoolStats {
        let s = self.lock();
        BufferPoolStats {
            buffers: s.count,
            retained_bytes: s.retained,
            capacity_bytes: s.limit,
            hits: s.hits,
            misses: s.misses,
            live: s.live,
            peak_live: s.peak_live,
            live_bytes: s.live_bytes,
            peak_live_bytes: s.peak_live_bytes,
        }
    }

    /// Restart the `peak_live` and `peak_live_bytes` statistics from the current live storages
    /// (to measure the peak of one computation).
    pub fn reset_peak_live(&self) {
        let mut s = self.lock();
        s.peak_live = s.live;
        s.peak_live_bytes = s.live_bytes;
    }

    /// Free every retained buffer (statistics counters are kept).
    pub fn reset(&self) {
        let drained: Vec<Buffer> = {
            let mut s = self.lock();
            s.retained = 0;
            s.count = 0;
            s.order.clear();
            s.free
                .drain()
                .flat_map(|(_, v)| v)
                .map(|(_, b)| b)
                .collect()
        };
        drop(drained);
    }

    /// Set the retention limit; buffers beyond it are freed now.
    pub fn set_limit(&self, limit: usize) {
        let mut freed = Vec::new();
        {
            let mut s = self.lock();
            s.limit = limit;
            while s.retained > limit {
                match s.evict_oldest() {
                    Some(b) => freed.push(b),
                    None => break,
                }
            }
        }
        drop(freed);
    }
}

enum Backing {
    Owned {
        buffer: Option<Buffer>,
        pool: Option<Weak<BufferPool>>,
    },
    Foreign {
        _owner: Box<dyn Send + Sync>,
    },
}

/// The memory behind one or more tensors.
pub struct Storage {
    ptr: NonNull<u8>,
    bytes: usize,
    backing: Backing,
    exported: AtomicBool,
}

// SAFETY: storage memory is immutable once a tensor holds it (kernels write only into freshly
// allocated storage before it is shared); foreign owners are `Send + Sync`.
unsafe impl Send for Storage {}
unsafe impl Sync for Storage {}

impl Storage {
    /// Allocate `bytes` bytes, from `pool` when it has a buffer of that size. The contents are
    /// unspecified unless `zeroed`.
    ///
    /// # Errors
    /// [`Error::Alloc`] when the system allocator fails.
    pub fn allocate(
        op: &str,
        bytes: usize,
        pool: Option<&Arc<BufferPool>>,
        zeroed: bool,
    ) -> Result<Arc<Storage>> {
        let pooled = pool.and_then(|p| p.take(bytes));
        let buffer = match pooled {
            Some(b) => {
                if zeroed {
                    // SAFETY: the buffer has `bytes` writable bytes.
                    unsafe { std::ptr::write_bytes(b.ptr.as_ptr(), 0, bytes) };
                }
                b
            }
            None => {
                let b = Buffer::allocate(op, bytes, zeroed)?;
                if let Some(p) = pool {
                    p.allocated(bytes);
                }
                b
            }
        };
        Ok(Arc::new(Storage {
            ptr: buffer.ptr,
            bytes,
            backing: Backing::Owned {
                buffer: Some(buffer),
                pool: pool.map(Arc::downgrade),
            },
            exported: AtomicBool::new(false),
        }))
    }

    /// Wrap foreign memory (e.g. a NumPy array's data) kept alive by `owner`.
    ///
    /// # Safety
    /// `ptr` must be valid for reads of `bytes` bytes for as long as `owner` lives, and nobody
    /// may write it while the storage is alive unless the caller accepts that tensors change.
    pub unsafe fn from_foreign(
        ptr: NonNull<u8>,
        bytes: usize,
        owner: Box<dyn Send + Sync>,
    ) -> Arc<Storage> {
        Arc::new(Storage {
            ptr,
            bytes,
            backing: Backing::Foreign { _owner: owner },
            exported: AtomicBool::new(true),
        })
    }

    /// Base pointer.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    /// Mutable base pointer. Only valid to write while the storage is not yet shared.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Mark as exported: the memory will not be recycled by a pool.
    pub fn mark_exported(&self) {
        self.exported.store(true, Ordering::Relaxed);
    }

    /// Whether the memory was ever exported to another library.
    pub fn is_exported(&self) -> bool {
        self.exported.load(Ordering::Relaxed)
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Backing::Owned { buffer, pool } = &mut self.backing {
            let Some(pool) = pool.as_ref().and_then(Weak::upgrade) else {
                return;
            };
            match buffer.take() {
                // Exported memory is freed here, never recycled.
                Some(buf) if !self.exported.load(Ordering::Relaxed) => pool.give_back(buf),
                _ => pool.release(self.bytes),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_counts_storages_handed_out_until_dropped() {
        let pool = BufferPool::new(1024);
        let a = Storage::allocate("t", 512, Some(&pool), false).unwrap();
        let b = Storage::allocate("t", 512, Some(&pool), false).unwrap();
        // Over the limit (never retained) and exported (never recycled) still count while alive.
        let big = Storage::allocate("t", 4096, Some(&pool), false).unwrap();
        let st = pool.stats();
        assert_eq!((st.live, st.peak_live, st.misses), (3, 3, 3));
        assert_eq!((st.live_bytes, st.peak_live_bytes), (5120, 5120));
        drop(big);
        b.mark_exported();
        // An exported storage stays live while the exporter holds it.
        let exporter = Arc::clone(&b);
        drop(b);
        assert_eq!((pool.stats().live, pool.stats().live_bytes), (2, 1024));
        drop(exporter);
        let st = pool.stats();
        assert_eq!((st.live, st.peak_live), (1, 3));
        assert_eq!((st.live_bytes, st.peak_live_bytes), (512, 5120));
        pool.reset_peak_live();
        let st = pool.stats();
        assert_eq!((st.peak_live, st.peak_live_bytes), (1, 512));
        drop(a);
        let c = Storage::allocate("t", 512, Some(&pool), false).unwrap();
        let d = Storage::allocate("t", 100, Some(&pool), false).unwrap();
        let st = pool.stats();
        assert_eq!((st.live, st.peak_live, st.hits), (2, 2, 1));
        assert_eq!((st.live_bytes, st.peak_live_bytes), (612, 612));
        drop(c);
        drop(d);
        // A failed allocation is not live.
        assert!(Storage::allocate("t", usize::MAX / 2, Some(&pool), false).is_err());
        let st = pool.stats();
        assert_eq!((st.live, st.live_bytes, st.peak_live_bytes), (0, 0, 612));
        // Storages outside any pool are not counted.
        let d = Storage::allocate("t", 512, None, false).unwrap();
        assert_eq!((pool.stats().live, pool.stats().live_bytes), (0, 0));
        drop(d);
    }

    #[test]
    fn pool_reuses_equal_sizes_and_respects_limit() {
        let pool = BufferPool::new(1024);
        let a = Storage::allocate("t", 512, Some(&pool), false).unwrap();
        let pa = a.as_ptr();
        drop(a);
        assert_eq!(pool.stats().buffers, 1);
        let b = Storage::allocate("t", 512, Some(&pool), true).unwrap();
        assert_eq!(b.as_ptr(), pa);
        assert_eq!(pool.stats().hits, 1);
        // SAFETY: 512 readable bytes.
        let zeros = unsafe { std::slice::from_raw_parts(b.as_ptr(), 512) };
        assert!(zeros.iter().all(|&x| x == 0));
        let big = Storage::allocate("t", 4096, Some(&pool), false).unwrap();
        drop(big);
        assert_eq!(pool.stats().retained_bytes, 0, "over the limit: freed");
        pool.set_limit(0);
        b.mark_exported();
        drop(b);
        assert_eq!(
            pool.stats().buffers,
            0,
            "exported storage never returns to the pool"
        );
    }

    #[test]
    fn a_full_pool_evicts_its_least_recently_returned_buffers() {
        let pool = BufferPool::new(1000);
        let alloc = |n: usize| Storage::allocate("t", n, Some(&pool), false).unwrap();
        // Fill the pool with stale sizes (300 + 300 + 300 bytes, returned in that order).
        let (a, b, c) = (alloc(300), alloc(301), alloc(302));
        drop(a);
        drop(b);
        drop(c);
        assert_eq!(pool.stats().retained_bytes, 903);
        // A new size that does not fit evicts the oldest (300), not itself.
        drop(alloc(200));
        let st = pool.stats();
        assert_eq!((st.buffers, st.retained_bytes), (3, 803));
        let misses = st.misses;
        drop(alloc(200));
        assert_eq!(
            pool.stats().misses,
            misses,
            "the new size is now served from the pool"
        );
        // A taken buffer's stale entry is skipped: take 301, return it, then force evictions.
        drop(alloc(301));
        drop(alloc(600)); // evicts 302 and 200 (the oldest still retained), keeps 301
        let st = pool.stats();
        assert_eq!((st.buffers, st.retained_bytes), (2, 901));
        let hits = st.hits;
        drop(alloc(301));
        assert_eq!(pool.stats().hits, hits + 1);
        pool.set_limit(600);
        assert_eq!(
            pool.stats().retained_bytes,
            301,
            "set_limit evicts the oldest (600) first"
        );
        drop(alloc(2000));
        assert_eq!(
            pool.stats().retained_bytes,
            301,
            "a buffer above the limit is freed"
        );
        pool.reset();
        assert_eq!(pool.stats().buffers, 0);
    }

    #[test]
    fn huge_allocation_is_an_error_not_an_abort() {
        let r = Storage::allocate("zeros", usize::MAX / 2, None, true);
        assert!(matches!(r, Err(Error::Alloc { .. })));
    }
}
