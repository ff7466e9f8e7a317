//! Settings replaced at run time: readers take a cheap snapshot, a writer swaps the whole.

use std::sync::{Arc, RwLock};

/// A value read as an `Arc` snapshot and replaced whole (a poisoned lock is still used: the
/// value is only ever replaced, never left half-written).
#[derive(Debug)]
pub(crate) struct Swap<T>(RwLock<Arc<T>>);

impl<T> Swap<T> {
    pub(crate) fn new(value: T) -> Self {
        Swap(RwLock::new(Arc::new(value)))
    }

    /// The current value.
    pub(crate) fn load(&self) -> Arc<T> {
        match self.0.read() {
            Ok(v) => Arc::clone(&v),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Replaces the value for every later [`load`](Self::load).
    pub(crate) fn store(&self, value: T) {
        let value = Arc::new(value);
        match self.0.write() {
            Ok(mut v) => *v = value,
            Err(poisoned) => *poisoned.into_inner() = value,
        }
    }
}
