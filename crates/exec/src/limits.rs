//! Per-request limits: a deadline, a cancel flag and a memory budget, checked while a DAG
//! runs (between batches and every so much work inside the expensive kernels), so a request
//! that outgrows them stops with an [`Abort`] rather than running on or exhausting memory.
//!
//! Checks are cheap: an atomic load and one `Instant::now()` per batch, and inside long
//! kernels a counter that triggers the same check every [`CHECK_EVERY`] units of work
//! (characters compared, rows). Memory is accounted in coarse steps (per batch, per group
//! created, per TopN refill), each an estimate of the bytes held plus a per-entry overhead;
//! everything grown is given back when the request ends, whatever the outcome.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// Units of work (characters scanned, pattern steps, rows) between two limit checks inside a
/// kernel: 64 Ki, a few tens of microseconds of the slowest kernels.
pub const CHECK_EVERY: usize = 1 << 16;

/// A memory budget shared by the requests that draw on it (the worker's reservation).
///
/// The engine asks for more as its state grows and gives back what it frees; at the end of
/// a request it has given back everything it was granted.
pub trait MemoryBudget: Send + Sync + std::fmt::Debug {
    /// Asks for `bytes` more for this request; false when the budget cannot grow.
    fn try_grow(&self, bytes: usize) -> bool;
    /// Gives back `bytes` grown earlier.
    fn shrink(&self, bytes: usize);
}

/// A [`MemoryBudget`] of a fixed number of bytes, counted with an atomic.
///
/// ```
/// use rcop_exec::{CappedBudget, MemoryBudget};
///
/// let b = CappedBudget::new(100);
/// assert!(b.try_grow(60));
/// assert!(!b.try_grow(60));
/// b.shrink(60);
/// assert_eq!(b.used(), 0);
/// ```
#[derive(Debug, Default)]
pub struct CappedBudget {
    cap: usize,
    used: AtomicUsize,
    peak: AtomicUsize,
}

impl CappedBudget {
    /// A budget of `cap` bytes, none used.
    pub fn new(cap: usize) -> Self {
        CappedBudget { cap, used: AtomicUsize::new(0), peak: AtomicUsize::new(0) }
    }

    /// Bytes granted and not given back.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes held at once.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

impl MemoryBudget for CappedBudget {
    fn try_grow(&self, bytes: usize) -> bool {
        let grown = self.used.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| {
            u.checked_add(bytes).filter(|&n| n <= self.cap)
        });
        match grown {
            Ok(before) => {
                self.peak.fetch_max(before + bytes, Ordering::Relaxed);
                true
            }
            Err(_) => false,
        }
    }

    fn shrink(&self, bytes: usize) {
        // Saturating: a caller that gives back more than it holds cannot wrap the count.
        let _ = self
            .used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |u| Some(u.saturating_sub(bytes)));
    }
}

/// The limits one request runs under. The default has none.
///
/// Non-exhaustive: start from [`ExecLimits::default`] and use the `with_*` setters.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::AtomicBool;
/// use std::time::{Duration, Instant};
/// use rcop_exec::{CappedBudget, ExecLimits};
///
/// let limits = ExecLimits::default()
///     .with_deadline(Instant::now() + Duration::from_secs(5))
///     .with_memory(Arc::new(CappedBudget::new(64 << 20)))
///     .with_cancel_flag(Arc::new(AtomicBool::new(false)));
/// assert!(limits.deadline.is_some() && limits.memory.is_some() && limits.cancelled.is_some());
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ExecLimits {
    /// When the request must stop ([`Abort::DeadlineExceeded`]).
    pub deadline: Option<Instant>,
    /// The budget the request's state and response are accounted against
    /// ([`Abort::OverBudget`]).
    pub memory: Option<Arc<dyn MemoryBudget>>,
    /// Set to true (by anyone) to stop the request ([`Abort::Cancelled`]).
    pub cancelled: Option<Arc<AtomicBool>>,
    /// Set to true to stop one part of a split request that the parts before it made
    /// unneeded (checked as [`cancelled`](Self::cancelled) is; see `parallel.rs`).
    pub(crate) part_stop: Option<Arc<AtomicBool>>,
}

impl ExecLimits {
    /// Sets [`deadline`](Self::deadline).
    #[must_use]
    pub fn with_deadline(mut self, deadline: Instant) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// Sets [`memory`](Self::memory).
    #[must_use]
    pub fn with_memory(mut self, budget: Arc<dyn MemoryBudget>) -> Self {
        self.memory = Some(budget);
        self
    }

    /// Sets [`cancelled`](Self::cancelled).
    #[must_use]
    pub fn with_cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancelled = Some(flag);
        self
    }

    /// The same limits, also stopped by `flag` (a part's own stop).
    pub(crate) fn with_part_stop(mut self, flag: Arc<AtomicBool>) -> Self {
        self.part_stop = Some(flag);
        self
    }

    fn any(&self) -> bool {
        self.deadline.is_some()
            || self.memory.is_some()
            || self.cancelled.is_some()
            || self.part_stop.is_some()
    }
}

/// Why a request stopped before its answer: one of its [`ExecLimits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Abort {
    /// The memory budget refused to grow.
    #[error("request over its memory budget: {requested} more bytes refused while holding {held}")]
    OverBudget {
        /// The bytes asked for.
        requested: usize,
        /// The bytes the request held when it asked.
        held: usize,
    },
    /// The deadline passed.
    #[error("request deadline exceeded")]
    DeadlineExceeded,
    /// The cancel flag was set.
    #[error("request cancelled")]
    Cancelled,
}

/// The limits of a running request and what it holds of the budget. Lives in the
/// [`EvalContext`](crate::EvalContext); gives back what it holds when dropped.
#[derive(Debug, Default)]
pub(crate) struct Guard {
    limits: ExecLimits,
    active: bool,
    held: usize,
    work: usize,
    /// The first abort: every later check returns it again, so an abort that a kernel turns
    /// into a warning (or ignores) still stops the request at the next check.
    tripped: Option<Abort>,
}

impl Clone for Guard {
    /// The same limits, holding nothing (what is held belongs to the original).
    fn clone(&self) -> Self {
        Guard::new(&self.limits)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.release_all();
    }
}

impl Guard {
    pub(crate) fn new(limits: &ExecLimits) -> Guard {
        Guard { limits: limits.clone(), active: limits.any(), held: 0, work: 0, tripped: None }
    }

    /// Checks the cancel flag and the deadline.
    pub(crate) fn check(&mut self) -> Result<(), Abort> {
        if !self.active {
            return Ok(());
        }
        if let Some(a) = self.tripped {
            return Err(a);
        }
        self.work = 0;
        let set =
            |f: &Option<Arc<AtomicBool>>| f.as_ref().is_some_and(|c| c.load(Ordering::Relaxed));
        let abort = if set(&self.limits.cancelled) || set(&self.limits.part_stop) {
            Some(Abort::Cancelled)
        } else if self.limits.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Abort::DeadlineExceeded)
        } else {
            None
        };
        match abort {
            Some(a) => Err(self.trip(a)),
            None => Ok(()),
        }
    }

    /// Counts `units` of work; checks every [`CHECK_EVERY`] units.
    #[inline]
    pub(crate) fn tick(&mut self, units: usize) -> Result<(), Abort> {
        if !self.active {
            return Ok(());
        }
        self.work = self.work.saturating_add(units);
        if self.work >= CHECK_EVERY { self.check() } else { Ok(()) }
    }

    fn trip(&mut self, a: Abort) -> Abort {
        *self.tripped.get_or_insert(a)
    }

    /// Asks the budget for `bytes` more.
    pub(crate) fn grow(&mut self, bytes: usize) -> Result<(), Abort> {
        if let Some(a) = self.tripped {
            return Err(a);
        }
        let Some(budget) = self.limits.memory.as_ref() else {
            return Ok(());
        };
        if bytes == 0 {
            return Ok(());
        }
        if budget.try_grow(bytes) {
            self.held += bytes;
            Ok(())
        } else {
            let held = self.held;
            Err(self.trip(Abort::OverBudget { requested: bytes, held }))
        }
    }

    /// Gives back `bytes` (at most what is held).
    pub(crate) fn shrink(&mut self, bytes: usize) {
        let bytes = bytes.min(self.held);
        if bytes == 0 {
            return;
        }
        if let Some(budget) = self.limits.memory.as_ref() {
            budget.shrink(bytes);
        }
        self.held -= bytes;
    }

    /// Moves an account from `*accounted` bytes to `now` bytes.
    pub(crate) fn resize(&mut self, accounted: &mut usize, now: usize) -> Result<(), Abort> {
        if self.limits.memory.is_none() {
            return Ok(());
        }
        if now > *accounted {
            self.grow(now - *accounted)?;
        } else {
            self.shrink(*accounted - now);
        }
        *accounted = now;
        Ok(())
    }

    /// Gives back everything held.
    pub(crate) fn release_all(&mut self) {
        self.shrink(self.held);
    }

    /// Bytes held of the budget.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.held
    }
}

/// The heap bytes a scalar holds beyond its own slot.
pub(crate) fn scalar_heap_bytes(s: &crate::column::Scalar) -> usize {
    use crate::column::Scalar;
    match s {
        Scalar::Bytes(b) | Scalar::Vector(b) | Scalar::Enum(_, b) => b.len(),
        Scalar::Json(j) => j.as_ref().binary_len(),
        _ => 0,
    }
}

/// The bytes a row of scalars holds: the slots and their heap bytes.
pub(crate) fn scalars_bytes(row: &[crate::column::Scalar]) -> usize {
    row.iter().map(|s| std::mem::size_of_val(s) + scalar_heap_bytes(s)).sum::<usize>()
        + std::mem::size_of::<Vec<crate::column::Scalar>>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_grows_shrinks_and_gives_back_on_drop() {
        let budget = Arc::new(CappedBudget::new(1000));
        let limits = ExecLimits::default().with_memory(budget.clone());
        let mut g = Guard::new(&limits);
        let mut acc = 0;
        g.resize(&mut acc, 600).unwrap();
        assert_eq!((budget.used(), g.held()), (600, 600));
        g.resize(&mut acc, 200).unwrap();
        assert_eq!(budget.used(), 200);
        assert_eq!(g.grow(900), Err(Abort::OverBudget { requested: 900, held: 200 }));
        // Tripped: later checks fail too.
        assert!(g.grow(1).is_err());
        drop(g);
        assert_eq!(budget.used(), 0);
        assert_eq!(budget.peak(), 600);
    }

    #[test]
    fn cancel_and_deadline_are_seen_by_ticks() {
        let flag = Arc::new(AtomicBool::new(false));
        let mut g = Guard::new(&ExecLimits::default().with_cancel_flag(flag.clone()));
        g.tick(CHECK_EVERY - 1).unwrap();
        flag.store(true, Ordering::Relaxed);
        assert_eq!(g.tick(1), Err(Abort::Cancelled));
        let mut g = Guard::new(&ExecLimits::default().with_deadline(Instant::now()));
        assert_eq!(g.check(), Err(Abort::DeadlineExceeded));
        // No limits: never a check.
        let mut g = Guard::new(&ExecLimits::default());
        g.tick(usize::MAX).unwrap();
        g.grow(usize::MAX).unwrap();
    }
}
