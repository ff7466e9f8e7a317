//! Injectable time: a monotonic `now` and an async `sleep`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::watch;

/// A boxed, sendable future, as returned by [`Clock::sleep`].
pub type BoxFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// Monotonic time and sleeping, injectable so tests control both.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant; never goes backwards.
    fn now(&self) -> Instant;

    /// Completes once `duration` has passed on this clock.
    fn sleep(&self, duration: Duration) -> BoxFuture<'_>;

    /// Completes once `deadline` has been reached on this clock.
    fn sleep_until(&self, deadline: Instant) -> BoxFuture<'_> {
        self.sleep(deadline.saturating_duration_since(self.now()))
    }
}

/// The real clock: [`Instant::now`] and [`tokio::time::sleep`] (needs a tokio runtime with time
/// enabled).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'_> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A clock that moves only when told to, for deterministic tests.
///
/// Time starts at the instant of construction and advances with [`ManualClock::advance`];
/// sleepers whose deadline has been reached then complete. Every requested sleep is logged
/// ([`ManualClock::sleeps`]) so tests can check wait lengths.
#[derive(Debug)]
pub struct ManualClock {
    origin: Instant,
    elapsed: watch::Sender<Duration>,
    sleeps: Mutex<Vec<Duration>>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl ManualClock {
    /// A clock at its origin.
    pub fn new() -> Self {
        ManualClock {
            origin: Instant::now(),
            elapsed: watch::Sender::new(Duration::ZERO),
            sleeps: Mutex::new(Vec::new()),
        }
    }

    /// Moves time forward by `by` and wakes the sleepers that are due.
    pub fn advance(&self, by: Duration) {
        self.elapsed.send_modify(|elapsed| *elapsed = elapsed.saturating_add(by));
    }

    /// Time since the clock's origin.
    pub fn elapsed(&self) -> Duration {
        *self.elapsed.borrow()
    }

    /// Every duration passed to [`Clock::sleep`] so far, in call order.
    pub fn sleeps(&self) -> Vec<Duration> {
        self.sleeps
            .lock()
            .map(|s| s.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.origin + self.elapsed()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'_> {
        match self.sleeps.lock() {
            Ok(mut sleeps) => sleeps.push(duration),
            Err(poisoned) => poisoned.into_inner().push(duration),
        }
        let wake_at = self.elapsed().saturating_add(duration);
        let mut rx = self.elapsed.subscribe();
        Box::pin(async move {
            // The sender lives as long as `self`, which this future borrows, so `changed` only
            // fails if it never will change again; either way there is nothing left to wait for.
            while *rx.borrow_and_update() < wake_at {
                if rx.changed().await.is_err() {
                    return;
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn manual_clock_sleeps_until_advanced() {
        let clock = std::sync::Arc::new(ManualClock::new());
        let start = clock.now();
        let c = clock.clone();
        let sleeper = tokio::spawn(async move { c.sleep(Duration::from_millis(100)).await });
        while clock.sleeps().is_empty() {
            tokio::task::yield_now().await;
        }
        clock.advance(Duration::from_millis(99));
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_millis(1));
        sleeper.await.unwrap();
        assert_eq!(clock.now() - start, Duration::from_millis(100));
        assert_eq!(clock.sleeps(), vec![Duration::from_millis(100)]);
        // A deadline in the past completes at once.
        clock.sleep_until(start).await;
    }

    #[tokio::test]
    async fn system_clock_sleeps() {
        let clock = SystemClock;
        let start = clock.now();
        clock.sleep(Duration::from_millis(2)).await;
        assert!(clock.now() - start >= Duration::from_millis(2));
    }
}
