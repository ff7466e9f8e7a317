//! The cop-limiter's rules, driven by a manual clock, a fake memory probe and a seeded random
//! source: no real sleeps, same result every run.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use prometheus::Registry;
use rcop_limiter::{
    BusyReason, Clock, CopLimiter, CopLimiterConfig, Error, FastRandom, KeyspaceId, LimiterMetrics,
    ManualClock, ManualMemoryProbe, MemoryMonitor,
};

const MIN: Duration = Duration::from_millis(100);
const MAX: Duration = Duration::from_secs(3);
const HOUR: Duration = Duration::from_secs(3600);
const LIMIT: u64 = 1000; // line at 800 bytes with the default ratio 0.8
const HIGH: u64 = 900;
const LOW: u64 = 500;

struct Setup {
    clock: Arc<ManualClock>,
    probe: Arc<ManualMemoryProbe>,
    monitor: Arc<MemoryMonitor>,
    limiter: Arc<CopLimiter>,
}

fn setup(used: u64) -> Setup {
    setup_with(used, None)
}

#[expect(clippy::unwrap_used, reason = "test helper: the default config is valid")]
fn setup_with(used: u64, metrics: Option<LimiterMetrics>) -> Setup {
    let clock = Arc::new(ManualClock::new());
    let probe = Arc::new(ManualMemoryProbe::new(used, LIMIT));
    let monitor = Arc::new(MemoryMonitor::new(probe.clone()).unwrap());
    let mut limiter = CopLimiter::new(&CopLimiterConfig::default(), monitor.clone())
        .unwrap()
        .with_clock(clock.clone())
        .with_random(Arc::new(FastRandom::with_seed(42)));
    if let Some(m) = metrics {
        limiter = limiter.with_metrics(m);
    }
    Setup { clock, probe, monitor, limiter: Arc::new(limiter) }
}

/// Polls once: `Some` if the future completes without waiting.
fn poll_once<F: Future>(fut: F) -> Option<F::Output> {
    let mut fut = pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

/// Lets spawned tasks on the current-thread runtime run until they block.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

impl Setup {
    fn passes_at_once(&self, ks: u32) -> bool {
        let deadline = self.clock.now() + HOUR;
        matches!(poll_once(self.limiter.wait_for_memory(KeyspaceId(ks), deadline)), Some(Ok(())))
    }

    fn spawn_wait(&self, ks: u32, timeout: Duration) -> tokio::task::JoinHandle<Result<(), Error>> {
        let limiter = self.limiter.clone();
        let deadline = self.clock.now() + timeout;
        tokio::spawn(async move { limiter.wait_for_memory(KeyspaceId(ks), deadline).await })
    }

    /// Yields until `n` sleeps have been requested; fails instead of hanging.
    async fn wait_for_sleeps(&self, n: usize) {
        for _ in 0..10_000 {
            if self.clock.sleeps().len() >= n {
                return;
            }
            tokio::task::yield_now().await;
        }
        assert!(self.clock.sleeps().len() >= n, "expected {n} sleeps: {:?}", self.clock.sleeps());
    }
}

#[test]
fn line_is_ratio_of_limit() {
    let s = setup(0);
    assert_eq!(s.limiter.high_mem_bytes(), 800);
    assert!(!s.limiter.is_memory_high());
}

#[test]
fn below_the_line_everyone_passes() {
    let s = setup(LOW);
    s.limiter.record_response(KeyspaceId(1), 1 << 20);
    assert!(s.limiter.is_high_throughput(KeyspaceId(1)));
    assert!(s.passes_at_once(1));
    assert!(s.clock.sleeps().is_empty());
}

#[test]
fn above_the_line_without_samples_everyone_passes() {
    let s = setup(HIGH);
    assert!(s.limiter.is_memory_high());
    assert!(s.passes_at_once(1));
}

#[test]
fn above_the_line_below_average_keyspaces_pass_and_heavy_ones_wait() {
    let s = setup(HIGH);
    s.limiter.record_response(KeyspaceId(1), 100);
    s.limiter.record_response(KeyspaceId(2), 900);
    s.limiter.record_response(KeyspaceId(3), 500); // average 500: at the average is heavy
    assert!(s.passes_at_once(1));
    assert!(s.passes_at_once(4), "a keyspace without samples is not heavy");
    assert!(!s.passes_at_once(2));
    assert!(!s.passes_at_once(3));
}

#[test]
fn a_single_keyspace_is_always_heavy() {
    let s = setup(HIGH);
    s.limiter.record_response(KeyspaceId(7), 1);
    assert!(s.limiter.is_high_throughput(KeyspaceId(7)));
    assert!(!s.passes_at_once(7));
}

#[tokio::test]
async fn heavy_keyspace_waits_and_passes_when_memory_drops() {
    let s = setup(HIGH);
    s.limiter.record_response(KeyspaceId(1), 1000);
    let task = s.spawn_wait(1, HOUR);
    s.wait_for_sleeps(1).await;
    let first = s.clock.sleeps()[0];
    assert!((MIN..=MAX).contains(&first), "{first:?}");
    // Still high after the first nap: it sleeps again.
    s.clock.advance(first);
    s.wait_for_sleeps(2).await;
    assert!(!task.is_finished());
    let second = s.clock.sleeps()[1];
    // Memory drops; it passes at the end of the current nap, not before.
    s.probe.set_used(LOW);
    s.clock.advance(second - Duration::from_nanos(1));
    settle().await;
    assert!(!task.is_finished());
    s.clock.advance(Duration::from_nanos(1));
    task.await.unwrap().unwrap();
    assert_eq!(s.clock.elapsed(), first + second);
    assert_eq!(s.clock.sleeps().len(), 2);
}

#[tokio::test]
async fn deadline_rejects_with_a_retryable_memory_pressure_error() {
    let s = setup(HIGH);
    s.limiter.record_response(KeyspaceId(1), 1000);
    let task = s.spawn_wait(1, Duration::from_secs(1));
    // Wake the waiter exactly at the end of each nap.
    let mut naps = 0;
    for _ in 0..10_000 {
        if task.is_finished() {
            break;
        }
        let sleeps = s.clock.sleeps();
        if sleeps.len() > naps {
            naps = sleeps.len();
            s.clock.advance(sleeps[naps - 1]);
        }
        tokio::task::yield_now().await;
    }
    let err = task.await.unwrap().unwrap_err();
    assert!(matches!(err, Error::ServerBusy { reason: BusyReason::MemoryPressure }), "{err}");
    assert!(err.is_retryable());
    // Rejected exactly at the deadline: the last nap was cut to end there.
    assert_eq!(s.clock.elapsed(), Duration::from_secs(1));
    let sleeps = s.clock.sleeps();
    assert_eq!(sleeps.iter().sum::<Duration>(), Duration::from_secs(1));
    assert!(sleeps[..sleeps.len() - 1].iter().all(|d| (MIN..=MAX).contains(d)), "{sleeps:?}");
}

#[tokio::test]
async fn a_deadline_already_passed_rejects_at_once() {
    let s = setup(HIGH);
    s.limiter.record_response(KeyspaceId(1), 1000);
    let deadline = s.clock.now();
    let result = s.limiter.wait_for_memory(KeyspaceId(1), deadline).await;
    assert!(matches!(result, Err(Error::ServerBusy { reason: BusyReason::MemoryPressure })));
    assert!(s.clock.sleeps().is_empty());
}

#[tokio::test]
async fn window_evicts_samples_older_than_the_ttl() {
    let s = setup(HIGH);
    s.limiter.record_response(KeyspaceId(1), 1_000_000);
    s.limiter.record_response(KeyspaceId(2), 10);
    assert!(!s.passes_at_once(1) && s.passes_at_once(2));
    // 60 s later the samples are still in the window (exactly ttl old).
    s.clock.advance(Duration::from_secs(60));
    assert!(s.limiter.is_high_throughput(KeyspaceId(1)));
    // After the ttl, a new sample of ks2 evicts ks1's: ks2 is alone, so heavy; ks1 passes.
    s.clock.advance(Duration::from_millis(1));
    s.limiter.record_response(KeyspaceId(2), 10);
    assert!(s.passes_at_once(1));
    assert!(!s.passes_at_once(2));
    // Without new samples, the check itself evicts expired ones.
    s.clock.advance(Duration::from_secs(61));
    assert!(!s.limiter.is_high_throughput(KeyspaceId(2)));
    assert!(s.passes_at_once(2));
}

#[tokio::test]
async fn waits_stay_within_min_and_max() {
    let s = setup(HIGH);
    s.limiter.record_response(KeyspaceId(1), 1000);
    let task = s.spawn_wait(1, HOUR);
    for n in 1..=200 {
        s.wait_for_sleeps(n).await;
        s.clock.advance(MAX);
    }
    let sleeps = s.clock.sleeps();
    assert!(sleeps.iter().all(|d| (MIN..=MAX).contains(d)), "{sleeps:?}");
    let (lo, hi) = (sleeps.iter().min().unwrap(), sleeps.iter().max().unwrap());
    assert!(*lo < Duration::from_millis(400) && *hi > Duration::from_millis(2700), "{lo:?} {hi:?}");
    task.abort();
}

#[tokio::test]
async fn waiters_do_not_all_wake_at_one_instant() {
    let s = setup(HIGH);
    s.limiter.record_response(KeyspaceId(1), 1000);
    let tasks: Vec<_> = (0..20).map(|_| s.spawn_wait(1, HOUR)).collect();
    s.wait_for_sleeps(20).await;
    let mut firsts = s.clock.sleeps();
    firsts.sort();
    firsts.dedup();
    assert!(firsts.len() >= 18, "first naps should differ: {firsts:?}");
    // Memory drops; step the clock in 50 ms ticks and count distinct wake-up ticks.
    s.probe.set_used(LOW);
    let mut finish_ticks = Vec::new();
    let mut done = 0;
    for tick in 0..=(MAX.as_millis() / 50) {
        settle().await;
        let now_done = tasks.iter().filter(|t| t.is_finished()).count();
        if now_done > done {
            finish_ticks.push(tick);
            done = now_done;
        }
        s.clock.advance(Duration::from_millis(50));
    }
    assert_eq!(done, 20);
    assert!(finish_ticks.len() >= 10, "wake-ups spread over ticks {finish_ticks:?}");
    for t in tasks {
        t.await.unwrap().unwrap();
    }
}

#[tokio::test]
async fn metrics_count_waiters_wait_time_and_rejections() {
    let registry = Registry::new();
    let metrics = LimiterMetrics::register(&registry).unwrap();
    let s = setup_with(HIGH, Some(metrics.clone()));
    s.limiter.record_response(KeyspaceId(1), 1000);
    let waiting = metrics.waiting().with_label_values(&["cop_limiter"]);
    let waited = metrics.wait_duration().with_label_values(&["cop_limiter"]);
    let rejected = metrics.failed_requests().with_label_values(&["memory_pressure"]);

    let task = s.spawn_wait(1, Duration::from_secs(2));
    s.wait_for_sleeps(1).await;
    assert_eq!(waiting.get(), 1);
    s.clock.advance(Duration::from_secs(2));
    settle().await;
    assert!(task.await.unwrap().is_err());
    assert_eq!((waiting.get(), rejected.get(), waited.get_sample_count()), (0, 1, 1));
    assert_eq!(waited.get_sample_sum(), 2.0);

    // A pass after waiting is observed but not counted as a rejection.
    s.probe.set_used(LOW);
    let task = s.spawn_wait(1, HOUR);
    s.wait_for_sleeps(2).await;
    s.clock.advance(MAX);
    task.await.unwrap().unwrap();
    assert_eq!((waiting.get(), rejected.get(), waited.get_sample_count()), (0, 1, 2));

    // A cancelled waiter leaves the gauge.
    s.probe.set_used(HIGH);
    s.monitor.refresh();
    let task = s.spawn_wait(1, HOUR);
    s.wait_for_sleeps(3).await;
    assert_eq!(waiting.get(), 1);
    task.abort();
    let _ = task.await;
    assert_eq!(waiting.get(), 0);
}
