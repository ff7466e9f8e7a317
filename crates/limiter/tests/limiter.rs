//! The assembled `Limiter`: config, probe, clock, metrics and the order of the admission steps.

use std::sync::Arc;
use std::time::Duration;

use prometheus::Registry;
use rcop_limiter::{
    BusyReason, Clock, Error, FastRandom, KeyspaceId, Limiter, LimiterConfig, LimiterMetrics,
    MEMORY_SAMPLE_INTERVAL, ManualClock, ManualMemoryProbe,
};

const GIB: u64 = 1 << 30;

#[expect(clippy::unwrap_used, reason = "test helper: the snippets are valid TOML")]
fn build(
    text: &str,
    probe: &Arc<ManualMemoryProbe>,
    clock: &Arc<ManualClock>,
    metrics: Option<LimiterMetrics>,
) -> Result<Limiter, Error> {
    let config: LimiterConfig = toml::from_str(text).unwrap();
    let mut b = Limiter::builder(config)
        .probe(probe.clone())
        .clock(clock.clone())
        .random(Arc::new(FastRandom::with_seed(3)))
        .cores(2);
    if let Some(m) = metrics {
        b = b.metrics(m);
    }
    b.build()
}

async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[test]
fn build_rejects_invalid_config_naming_the_key() {
    let probe = Arc::new(ManualMemoryProbe::new(0, 8 * GIB));
    let clock = Arc::new(ManualClock::new());
    let err = build("[cop-limiter]\nhigh-mem-ratio = 1.5", &probe, &clock, None).unwrap_err();
    assert!(matches!(err, Error::InvalidConfig { key: "cop-limiter.high-mem-ratio", .. }), "{err}");
    let err = build("memory-upper-threshold = \"150%\"", &probe, &clock, None).unwrap_err();
    assert!(matches!(err, Error::InvalidConfig { key: "memory-upper-threshold", .. }), "{err}");
}

#[test]
fn memory_capacity_and_line_come_from_the_probe_limit() {
    let probe = Arc::new(ManualMemoryProbe::new(0, 10 * GIB));
    let clock = Arc::new(ManualClock::new());
    let l = build("memory-upper-threshold = \"50%\"", &probe, &clock, None).unwrap();
    assert_eq!(l.memory_limiter().capacity(), 5 * GIB);
    assert_eq!(l.cop_limiter().high_mem_bytes(), 8 * GIB);
    assert_eq!(l.worker_limiter().permits().global, 12);
    let held = l.reserve_memory(4 * GIB).unwrap();
    match l.reserve_memory(2 * GIB) {
        Err(Error::MemoryLimitExceeded { shortfall, .. }) => assert_eq!(shortfall, GIB),
        other => panic!("{other:?}"),
    }
    drop(held);
    assert_eq!(l.memory_limiter().used(), 0);
}

#[tokio::test]
async fn throttled_requests_wait_without_holding_permits() {
    let probe = Arc::new(ManualMemoryProbe::new(9 * GIB, 10 * GIB));
    let clock = Arc::new(ManualClock::new());
    let metrics = LimiterMetrics::register(&Registry::new()).unwrap();
    let l = Arc::new(build("", &probe, &clock, Some(metrics.clone())).unwrap());
    l.record_response(KeyspaceId(1), 1 << 20);
    l.record_response(KeyspaceId(2), 1 << 10);
    // ks2 is light: admitted at once despite the memory pressure.
    let light = l.admit(KeyspaceId(2), clock.now() + Duration::from_secs(20)).await.unwrap();
    // ks1 is heavy: it waits, holding no permit.
    let l2 = l.clone();
    let deadline = clock.now() + Duration::from_secs(20);
    let heavy = tokio::spawn(async move { l2.admit(KeyspaceId(1), deadline).await });
    settle().await;
    assert!(!heavy.is_finished());
    assert_eq!(l.worker_limiter().available_global(), 11);
    assert_eq!(l.worker_limiter().available(KeyspaceId(1)), 4);
    assert_eq!(metrics.waiting().with_label_values(&["cop_limiter"]).get(), 1);
    // Memory drops: it passes at its next check and then takes its permits.
    probe.set_used(GIB);
    clock.advance(Duration::from_secs(3));
    let permit = heavy.await.unwrap().unwrap();
    assert_eq!(l.worker_limiter().available_global(), 10);
    drop((light, permit));
    assert_eq!(l.worker_limiter().available_global(), 12);
}

#[tokio::test]
async fn heavy_keyspace_is_rejected_at_its_deadline() {
    let probe = Arc::new(ManualMemoryProbe::new(9 * GIB, 10 * GIB));
    let clock = Arc::new(ManualClock::new());
    let l = Arc::new(build("", &probe, &clock, None).unwrap());
    l.record_response(KeyspaceId(1), 1);
    let l2 = l.clone();
    let deadline = clock.now() + Duration::from_millis(500);
    let task = tokio::spawn(async move { l2.admit(KeyspaceId(1), deadline).await });
    settle().await;
    clock.advance(Duration::from_millis(500));
    let err = task.await.unwrap().unwrap_err();
    assert!(matches!(err, Error::ServerBusy { reason: BusyReason::MemoryPressure }));
    assert_eq!(err.rejection_label(), Some("memory_pressure"));
}

#[tokio::test]
async fn memory_sampler_runs_on_the_limiter_clock() {
    let probe = Arc::new(ManualMemoryProbe::new(GIB, 10 * GIB));
    let clock = Arc::new(ManualClock::new());
    let l = build("", &probe, &clock, None).unwrap();
    let sampler = l.spawn_memory_sampler();
    probe.set_used(9 * GIB);
    settle().await;
    assert!(!l.cop_limiter().is_memory_high());
    clock.advance(MEMORY_SAMPLE_INTERVAL);
    settle().await;
    assert!(l.cop_limiter().is_memory_high());
    // Stopped when the handle is dropped.
    drop(sampler);
    settle().await;
    probe.set_used(GIB);
    clock.advance(MEMORY_SAMPLE_INTERVAL * 3);
    settle().await;
    assert_eq!(l.memory_monitor().used(), 9 * GIB);
}

#[test]
fn memory_sampler_thread_needs_no_runtime() {
    let probe = Arc::new(ManualMemoryProbe::new(GIB, 10 * GIB));
    let clock = Arc::new(ManualClock::new());
    let l = build("", &probe, &clock, None).unwrap();
    let sampler = l.start_memory_sampler().unwrap();
    probe.set_used(9 * GIB);
    let start = std::time::Instant::now();
    while !l.cop_limiter().is_memory_high() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(l.cop_limiter().is_memory_high(), "sampled within {:?}", start.elapsed());
    assert_eq!(clock.elapsed(), Duration::ZERO, "real time, not the limiter's clock");
    let start = std::time::Instant::now();
    drop(sampler);
    assert!(start.elapsed() < Duration::from_secs(1), "joined in {:?}", start.elapsed());
    probe.set_used(GIB);
    std::thread::sleep(MEMORY_SAMPLE_INTERVAL * 3);
    assert_eq!(l.memory_monitor().used(), 9 * GIB, "no sample after the drop");
}

#[tokio::test]
async fn real_probe_builds() {
    let config = LimiterConfig::default();
    let l = Limiter::builder(config).build().unwrap();
    let monitor = l.memory_monitor();
    assert!(monitor.used() > 0 && monitor.limit() > monitor.used());
    assert!(!l.cop_limiter().is_memory_high(), "a test process is far below 80% of the limit");
    let _sampler = l.spawn_memory_sampler();
    let permit = l.admit(KeyspaceId(1), std::time::Instant::now() + Duration::from_secs(1)).await;
    assert!(permit.is_ok());
}
