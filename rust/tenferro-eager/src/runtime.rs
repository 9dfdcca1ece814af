//! Runtimes (AD state: identity, the registry of tracked leaves and their gradient slots) and
//! execution contexts (one engine paired with the runtime it owns).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use tenferro_ad::{AdCaches, Node};
use tenferro_runtime::Engine;

static NEXT_RUNTIME_ID: AtomicU64 = AtomicU64::new(1);

/// Every runtime made (weakly), so `tf.clear_caches()` can reach their derivative caches.
static LIVE_RUNTIMES: Mutex<Vec<Weak<Runtime>>> = Mutex::new(Vec::new());

/// The runtimes still alive.
pub fn live_runtimes() -> Vec<Arc<Runtime>> {
    let mut v = LIVE_RUNTIMES.lock().unwrap_or_else(|e| e.into_inner());
    v.retain(|w| w.strong_count() > 0);
    v.iter().filter_map(Weak::upgrade).collect()
}

/// AD state shared by the tensors of one runtime (`architecture.md`, "Four objects"): a
/// process-unique id, the tracked leaves (held weakly: a dead leaf leaves no entry behind) whose
/// nodes carry the gradient slots, and the execution context that owns it, if any.
///
/// A runtime never stores an engine: the owning context is a weak back-reference that only
/// decides which engine runs the runtime's *implicit* ops while that context lives.
#[derive(Debug)]
pub struct Runtime {
    id: u64,
    leaves: Mutex<Vec<Weak<Node>>>,
    owner: OnceLock<Weak<Context>>,
    /// The derivative caches of compiled calls (`graph-mode.md`, "Caches on the Runtime").
    ad: Arc<AdCaches>,
}

impl Runtime {
    /// A fresh runtime with a process-unique id.
    pub fn new() -> Arc<Runtime> {
        let rt = Arc::new(Runtime {
            id: NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed),
            leaves: Mutex::new(Vec::new()),
            owner: OnceLock::new(),
            ad: Arc::new(AdCaches::new()),
        });
        let mut live = LIVE_RUNTIMES.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(&rt));
        rt
    }

    /// The AD-transform and prepared-derivative caches of this runtime.
    pub fn ad_caches(&self) -> &Arc<AdCaches> {
        &self.ad
    }

    /// Process-unique id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Remember a tracked leaf (weakly; dead entries are pruned on each registration).
    pub fn register_leaf(&self, leaf: &Arc<Node>) {
        let mut v = self.leaves.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|w| w.strong_count() > 0);
        v.push(Arc::downgrade(leaf));
    }

    /// Number of registered leaves still alive.
    pub fn registry_len(&self) -> usize {
        let mut v = self.leaves.lock().unwrap_or_else(|e| e.into_inner());
        v.retain(|w| w.strong_count() > 0);
        v.len()
    }

    /// The live tracked leaves, in registration order.
    pub fn live_leaves(&self) -> Vec<Arc<Node>> {
        let v = self.leaves.lock().unwrap_or_else(|e| e.into_inner());
        v.iter().filter_map(Weak::upgrade).collect()
    }

    /// The live leaf with node id `id`, if this runtime registered it.
    pub fn leaf(&self, id: u64) -> Option<Arc<Node>> {
        let v = self.leaves.lock().unwrap_or_else(|e| e.into_inner());
        v.iter().filter_map(Weak::upgrade).find(|n| n.id == id)
    }

    /// Reset every live gradient slot (the leaves stay registered).
    pub fn clear_grads(&self) {
        for n in self.live_leaves() {
            if let Some(slot) = n.slot() {
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
        }
    }

    /// The engine of the live, not retired context owning this runtime.
    #[inline]
    pub fn owner_engine(&self) -> Option<Arc<dyn Engine>> {
        self.owner
            .get()
            .and_then(Weak::upgrade)
            .filter(|c| !c.retired.load(Ordering::Relaxed))
            .map(|c| c.engine.clone())
    }
}

/// One engine and the eager runtime it serves (`tf.ExecutionContext`): implicit ops on the
/// runtime's tensors run on this engine while the context lives and is not retired.
pub struct Context {
    runtime: Arc<Runtime>,
    engine: Arc<dyn Engine>,
    retired: AtomicBool,
}

impl Context {
    /// Pair `engine` with `runtime`. A runtime belongs to at most one context: the first one
    /// keeps it (later contexts over the same runtime do not redirect its implicit ops).
    pub fn new(runtime: Arc<Runtime>, engine: Arc<dyn Engine>) -> Arc<Context> {
        let ctx = Arc::new(Context {
            runtime,
            engine,
            retired: AtomicBool::new(false),
        });
        let _ = ctx.runtime.owner.set(Arc::downgrade(&ctx));
        ctx
    }

    /// The context's runtime.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// The context's engine.
    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    /// Stop routing the runtime's implicit ops to this context's engine (the default context,
    /// when `tf.reset_default_engine()` replaces its engine).
    pub fn retire(&self) {
        self.retired.store(true, Ordering::Relaxed);
    }
}

/// The process-wide default runtime (`tf.default_runtime()`).
pub fn default_runtime() -> &'static Arc<Runtime> {
    static DEFAULT: OnceLock<Arc<Runtime>> = OnceLock::new();
    DEFAULT.get_or_init(Runtime::new)
}
