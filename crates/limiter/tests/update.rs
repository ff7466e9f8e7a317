//! Runtime updates: new counts, bounds, capacities and cop-limiter knobs apply to requests
//! admitted from then on; held permits and reservations stay valid; a shrink completes as
//! permits come back; an invalid config changes nothing.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use rcop_limiter::{
    BusyReason, Clock, CopLimiter, CopLimiterConfig, Error, FastRandom, KeyspaceId, Limiter,
    LimiterConfig, ManualClock, ManualMemoryProbe, MemoryMonitor, MemoryThreshold, Permit,
    PermitCounts, ReadableDuration, ReadableSize, WorkerLimiter, WorkerLimiterConfig,
};

const GIB: u64 = 1 << 30;
const HOUR: Duration = Duration::from_secs(3600);

fn config(global: f64, keyspace: f64, queue: usize, keyspace_queue: usize) -> WorkerLimiterConfig {
    WorkerLimiterConfig::default()
        .with_global_concurrency_factor(global)
        .with_keyspace_concurrency_factor(keyspace)
        .with_max_queue_size(queue)
        .with_keyspace_max_queue_size(keyspace_queue)
}

#[expect(clippy::unwrap_used, reason = "test helper: callers take only free permits")]
fn take(limiter: &WorkerLimiter, keyspace: u32, n: usize) -> Vec<Permit> {
    (0..n).map(|_| limiter.try_acquire(KeyspaceId(keyspace)).unwrap()).collect()
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

async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[test]
fn a_shrink_keeps_held_permits_and_holds_once_they_come_back() {
    // 4 cores: 8 global, 4 per keyspace; 6 held (3 + 3), 2 free.
    let limiter = WorkerLimiter::new(&config(2.0, 1.0, 10, 10), 4).unwrap();
    let mut ks1 = take(&limiter, 1, 3);
    let mut ks2 = take(&limiter, 2, 3);
    assert_eq!(limiter.available_global(), 2);

    // Down to 4 global and 2 per keyspace while 6 and 3 are held.
    limiter.update(&config(1.0, 0.5, 10, 10)).unwrap();
    assert_eq!(limiter.permits(), PermitCounts { global: 4, keyspace: 2 });
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(1))), (0, 0));
    assert!(limiter.try_acquire(KeyspaceId(3)).is_none(), "nothing beyond the new count");
    assert_eq!(limiter.available(KeyspaceId(3)), 2, "a new keyspace gets the new count");

    // Returned permits complete the shrink before any is freed.
    drop(ks1.pop()); // 5 global held of 4, 2 of ks1 held of 2
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(1))), (0, 0));
    drop(ks2.pop()); // 4 of 4, 2 of 2
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(2))), (0, 0));
    assert!(limiter.try_acquire(KeyspaceId(3)).is_none());
    drop(ks2.pop()); // 3 of 4, 1 of 2: now places free up
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(2))), (1, 1));
    let extra = limiter.try_acquire(KeyspaceId(3)).unwrap();
    assert!(limiter.try_acquire(KeyspaceId(4)).is_none(), "4 held: the new global count");

    // Every permit held across the update was valid and came back to the new counts.
    drop((ks1, ks2, extra));
    assert_eq!(limiter.available_global(), 4);
    for ks in 1..=3 {
        assert_eq!(limiter.available(KeyspaceId(ks)), 2, "keyspace {ks}");
    }
    let all: Vec<_> = (0..8).filter_map(|ks| limiter.try_acquire(KeyspaceId(ks))).collect();
    assert_eq!(all.len(), 4);
}

#[test]
fn growing_back_before_the_permits_return_cancels_the_pending_shrink() {
    let limiter = WorkerLimiter::new(&config(2.0, 1.0, 10, 10), 4).unwrap();
    let held = (take(&limiter, 1, 3), take(&limiter, 2, 3));
    limiter.update(&config(1.0, 0.5, 10, 10)).unwrap(); // 8 -> 4 with 6 held
    limiter.update(&config(2.0, 1.0, 10, 10)).unwrap(); // back to 8
    assert_eq!(limiter.permits(), PermitCounts { global: 8, keyspace: 4 });
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(1))), (2, 1));
    drop(held);
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(1))), (8, 4));
    let all = (take(&limiter, 1, 4), take(&limiter, 2, 4));
    assert!(limiter.try_acquire(KeyspaceId(3)).is_none());
    drop(all);
}

#[tokio::test]
async fn growth_lets_queued_waiters_in_at_once() {
    let clock = Arc::new(ManualClock::new());
    // 1 core: 2 global, 2 per keyspace, all held by keyspace 1.
    let limiter = Arc::new(
        WorkerLimiter::new(&config(2.0, 1.0, 10, 10), 1).unwrap().with_clock(clock.clone()),
    );
    let held = take(&limiter, 1, 2);
    let deadline = clock.now() + HOUR;
    let spawn = |ks: u32| {
        let l = limiter.clone();
        tokio::spawn(async move { l.acquire(KeyspaceId(ks), deadline).await })
    };
    let on_global = spawn(2); // holds a ks2 permit, waits for a global one
    wait_for_waiters(&limiter, 1).await;
    let on_keyspace = spawn(1); // waits for a ks1 permit
    wait_for_waiters(&limiter, 2).await;

    // 1 core: 4 global, 3 per keyspace. The clock does not move: no deadline involved.
    limiter.update(&config(4.0, 3.0, 10, 10)).unwrap();
    let a = on_global.await.unwrap().unwrap();
    let b = on_keyspace.await.unwrap().unwrap();
    assert_eq!(limiter.waiting(), 0);
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(1))), (0, 0));
    assert_eq!(limiter.available(KeyspaceId(2)), 2);
    drop((held, a, b));
    assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(1))), (4, 3));
}

#[tokio::test]
async fn a_smaller_queue_bound_turns_new_waiters_away() {
    let clock = Arc::new(ManualClock::new());
    // 1 core: 2 global, 2 per keyspace.
    let limiter = Arc::new(
        WorkerLimiter::new(&config(1.0, 1.0, 10, 10), 1).unwrap().with_clock(clock.clone()),
    );
    let held = take(&limiter, 1, 2);
    let deadline = clock.now() + HOUR;
    let l = limiter.clone();
    let queued = tokio::spawn(async move { l.acquire(KeyspaceId(2), deadline).await });
    wait_for_waiters(&limiter, 1).await;

    limiter.update(&config(1.0, 1.0, 1, 10)).unwrap();
    assert_eq!(limiter.queue_bounds(), (1, 10));
    let err = limiter.acquire(KeyspaceId(3), deadline).await.unwrap_err();
    assert!(matches!(err, Error::ServerBusy { reason: BusyReason::QueueFull }), "{err}");
    settle().await;
    assert!(!queued.is_finished(), "the request already queued keeps its place");
    drop(held);
    let permit = queued.await.unwrap().unwrap();

    limiter.update(&config(1.0, 1.0, 10, 0)).unwrap();
    let _more = take(&limiter, 4, 1);
    let err = limiter.acquire(KeyspaceId(5), deadline).await.unwrap_err();
    assert!(matches!(err, Error::ServerBusy { reason: BusyReason::QueueFull }), "{err}");
    drop(permit);
}

#[test]
fn an_invalid_worker_limiter_update_changes_nothing() {
    let limiter = WorkerLimiter::new(&config(2.0, 1.0, 10, 5), 4).unwrap();
    let held = take(&limiter, 1, 1);
    for bad in [config(300.0, 1.0, 1, 1), config(1.0, 2.0, 1, 1), config(1.0, 0.0, 1, 1)] {
        assert!(matches!(limiter.update(&bad), Err(Error::InvalidConfig { .. })));
        assert_eq!(limiter.permits(), PermitCounts { global: 8, keyspace: 4 });
        assert_eq!(limiter.queue_bounds(), (10, 5));
        assert_eq!((limiter.available_global(), limiter.available(KeyspaceId(1))), (7, 3));
    }
    drop(held);
}

proptest! {
    /// Against a model: whatever the order of acquisitions, returns and updates, the free
    /// permits are `count - held` (never negative) globally and per keyspace, and an
    /// acquisition succeeds exactly when both have room.
    #[test]
    fn permits_follow_a_model_through_updates(ops in prop::collection::vec(
        prop_oneof![
            (0u32..3).prop_map(Op::Acquire),
            (0usize..16).prop_map(Op::Release),
            (0usize..5, 0usize..5).prop_map(|(g, k)| Op::Update(g, k)),
        ],
        0..120,
    )) {
        const FACTORS: [f64; 5] = [0.5, 1.0, 2.0, 3.0, 5.0];
        let cores = 2;
        let count = |f: f64| ((cores as f64 * f) as usize).max(2);
        let limiter = WorkerLimiter::new(&config(2.0, 1.0, 0, 0), cores).unwrap();
        let (mut global, mut keyspace) = (4usize, 2usize);
        let mut held: Vec<(u32, Permit)> = Vec::new();
        for op in ops {
            match op {
                Op::Acquire(ks) => {
                    let in_ks = held.iter().filter(|(k, _)| *k == ks).count();
                    let room = held.len() < global && in_ks < keyspace;
                    let permit = limiter.try_acquire(KeyspaceId(ks));
                    prop_assert_eq!(permit.is_some(), room, "keyspace {}", ks);
                    if let Some(p) = permit {
                        held.push((ks, p));
                    }
                }
                Op::Release(i) => {
                    if !held.is_empty() {
                        drop(held.swap_remove(i % held.len()));
                    }
                }
                Op::Update(g, k) => {
                    let (g, k) = (FACTORS[g.max(k)], FACTORS[k.min(g)]);
                    limiter.update(&config(g, k, 0, 0)).unwrap();
                    (global, keyspace) = (count(g), count(k));
                }
            }
            prop_assert_eq!(limiter.available_global(), global.saturating_sub(held.len()));
            for ks in 0..3 {
                let in_ks = held.iter().filter(|(k, _)| *k == ks).count();
                prop_assert_eq!(limiter.available(KeyspaceId(ks)), keyspace.saturating_sub(in_ks));
            }
        }
        held.clear();
        prop_assert_eq!(limiter.available_global(), global);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Acquire(u32),
    Release(usize),
    Update(usize, usize),
}

struct Setup {
    probe: Arc<ManualMemoryProbe>,
    clock: Arc<ManualClock>,
    limiter: Arc<Limiter>,
}

#[expect(clippy::unwrap_used, reason = "test helper: the snippets are valid configs")]
fn build(text: &str, used: u64) -> Setup {
    let probe = Arc::new(ManualMemoryProbe::new(used, 10 * GIB));
    let clock = Arc::new(ManualClock::new());
    let config: LimiterConfig = toml::from_str(text).unwrap();
    let limiter = Limiter::builder(config)
        .probe(probe.clone())
        .clock(clock.clone())
        .random(Arc::new(FastRandom::with_seed(7)))
        .cores(2)
        .build()
        .unwrap();
    Setup { probe, clock, limiter: Arc::new(limiter) }
}

#[test]
fn memory_capacity_follows_updates_and_held_reservations_stay() {
    let s = build("memory-upper-threshold = \"50%\"", 0);
    let l = &s.limiter;
    assert_eq!(l.memory_limiter().capacity(), 5 * GIB);
    let held = l.reserve_memory(4 * GIB).unwrap();

    let mut config = l.config();
    config.memory_upper_threshold = MemoryThreshold::Absolute(ReadableSize::gib(2));
    l.update(&config).unwrap();
    assert_eq!(l.config(), config);
    assert_eq!((l.memory_limiter().capacity(), l.memory_limiter().used()), (2 * GIB, 4 * GIB));
    match l.reserve_memory(1) {
        Err(Error::MemoryLimitExceeded { available, capacity, shortfall, .. }) => {
            assert_eq!((available, capacity, shortfall), (0, 2 * GIB, 1));
        }
        other => panic!("{other:?}"),
    }
    drop(held);
    let two = l.reserve_memory(2 * GIB).unwrap();
    assert!(l.reserve_memory(1).is_err());

    // A percentage resolves against the memory limit read at build time.
    config.memory_upper_threshold = MemoryThreshold::Percent(100.0);
    s.probe.set_limit(GIB);
    l.update(&config).unwrap();
    assert_eq!(l.memory_limiter().capacity(), 10 * GIB);
    drop(two);
}

#[tokio::test]
async fn cop_limiter_ratio_and_waits_follow_updates() {
    // 7 GiB used of 10: below the default line (8 GiB).
    let s = build("", 7 * GIB);
    let l = &s.limiter;
    l.record_response(KeyspaceId(1), 1 << 20);
    assert!(!l.cop_limiter().is_memory_high());
    drop(l.admit(KeyspaceId(1), s.clock.now() + HOUR).await.unwrap());

    let mut config = l.config();
    config.cop_limiter.high_mem_ratio = 0.6;
    config.cop_limiter.wait_min_duration = ReadableDuration::secs(1);
    config.cop_limiter.wait_max_duration = ReadableDuration::secs(2);
    l.update(&config).unwrap();
    assert_eq!(l.cop_limiter().high_mem_bytes(), 6 * GIB);
    assert_eq!(l.cop_limiter().wait_range(), (Duration::from_secs(1), Duration::from_secs(2)));
    assert!(l.cop_limiter().is_memory_high());

    // The heavy keyspace now waits, with naps drawn from the new range.
    let l2 = l.clone();
    let deadline = s.clock.now() + HOUR;
    let heavy = tokio::spawn(async move { l2.admit(KeyspaceId(1), deadline).await });
    settle().await;
    assert!(!heavy.is_finished());
    let nap = *s.clock.sleeps().last().unwrap();
    assert!((Duration::from_secs(1)..=Duration::from_secs(2)).contains(&nap), "{nap:?}");
    s.probe.set_used(5 * GIB);
    s.clock.advance(Duration::from_secs(2));
    drop(heavy.await.unwrap().unwrap());

    // Raising the line again lets a throttled request through at its next check.
    s.probe.set_used(7 * GIB);
    l.memory_monitor().refresh();
    let l2 = l.clone();
    let heavy = tokio::spawn(async move { l2.admit(KeyspaceId(1), deadline).await });
    settle().await;
    assert!(!heavy.is_finished());
    config.cop_limiter.high_mem_ratio = 0.9;
    l.update(&config).unwrap();
    s.clock.advance(Duration::from_secs(2));
    drop(heavy.await.unwrap().unwrap());
}

#[test]
fn a_shorter_sample_ttl_drops_old_samples() {
    let clock = Arc::new(ManualClock::new());
    let probe = Arc::new(ManualMemoryProbe::new(0, 1000));
    let monitor = Arc::new(MemoryMonitor::new(probe).unwrap());
    let cop =
        CopLimiter::new(&CopLimiterConfig::default(), monitor).unwrap().with_clock(clock.clone());
    cop.record_response(KeyspaceId(1), 100);
    clock.advance(Duration::from_secs(5));
    assert!(cop.is_high_throughput(KeyspaceId(1)), "within the 60 s default");
    let config = CopLimiterConfig::default().with_sample_ttl(ReadableDuration::secs(2));
    cop.update(&config).unwrap();
    assert!(!cop.is_high_throughput(KeyspaceId(1)), "older than the new 2 s ttl");
    let bad = CopLimiterConfig::default().with_high_mem_ratio(0.0);
    assert!(cop.update(&bad).is_err());
    assert_eq!(cop.high_mem_bytes(), 800, "the invalid ratio was not applied");
}

#[test]
fn an_invalid_update_changes_nothing() {
    let s = build("memory-upper-threshold = \"50%\"", 0);
    let l = &s.limiter;
    let before = l.config();
    let snapshot = |l: &Limiter| {
        (
            l.worker_limiter().permits(),
            l.worker_limiter().queue_bounds(),
            l.memory_limiter().capacity(),
            l.cop_limiter().high_mem_bytes(),
            l.cop_limiter().wait_range(),
        )
    };
    let state = snapshot(l);

    // Valid new permits and memory, but an invalid part elsewhere: nothing applies.
    let mut bad = before.clone();
    bad.worker_limiter = config(1.0, 1.0, 1, 1);
    bad.memory_upper_threshold = MemoryThreshold::Percent(10.0);
    bad.cop_limiter.wait_min_duration = ReadableDuration::secs(2);
    bad.cop_limiter.high_mem_ratio = 1.5;
    let err = l.update(&bad).unwrap_err();
    assert!(matches!(err, Error::InvalidConfig { key: "cop-limiter.high-mem-ratio", .. }));
    bad.cop_limiter.high_mem_ratio = 0.5;
    bad.memory_upper_threshold = MemoryThreshold::Percent(150.0);
    let err = l.update(&bad).unwrap_err();
    assert!(matches!(err, Error::InvalidConfig { key: "memory-upper-threshold", .. }));
    bad.memory_upper_threshold = MemoryThreshold::Percent(10.0);
    bad.worker_limiter.keyspace_concurrency_factor = 2.0;
    let err = l.update(&bad).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidConfig { key: "worker-limiter.keyspace-concurrency-factor", .. }
    ));
    assert_eq!(snapshot(l), state);
    assert_eq!(l.config(), before);

    // The same config made valid applies in full.
    bad.worker_limiter.keyspace_concurrency_factor = 1.0;
    l.update(&bad).unwrap();
    assert_eq!(l.worker_limiter().permits(), PermitCounts { global: 2, keyspace: 2 });
    assert_eq!(l.worker_limiter().queue_bounds(), (1, 1));
    assert_eq!(l.memory_limiter().capacity(), GIB);
    assert_eq!(l.cop_limiter().high_mem_bytes(), 5 * GIB);
    assert_eq!(l.cop_limiter().wait_range(), (Duration::from_secs(2), Duration::from_secs(3)));
    assert_eq!(l.config(), bad);
}
