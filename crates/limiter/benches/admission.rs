//! The limiter's per-request costs: the uncontended admission path (memory below the line,
//! permits free) and recording a response-size sample. Both should stay under 1 µs.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use rcop_limiter::{KeyspaceId, Limiter, LimiterConfig, ManualMemoryProbe};

/// Polls a future that is expected to complete without waiting.
fn ready<F: Future>(fut: F) -> Option<F::Output> {
    match pin!(fut).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => Some(v),
        Poll::Pending => None,
    }
}

fn limiter() -> Option<Limiter> {
    // 1 GiB used of 8 GiB: far below the line.
    Limiter::builder(LimiterConfig::default())
        .probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .build()
        .ok()
}

fn bench(c: &mut Criterion) {
    let Some(limiter) = limiter() else { return };
    let deadline = Instant::now() + Duration::from_secs(3600);
    for ks in 0..64 {
        limiter.record_response(KeyspaceId(ks), 1000 + u64::from(ks));
    }

    c.bench_function("admit_uncontended", |b| {
        let mut ks = 0u32;
        b.iter(|| {
            ks = (ks + 1) % 64;
            let permit = ready(limiter.admit(black_box(KeyspaceId(ks)), deadline));
            black_box(permit.is_some_and(|p| p.is_ok()))
        })
    });

    c.bench_function("record_response", |b| {
        let mut ks = 0u32;
        b.iter(|| {
            ks = (ks + 1) % 64;
            limiter.record_response(black_box(KeyspaceId(ks)), black_box(4096));
        })
    });

    // With a 1 µs ttl nearly every insert also evicts: the steady state of a full window.
    let mut config = LimiterConfig::default();
    config.cop_limiter.sample_ttl = rcop_limiter::ReadableDuration(Duration::from_micros(1));
    let evicting = Limiter::builder(config)
        .probe(Arc::new(ManualMemoryProbe::new(1 << 30, 8 << 30)))
        .cores(2)
        .build();
    if let Ok(evicting) = evicting {
        c.bench_function("record_response_evicting", |b| {
            let mut ks = 0u32;
            b.iter(|| {
                ks = (ks + 1) % 64;
                evicting.record_response(black_box(KeyspaceId(ks)), black_box(4096));
            })
        });
    }

    let memory = limiter.memory_limiter();
    c.bench_function("reserve_memory", |b| {
        b.iter(|| black_box(memory.try_reserve(black_box(64 << 10)).is_ok()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
