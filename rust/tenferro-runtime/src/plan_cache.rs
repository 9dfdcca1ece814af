//! The engine's prepared-plan cache (GEMM layouts and einsum programs; indexing plans later):
//! bounded, least-recently-used eviction, with the statistics of `tf.CacheStats`.

use std::any::Any;
use std::collections::HashMap;
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

struct State {
    map: HashMap<Vec<i64>, Entry>,
    tick: u64,
    stats: CacheStats,
}

/// A bounded map from plan keys (integer encodings of op, config, shapes, strides, dtypes)
/// to prepared plans.
pub struct PlanCache {
    state: Mutex<State>,
    capacity: usize,
}

impl PlanCache {
    /// A cache holding at most `capacity` plans.
    pub fn new(capacity: usize) -> PlanCache {
        PlanCache {
            state: Mutex::new(State {
                map: HashMap::new(),
                tick: 0,
                stats: CacheStats::default(),
            }),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The plan for `key`, built by `build` on a miss.
    pub fn get_or_build<P: Any + Send + Sync>(
        &self,
        key: Vec<i64>,
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
    /// long or call back into the interpreter.
    ///
    /// # Errors
    /// The error of `build`.
    pub fn try_get_or_build<P: Any + Send + Sync, E>(
        &self,
        key: Vec<i64>,
        bytes: impl FnOnce(&P) -> usize,
        build: impl FnOnce() -> Result<P, E>,
    ) -> Result<Arc<P>, E> {
        {
            let mut s = self.lock();
            s.tick += 1;
            let tick = s.tick;
            if let Some(e) = s.map.get_mut(&key) {
                e.last_used = tick;
                if let Ok(p) = e.plan.clone().downcast::<P>() {
                    s.stats.hits += 1;
                    return Ok(p);
                }
            }
            s.stats.misses += 1;
        }
        let plan = Arc::new(build()?);
        let size = bytes(&plan) + key.len() * 8;
        let mut s = self.lock();
        while s.map.len() >= self.capacity {
            let Some(oldest) = s
                .map
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some(e) = s.map.remove(&oldest) {
                s.stats.retained_bytes -= e.bytes;
                s.stats.evictions += 1;
            }
        }
        let tick = s.tick;
        if let Some(old) = s.map.insert(
            key,
            Entry {
                plan: plan.clone(),
                bytes: size,
                last_used: tick,
            },
        ) {
            s.stats.retained_bytes -= old.bytes;
        }
        s.stats.retained_bytes += size;
        s.stats.entries = s.map.len();
        Ok(plan)
    }

    /// Current statistics.
    pub fn stats(&self) -> CacheStats {
        let s = self.lock();
        CacheStats {
            entries: s.map.len(),
            ..s.stats
        }
    }

    /// Drop every plan (statistics are kept; `clears` counts the calls).
    pub fn clear(&self) {
        let mut s = self.lock();
        s.map.clear();
        s.stats.retained_bytes = 0;
        s.stats.entries = 0;
        s.stats.clears += 1;
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
}
