//! Permits: limits hold under 1,000 concurrent tasks, the queue is bounded, deadlines end
//! waits, and permits come back on drop, cancellation and panic.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus::Registry;
use rcop_limiter::{
    BusyReason, Clock, Error, KeyspaceId, LimiterMetrics, ManualClock, Permit, PermitCounts,
    WorkerLimiter, WorkerLimiterConfig,
};

const HOUR: Duration = Duration::from_secs(3600);

fn config(global: f64, keyspace: f64, queue: usize, keyspace_queue: usize) -> WorkerLimiterConfig {
    WorkerLimiterConfig::default()
        .with_global_concurrency_factor(global)
        .with_keyspace_concurrency_factor(keyspace)
        .with_max_queue_size(queue)
        .with_keyspace_max_queue_size(keyspace_queue)
}

async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

/// Yields until `limiter` has `n` waiters; fails instead of hanging.
async fn wait_for_waiters(limiter: &WorkerLimiter, n: usize) {
    for _ in 0..10_000 {
        if limiter.waiting() == n {
            return;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(limiter.waiting(), n, "waiters never arrived");
}

/// The busy reason of a rejection; `None` for a permit or another error.
fn busy(result: Result<Permit, Error>) -> Option<BusyReason> {
    match result {
        Err(Error::ServerBusy { reason }) => Some(reason),
        _ => None,
    }
}

#[test]
fn permit_counts_follow_cores_and_factors() {
    let l = WorkerLimiter::new(&WorkerLimiterConfig::default(), 2).unwrap();
    assert_eq!(l.permits(), PermitCounts { global: 12, keyspace: 4 });
    let l = WorkerLimiter::new(&config(1.0, 0.1, 1, 1), 1).unwrap();
    assert_eq!(l.permits(), PermitCounts { global: 2, keyspace: 2 }, "at least 2 each");
    assert!(WorkerLimiter::new(&config(1.0, 2.0, 1, 1), 1).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permits_never_exceed_their_limits_with_1000_tasks() {
    // 4 cores: 8 global permits, 4 per keyspace, 5 keyspaces competing.
    let limiter = Arc::new(WorkerLimiter::new(&config(2.0, 1.0, 1000, 1000), 4).unwrap());
    let in_use = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let per_ks: Arc<Mutex<HashMap<u32, (usize, usize)>>> = Arc::default();
    let tasks: Vec<_> = (0..1000u32)
        .map(|i| {
            let (limiter, in_use, peak, per_ks) =
                (limiter.clone(), in_use.clone(), peak.clone(), per_ks.clone());
            tokio::spawn(async move {
                let ks = i % 5;
                let permit = limiter.acquire(KeyspaceId(ks), Instant::now() + HOUR).await.unwrap();
                peak.fetch_max(in_use.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                {
                    let mut map = per_ks.lock().unwrap();
                    let (now, max) = map.entry(ks).or_default();
                    *now += 1;
                    *max = (*max).max(*now);
                }
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                per_ks.lock().unwrap().entry(ks).or_default().0 -= 1;
                in_use.fetch_sub(1, Ordering::SeqCst);
                drop(permit);
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(peak.load(Ordering::SeqCst), 8, "global limit reached, never exceeded");
    for (ks, (now, max)) in per_ks.lock().unwrap().iter() {
        assert_eq!(*now, 0);
        assert!(*max <= 4, "keyspace {ks} peaked at {max}");
    }
    assert_eq!((limiter.available_global(), limiter.waiting()), (8, 0));
    for ks in 0..5 {
        assert_eq!(limiter.available(KeyspaceId(ks)), 4);
    }
}

#[tokio::test]
async fn waiters_get_permits_as_they_are_released() {
    let clock = Arc::new(ManualClock::new());
    let limiter = Arc::new(
        WorkerLimiter::new(&config(2.0, 1.0, 10, 10), 1).unwrap().with_clock(clock.clone()),
    );
    // 1 core: 2 global, 2 per keyspace.
    let a = limiter.try_acquire(KeyspaceId(1)).unwrap();
    let b = limiter.acquire(KeyspaceId(2), clock.now()).await.unwrap();
    assert!(limiter.try_acquire(KeyspaceId(3)).is_none());
    let l = limiter.clone();
    let deadline = clock.now() + HOUR;
    let waiter = tokio::spawn(async move { l.acquire(KeyspaceId(3), deadline).await });
    wait_for_waiters(&limiter, 1).await;
    drop(a);
    let c = waiter.await.unwrap().unwrap();
    assert_eq!((limiter.waiting(), limiter.available_global()), (0, 0));
    drop((b, c));
    assert_eq!(limiter.available_global(), 2);
}

#[tokio::test]
async fn a_keyspace_at_its_limit_waits_while_others_pass() {
    let clock = Arc::new(ManualClock::new());
    // 2 cores: 4 global, 2 per keyspace.
    let limiter =
        WorkerLimiter::new(&config(2.0, 1.0, 10, 10), 2).unwrap().with_clock(clock.clone());
    let _held: Vec<_> = (0..2).map(|_| limiter.try_acquire(KeyspaceId(1)).unwrap()).collect();
    assert!(limiter.try_acquire(KeyspaceId(1)).is_none());
    assert_eq!(limiter.available_global(), 2);
    let other = limiter.acquire(KeyspaceId(2), clock.now() + HOUR).await.unwrap();
    assert_eq!((limiter.available(KeyspaceId(1)), limiter.available(KeyspaceId(2))), (0, 1));
    drop(other);
}

#[tokio::test]
async fn a_full_queue_rejects_at_once() {
    let clock = Arc::new(ManualClock::new());
    let metrics = LimiterMetrics::register(&Registry::new()).unwrap();
    // 2 cores: 4 global, 2 per keyspace; 2 waiters in all, 1 per keyspace.
    let limiter = Arc::new(
        WorkerLimiter::new(&config(2.0, 1.0, 2, 1), 2)
            .unwrap()
            .with_clock(clock.clone())
            .with_metrics(metrics.clone()),
    );
    let deadline = clock.now() + HOUR;
    let _ks1: Vec<_> = (0..2).map(|_| limiter.try_acquire(KeyspaceId(1)).unwrap()).collect();
    let l = limiter.clone();
    let w1 = tokio::spawn(async move { l.acquire(KeyspaceId(1), deadline).await });
    wait_for_waiters(&limiter, 1).await;
    // ks1's queue (1) is full; the global queue (2) is not.
    assert_eq!(busy(limiter.acquire(KeyspaceId(1), deadline).await), Some(BusyReason::QueueFull));
    // Fill the global permits with ks2, then queue one ks3 request: the global queue is full.
    let _ks2: Vec<_> = (0..2).map(|_| limiter.try_acquire(KeyspaceId(2)).unwrap()).collect();
    let l = limiter.clone();
    let w3 = tokio::spawn(async move { l.acquire(KeyspaceId(3), deadline).await });
    wait_for_waiters(&limiter, 2).await;
    assert_eq!(busy(limiter.acquire(KeyspaceId(4), deadline).await), Some(BusyReason::QueueFull));
    assert_eq!(metrics.failed_requests().with_label_values(&["queue_full"]).get(), 2);
    assert_eq!(metrics.waiting().with_label_values(&["permit"]).get(), 2);
    assert!(Error::ServerBusy { reason: BusyReason::QueueFull }.is_retryable());
    w1.abort();
    w3.abort();
    let _ = (w1.await, w3.await);
    assert_eq!(limiter.waiting(), 0);
    assert_eq!(metrics.waiting().with_label_values(&["permit"]).get(), 0);
}

#[tokio::test]
async fn the_deadline_ends_the_wait() {
    let clock = Arc::new(ManualClock::new());
    let metrics = LimiterMetrics::register(&Registry::new()).unwrap();
    let limiter = Arc::new(
        WorkerLimiter::new(&config(1.0, 1.0, 10, 10), 1)
            .unwrap()
            .with_clock(clock.clone())
            .with_metrics(metrics.clone()),
    );
    let _all: Vec<_> = (0..2).map(|_| limiter.try_acquire(KeyspaceId(1)).unwrap()).collect();
    let l = limiter.clone();
    let deadline = clock.now() + Duration::from_secs(5);
    let waiter = tokio::spawn(async move { l.acquire(KeyspaceId(2), deadline).await });
    wait_for_waiters(&limiter, 1).await;
    clock.advance(Duration::from_millis(4999));
    settle().await;
    assert!(!waiter.is_finished());
    clock.advance(Duration::from_millis(1));
    assert_eq!(busy(waiter.await.unwrap()), Some(BusyReason::PermitWaitTimeout));
    assert_eq!(limiter.waiting(), 0);
    assert_eq!(limiter.available(KeyspaceId(2)), 2, "the keyspace permit it held came back");
    assert_eq!(metrics.failed_requests().with_label_values(&["wait_timeout"]).get(), 1);
    let waited = metrics.wait_duration().with_label_values(&["permit"]);
    assert_eq!((waited.get_sample_count(), waited.get_sample_sum()), (1, 5.0));
    // A passed deadline with no free permit fails at once; with free permits it still passes.
    assert_eq!(
        busy(limiter.acquire(KeyspaceId(3), clock.now()).await),
        Some(BusyReason::PermitWaitTimeout)
    );
    drop(_all);
    assert!(limiter.acquire(KeyspaceId(3), clock.now()).await.is_ok());
}

#[tokio::test]
async fn cancelled_waiters_leak_nothing() {
    let clock = Arc::new(ManualClock::new());
    let limiter = Arc::new(
        WorkerLimiter::new(&config(1.0, 1.0, 10, 10), 1).unwrap().with_clock(clock.clone()),
    );
    let held: Vec<_> = (0..2).map(|_| limiter.try_acquire(KeyspaceId(1)).unwrap()).collect();
    // ks2's waiters hold ks2 permits while they wait for a global one.
    let deadline = clock.now() + HOUR;
    let waiters: Vec<_> = (0..2)
        .map(|_| {
            let l = limiter.clone();
            tokio::spawn(async move { l.acquire(KeyspaceId(2), deadline).await })
        })
        .collect();
    wait_for_waiters(&limiter, 2).await;
    assert_eq!(limiter.available(KeyspaceId(2)), 0);
    for w in waiters {
        w.abort();
        assert!(w.await.unwrap_err().is_cancelled());
    }
    assert_eq!((limiter.waiting(), limiter.available(KeyspaceId(2))), (0, 2));
    // A waiter dropped by a timeout around it leaves nothing behind either.
    let timed_out =
        tokio::time::timeout(Duration::from_millis(1), limiter.acquire(KeyspaceId(3), deadline))
            .await;
    assert!(timed_out.is_err());
    assert_eq!((limiter.waiting(), limiter.available(KeyspaceId(3))), (0, 2));
    drop(held);
    assert_eq!(limiter.available_global(), 2);
}

#[tokio::test]
async fn a_panicking_holder_gives_its_permits_back() {
    let limiter = Arc::new(WorkerLimiter::new(&config(1.0, 1.0, 10, 10), 1).unwrap());
    let l = limiter.clone();
    let task = tokio::spawn(async move {
        let _permit = l.acquire(KeyspaceId(1), Instant::now() + HOUR).await.unwrap();
        panic!("request handler panicked");
    });
    assert!(task.await.unwrap_err().is_panic());
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(1))), (2, 2));
}

/// A worker serving many tenants keeps a bounded permit table: idle keyspaces are swept once
/// there are `KEYSPACE_SWEEP_AT`, and a keyspace holding or waiting for a permit is never
/// swept (its count would otherwise restart from full).
#[tokio::test]
async fn idle_keyspaces_are_swept_and_busy_ones_kept() {
    use rcop_limiter::KEYSPACE_SWEEP_AT;
    let limiter = Arc::new(WorkerLimiter::new(&config(64.0, 2.0, 16, 4), 2).unwrap());
    let per_keyspace = limiter.permits().keyspace;
    let held = limiter.try_acquire(KeyspaceId(1)).unwrap();
    // Keyspace 2: every permit taken and one request waiting.
    let full: Vec<Permit> =
        (0..per_keyspace).map(|_| limiter.try_acquire(KeyspaceId(2)).unwrap()).collect();
    let waiter = {
        let limiter = Arc::clone(&limiter);
        tokio::spawn(async move {
            limiter.acquire(KeyspaceId(2), Instant::now() + HOUR).await.map(drop)
        })
    };
    wait_for_waiters(&limiter, 1).await;

    for ks in 10..10 + 5 * KEYSPACE_SWEEP_AT as u32 {
        drop(limiter.try_acquire(KeyspaceId(ks)).unwrap());
        assert!(limiter.keyspaces() <= KEYSPACE_SWEEP_AT + 1, "{}", limiter.keyspaces());
    }
    assert_eq!(limiter.available(KeyspaceId(1)), per_keyspace - 1, "the held permit counts");
    assert_eq!(limiter.available(KeyspaceId(2)), 0, "the full keyspace stays full");
    assert_eq!(limiter.waiting(), 1);
    drop(full);
    waiter.await.unwrap().unwrap();
    drop(held);
}
