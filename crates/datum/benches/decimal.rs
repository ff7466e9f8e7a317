//! Decimal hot paths on DECIMAL(15,2) values: add, mul, compare, write_bin, decode_bin, and
//! the fixed-point decoders (decode_bin_i128, BinI128Decoder).

#![expect(clippy::unwrap_used, reason = "benchmark inputs are known-valid decimals")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rcop_datum::Reader;
use rcop_datum::decimal::{BinI128Decoder, Decimal};

/// 1024 DECIMAL(15,2) values of both signs and varied magnitudes.
fn values() -> Vec<Decimal> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..1024)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let cents = (x % 1_000_000_000_000_000) as i64 - 500_000_000_000_000;
            let text = format!(
                "{}{}.{:02}",
                if cents < 0 { "-" } else { "" },
                cents.abs() / 100,
                cents.abs() % 100
            );
            text.parse().unwrap()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let v = values();
    let mut g = c.benchmark_group("decimal_15_2");
    g.bench_function("add", |b| {
        b.iter(|| {
            let mut acc = Decimal::zero();
            for d in &v {
                acc = acc.add(black_box(d)).value();
            }
            acc
        })
    });
    g.bench_function("mul", |b| {
        b.iter(|| {
            let mut n = 0u32;
            for w in v.windows(2) {
                n += u32::from(black_box(&w[0]).mul(black_box(&w[1])).value().frac_cnt());
            }
            n
        })
    });
    g.bench_function("cmp", |b| {
        b.iter(|| v.windows(2).filter(|w| black_box(&w[0]) < black_box(&w[1])).count())
    });
    let mut encoded = Vec::new();
    for d in &v {
        d.write_bin(15, 2, &mut encoded).unwrap();
    }
    g.bench_function("write_bin", |b| {
        let mut out = Vec::with_capacity(encoded.len());
        b.iter(|| {
            out.clear();
            for d in &v {
                black_box(d).write_bin(15, 2, &mut out).unwrap();
            }
            out.len()
        })
    });
    g.bench_function("decode_bin", |b| {
        b.iter(|| {
            let mut r = Reader::new(black_box(&encoded));
            let mut n = 0usize;
            while !r.is_empty() {
                n += usize::from(Decimal::decode_bin(&mut r).unwrap().0.frac_cnt());
            }
            n
        })
    });
    // Fixed point: every value is 9 bytes (`[15][2]` and a 7-byte body).
    let size = 2 + Decimal::bin_size(15, 2).unwrap();
    g.bench_function("decode_bin_i128", |b| {
        b.iter(|| {
            black_box(&encoded)
                .chunks_exact(size)
                .map(|v| Decimal::decode_bin_i128(v).unwrap().0)
                .fold(0i128, i128::wrapping_add)
        })
    });
    g.bench_function("bin_i128_decoder", |b| {
        let dec = BinI128Decoder::new(15, 2).unwrap();
        b.iter(|| {
            black_box(&encoded)
                .chunks_exact(size)
                .map(|v| dec.decode(v).unwrap())
                .fold(0i128, i128::wrapping_add)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
