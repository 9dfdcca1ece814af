//! Eager-op profiling (`autodiff.md`, Caches and introspection): with
//! `TENFERRO_PROFILE_EAGER_OP_AGG=1` per-op call counts and times are aggregated, split into
//! forward execution, recording and backward (rule evaluation); with
//! `TENFERRO_PROFILE_EAGER_OP_PRINT_EVERY=N` the table is printed to stderr every `N` forward ops.
//! Both variables are read once per process; when unset the cost is one relaxed load per op.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Which part of an op's life a measurement belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Kernel execution of the primal op.
    Forward,
    /// Creating the AD node.
    Recording,
    /// Evaluating the op's derivative rule in a backward or forward-mode pass.
    Backward,
}

#[derive(Default, Clone, Copy)]
struct Stats {
    calls: [u64; 3],
    nanos: [u128; 3],
}

/// The process-wide profiler.
pub struct Profiler {
    enabled: bool,
    print_every: u64,
    forward_ops: AtomicU64,
    table: Mutex<HashMap<&'static str, Stats>>,
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The profiler, configured from the environment on first use.
pub fn profiler() -> &'static Profiler {
    static P: OnceLock<Profiler> = OnceLock::new();
    P.get_or_init(|| Profiler {
        enabled: env_flag("TENFERRO_PROFILE_EAGER_OP_AGG"),
        print_every: std::env::var("TENFERRO_PROFILE_EAGER_OP_PRINT_EVERY")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        forward_ops: AtomicU64::new(0),
        table: Mutex::new(HashMap::new()),
    })
}

impl Profiler {
    /// Whether aggregation is on.
    #[inline]
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Add one measurement.
    pub fn add(&self, op: &'static str, phase: Phase, dur: Duration) {
        if !self.enabled {
            return;
        }
        let i = phase as usize;
        {
            let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
            let s = t.entry(op).or_default();
            s.calls[i] += 1;
            s.nanos[i] += dur.as_nanos();
        }
        if phase == Phase::Forward && self.print_every > 0 {
            let n = self.forward_ops.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_multiple_of(self.print_every) {
                eprintln!("{}", self.render());
            }
        }
    }

    /// The aggregated table as text (op, calls and total µs per phase), sorted by total time.
    pub fn render(&self) -> String {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let mut rows: Vec<(&&str, &Stats)> = t.iter().collect();
        rows.sort_by_key(|(_, s)| std::cmp::Reverse(s.nanos.iter().sum::<u128>()));
        let mut out = format!(
            "tenferro eager-op profile\n{:<24}{:>10}{:>12}{:>10}{:>12}{:>10}{:>12}\n",
            "op", "fwd calls", "fwd us", "rec calls", "rec us", "bwd calls", "bwd us"
        );
        for (op, s) in rows {
            out.push_str(&format!(
                "{:<24}{:>10}{:>12.1}{:>10}{:>12.1}{:>10}{:>12.1}\n",
                op,
                s.calls[0],
                s.nanos[0] as f64 / 1e3,
                s.calls[1],
                s.nanos[1] as f64 / 1e3,
                s.calls[2],
                s.nanos[2] as f64 / 1e3
            ));
        }
        out
    }

    /// Rows `(op, [calls fwd, rec, bwd], [µs fwd, rec, bwd])`.
    pub fn rows(&self) -> Vec<(String, [u64; 3], [f64; 3])> {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        t.iter()
            .map(|(op, s)| {
                (
                    op.to_string(),
                    s.calls,
                    [
                        s.nanos[0] as f64 / 1e3,
                        s.nanos[1] as f64 / 1e3,
                        s.nanos[2] as f64 / 1e3,
                    ],
                )
            })
            .collect()
    }

    /// Forget every measurement.
    pub fn reset(&self) {
        self.table.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}
