//! The engine's prepared-plan cache (GEMM layouts, einsum programs, prepared graph plans;
//! indexing plans later): bounded in entries and in bytes, least-recently-used eviction, with
//! the statistics of `tf.CacheStats` — for the whole cache, and per kind of plan (the first
//! element of a key is its kind's tag: [`PlanCache::stats_for`], [`PlanCache::clear_tag`]).

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Statistics of a plan cache (`tf.CacheStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Plans currently cached.
    pub entries: usize,
    /// Approximate bytes held by cached plans.
    pub retained_bytes: usize,
    /// Lookups served from the cache.
    pub hits: u64,
    /// Lookups that had to build a plan.
    pub misses: u64,
    /// Plans evicted to respect the capacity.
    pub evictions: u64,
    /// Calls to `clear`.
    pub clears: u64,
}

struct Entry {
    plan: Arc<dyn Any + Send + Sync>,
    bytes: usize,
    last_used: u64,
}

/// The hasher of plan keys (short integer sequences): FxHash's multiply-rotate, about twice
/// as fast as the default SipHash on the per-call lookup of a prepared graph. Keys come from
/// the library's own encodings, so collision flooding is no concern (equal hashes still
/// compare keys). Public for the other per-call lookups of the library's own keys.
#[derive(Default)]
pub struct KeyHasher(u64);

impl KeyHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type KeyMap = HashMap<Vec<i64>, Entry, std::hash::BuildHasherDefault<KeyHasher>>;

struct State {
    map: KeyMap,
    tick: u64,
    stats: CacheStats,
    /// Statistics per tag (first key element), `entries` and `retained_bytes` included.
    tags: Vec<(i64, CacheStats)>,
}

impl State {
    fn tag(&mut self, key: &[i64]) -> &mut CacheStats {
        let t = key.first().copied().unwrap_or(0);
        let i = match self.tags.iter().position(|(k, _)| *k == t) {
            Some(i) => i,
            None => {
                self.tags.push((t, CacheStats::default()));
                self.tags.len() - 1
            }
        };
        &mut self.tags[i].1
    }

    fn remove(&mut self, key: &[i64], evicted: bool) {
        if let Some(e) = self.map.remove(key) {
            self.stats.retained_bytes -= e.bytes;
            let t = self.tag(key);
            t.retained_bytes -= e.bytes;
            t.entries -= 1;
            if evicted {
                t.evictions += 1;
                self.stats.evictions += 1;
            }
        }
    }
}

/// Bytes a plan cache retains at most by default (least recently used plans are evicted
/// beyond it; a single larger plan is kept alone).
pub const DEFAULT_PLAN_CACHE_BYTES: usize = 256 << 20;

/// A bounded map from plan keys (integer encodings of op, config, shapes, strides, dtypes)
/// to prepared plans.
pub struct PlanCache {
    state: Mutex<State>,
    capacity: AtomicUsize,
    max_bytes: AtomicUsize,
}

impl PlanCache {
    /// A cache holding at most `capacity` plans and [`DEFAULT_PLAN_CACHE_BYTES`].
    pub fn new(capacity: usize) -> PlanCache {
        PlanCache::with_limits(capacity, DEFAULT_PLAN_CACHE_BYTES)
    }

    /// A cache holding at most `capacity` plans and about `max_bytes` (by the plans' own
    /// estimates).
    pub fn with_limits(capacity: usize, max_bytes: usize) -> PlanCache {
        PlanCache {
            state: Mutex::new(State {
                map: KeyMap::default(),
                tick: 0,
                stats: CacheStats::default(),
                tags: Vec::new(),
            }),
            capacity: AtomicUsize::new(capacity.max(1)),
            max_bytes: AtomicUsize::new(max_bytes),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The plan for `key`, built by `build` on a miss.
    pub fn get_or_build<P: Any + Send + Sync>(
        &self,
        key: impl AsRef<[i64]> + Into<Vec<i64>>,
        bytes: impl FnOnce(&P) -> usize,
        build: impl FnOnce() -> P,
    ) -> Arc<P> {
        match self.try_get_or_build(key, bytes, || Ok::<P, std::convert::Infallible>(build())) {
            Ok(p) => p,
            Err(never) => match never {},
        }
    }

    /// The plan for `key`, built by the fallible `build` on a miss (a failed build caches
    /// nothing and counts as a miss). The lock is not held while building, so `build` may take
    /// long or call back into the interpreter. A key given as an array or a slice is copied
    /// into the cache only on a miss.
    ///
    /// # Errors
    /// The error of `build`.
    pub fn try_get_or_build<P: Any + Send + Sync, E>(
        &self,
        key: impl AsRef<[i64]> + Into<Vec<i64>>,
        bytes: impl FnOnce(&P) -> usize,
        build: impl FnOnce() -> Result<P, E>,
    ) -> Result<Arc<P>, E> {
        {
            let k = key.as_ref();
            let mut s = self.lock();
            s.tick += 1;
            let tick = s.tick;
            if let Some(e) = s.map.get_mut(k) {
                e.last_used = tick;
                if let Ok(p) = e.plan.clone().downcast::<P>() {
                    s.stats.hits += 1;
                    s.tag(k).hits += 1;
                    return Ok(p);
                }
            }
            s.stats.misses += 1;
            s.tag(k).misses += 1;
        }
        let key: Vec<i64> = key.into();
        let plan = Arc::new(build()?);
        let size = bytes(&plan) + key.len() * 8;
        let mut s = self.lock();
        // A plan built concurrently under the same key is replaced (not counted as evicted).
        s.remove(&key, false);
        let (capacity, max_bytes) = self.limits();
        Self::evict(&mut s, capacity - 1, max_bytes.saturating_sub(size));
        let tick = s.tick;
        s.map.insert(
            key.clone(),
            Entry {
                plan: plan.clone(),
                bytes: size,
                last_used: tick,
            },
        );
        s.stats.retained_bytes += size;
        s.stats.entries = s.map.len();
        let t = s.tag(&key);
        t.retained_bytes += size;
        t.entries += 1;
        Ok(plan)
    }

    /// `(max_entries, max_retained_bytes)`.
    pub fn limits(&self) -> (usize, usize) {
        (
            self.capacity.load(Ordering::Relaxed),
            self.max_bytes.load(Ordering::Relaxed),
        )
    }

    /// Change the limits (`max_entries` at least 1); least recently used plans beyond them are
    /// evicted now.
    pub fn set_limits(&self, max_entries: usize, max_bytes: usize) {
        self.capacity.store(max_entries.max(1), Ordering::Relaxed);
        self.max_bytes.store(max_bytes, Ordering::Relaxed);
        let mut s = self.lock();
        Self::evict(&mut s, max_entries.max(1), max_bytes);
    }

    /// Evict least recently used plans until at most `entries` remain and they retain at most
    /// `bytes`.
    fn evict(s: &mut State, entries: usize, bytes: usize) {
        while !s.map.is_empty() && (s.map.len() > entries || s.stats.retained_bytes > bytes) {
            let Some(oldest) = s
                .map
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            s.remove(&oldest, true);
        }
        s.stats.entries = s.map.len();
    }

    /// Current statistics.
    pub fn stats(&self) -> CacheStats {
        let s = self.lock();
        CacheStats {
            entries: s.map.len(),
            ..s.stats
        }
    }

    /// Statistics of the plans whose key starts with `tag` (`clears` counts
    /// [`PlanCache::clear`] and [`PlanCache::clear_tag`] calls that dropped them).
    pub fn stats_for(&self, tag: i64) -> CacheStats {
        let s = self.lock();
        s.tags
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, st)| *st)
            .unwrap_or_default()
    }

    /// Drop every plan (statistics are kept; `clears` counts the calls).
    pub fn clear(&self) {
        let mut s = self.lock();
        s.map.clear();
        s.stats.retained_bytes = 0;
        s.stats.entries = 0;
        s.stats.clears += 1;
        for (_, t) in s.tags.iter_mut() {
            t.retained_bytes = 0;
            t.entries = 0;
            t.clears += 1;
        }
    }

    /// Drop the plans whose key starts with `prefix` (a plan that can no longer be asked for:
    /// a prepared graph whose program died). Not counted as an eviction or a clear.
    pub fn remove_prefix(&self, prefix: &[i64]) {
        let mut s = self.lock();
        let keys: Vec<Vec<i64>> = s
            .map
            .keys()
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        for k in keys {
            s.remove(&k, false);
        }
        s.stats.entries = s.map.len();
    }

    /// Drop the plans whose key starts with `tag` (the others stay; that tag's `clears`
    /// counts the call).
    pub fn clear_tag(&self, tag: i64) {
        let mut s = self.lock();
        let keys: Vec<Vec<i64>> = s
            .map
            .keys()
            .filter(|k| k.first() == Some(&tag))
            .cloned()
            .collect();
        for k in keys {
            s.remove(&k, false);
        }
        s.stats.entries = s.map.len();
        let t = s.tag(&[tag]);
        t.entries = 0;
        t.retained_bytes = 0;
        t.clears += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_eviction_and_stats() {
        let c = PlanCache::new(2);
        let a = c.get_or_build(vec![1], |_: &u32| 4, || 10u32);
        assert_eq!(*a, 10);
        let _ = c.get_or_build(vec![2], |_: &u32| 4, || 20u32);
        let again = c.get_or_build(vec![1], |_: &u32| 4, || 99u32);
        assert_eq!(*again, 10, "hit returns the cached plan");
        let _ = c.get_or_build(vec![3], |_: &u32| 4, || 30u32); // evicts key 2 (least recent)
        let s = c.stats();
        assert_eq!((s.entries, s.hits, s.misses, s.evictions), (2, 1, 3, 1));
        let b = c.get_or_build(vec![2], |_: &u32| 4, || 21u32);
        assert_eq!(*b, 21);
        c.clear();
        assert_eq!(c.stats().entries, 0);
        assert_eq!(c.stats().clears, 1);
    }

    #[test]
    fn stats_per_tag_and_clear_tag() {
        let c = PlanCache::new(8);
        let _ = c.get_or_build(vec![7, 1], |_: &u32| 10, || 1u32);
        let _ = c.get_or_build(vec![7, 1], |_: &u32| 10, || 2u32);
        let _ = c.get_or_build(vec![9, 1], |_: &u32| 20, || 3u32);
        let s7 = c.stats_for(7);
        assert_eq!((s7.entries, s7.hits, s7.misses), (1, 1, 1));
        assert_eq!(s7.retained_bytes, 10 + 16);
        assert_eq!(c.stats_for(9).misses, 1);
        c.clear_tag(7);
        assert_eq!(c.stats_for(7).entries, 0);
        assert_eq!(c.stats_for(7).clears, 1);
        assert_eq!(c.stats_for(9).entries, 1, "other tags stay");
        assert_eq!(c.stats().entries, 1);
        assert_eq!(c.stats().retained_bytes, 20 + 16);
        let again = c.get_or_build(vec![7, 1], |_: &u32| 10, || 5u32);
        assert_eq!(*again, 5, "rebuilt after clear_tag");
        let _ = c.get_or_build(vec![7, 2, 0], |_: &u32| 10, || 6u32);
        c.remove_prefix(&[7, 2]);
        assert_eq!(c.stats_for(7).entries, 1, "only [7, 2, ..] removed");
        assert_eq!(c.stats_for(7).evictions, 0);
    }

    #[test]
    fn byte_budget_evicts_least_recent() {
        let c = PlanCache::with_limits(100, 100);
        let _ = c.get_or_build(vec![1], |_: &u32| 40, || 1u32); // 48 bytes with its key
        let _ = c.get_or_build(vec![2], |_: &u32| 40, || 2u32);
        let _ = c.get_or_build(vec![3], |_: &u32| 40, || 3u32); // evicts key 1
        let s = c.stats();
        assert_eq!((s.entries, s.evictions), (2, 1));
        assert!(s.retained_bytes <= 100);
        let _ = c.get_or_build(vec![4], |_: &u32| 500, || 4u32); // alone over the budget
        assert_eq!(c.stats().entries, 1);
    }
}
