//! `Batch::ensure_compact` — the raw columns decoded straight into the logical rows, as an
//! aggregation does — gives exactly what decoding over the physical rows and then compacting
//! gives: the same values, NULLs and row count, for any subset of a batch's rows in physical
//! order, reversed or with rows repeated, with some columns decoded before, over rows of one layout (decoded column by
//! column) and of mixed layouts (row by row).

#![expect(clippy::unwrap_used, reason = "fixture builders outside #[test] fns")]

mod support;

use proptest::prelude::*;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::key;
use rcop_datum::row::RowEncoder;
use rcop_exec::{
    Batch, EvalConfig, EvalContext, ExecEnv, KeyRange, LazyCol, MemStore, build_executors,
};
use support::dag::*;

const TID: i64 = 91;

/// Row `h`: a BIGINT, a VARCHAR, a DECIMAL(15, 2), a DATE, a NULL and a DOUBLE. Every
/// `odd`-th row (when `odd > 0`) has a NULL BIGINT and no DOUBLE, another layout.
fn row(h: i64, odd: i64) -> Vec<u8> {
    let mut enc = RowEncoder::new();
    let other = odd > 0 && h % odd == 0;
    if other {
        enc.null(1);
    } else {
        enc.int(1, h * 3 - 100);
    }
    enc.bytes(2, format!("v{h}").as_bytes());
    let c = h * 101 + 7;
    let cents: rcop_datum::Decimal = format!("{}.{:02}", c / 100, c % 100).parse().unwrap();
    enc.decimal(3, &cents, 15, 2).unwrap();
    let date = format!("1995-{:02}-{:02}", 1 + h % 12, 1 + h % 28);
    enc.time(4, rcop_datum::Time::parse(&date, rcop_datum::TimeType::Date, 0).unwrap());
    enc.null(5);
    if !other {
        enc.float(6, h as f64 / 8.0);
    }
    let mut v = Vec::new();
    enc.finish(&mut v).unwrap();
    v
}

/// The batches a table scan over `n` rows returns (raw columns, every row logical).
fn batches(n: i64, odd: i64) -> Vec<Batch> {
    let store = MemStore::from_pairs((1..=n).map(|h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, h);
        (k, row(h, odd))
    }));
    let i = ft(mt::LONG_LONG);
    let cols = vec![
        column_info(-1, &i, true),
        column_info(1, &i, false),
        column_info(2, &ft(mt::VARCHAR), false),
        column_info(3, &ft_dec(15, 2), false),
        column_info(4, &ft(mt::DATE), false),
        column_info(5, &i, false),
        column_info(6, &ft(mt::DOUBLE), false),
    ];
    let dag = dag(vec![scan(TID, cols, false)], (0..7).collect(), false);
    let r = table_range(TID, None);
    let ranges = [KeyRange::new(r.start.to_vec(), r.end.to_vec())];
    let cfg = EvalConfig::default();
    let mut root = build_executors(&dag, &ranges, &cfg, 100).unwrap();
    let mut ctx = EvalContext::new(cfg);
    let mut scanner = store.scanner();
    let mut env = ExecEnv { ctx: &mut ctx, source: &mut scanner };
    let mut out = Vec::new();
    loop {
        // Small batches: the first teaches the layout, the next ones use it.
        let r = root.next_batch(64, &mut env).unwrap();
        out.push(r.batch);
        if r.drained {
            return out;
        }
    }
}

/// Every value of the columns `offsets` of a compacted batch, row by row.
fn values(b: &Batch, offsets: &[usize]) -> Vec<Vec<rcop_exec::Scalar>> {
    assert_eq!(b.logical, (0..b.len() as u32).collect::<Vec<_>>());
    assert_eq!(b.physical_len, b.len());
    offsets
        .iter()
        .map(|&o| {
            let c = b.decoded(o).unwrap();
            assert_eq!(c.len(), b.len());
            (0..c.len()).map(|i| c.scalar_at(i)).collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn decoding_the_logical_rows_equals_decoding_then_compacting(
        n in 1i64..300,
        odd in prop_oneof![Just(0i64), 2i64..40],
        keep in prop::collection::vec(any::<bool>(), 64),
        order in 0u8..3,
        got_first in any::<bool>(),
        pre in prop::collection::vec(0usize..7, 0..3),
        offsets in prop::collection::vec(0usize..7, 1..8),
    ) {
        let ctx = EvalContext::new(EvalConfig::default());
        for batch in batches(n, odd) {
            let mut batch = batch;
            // A selection's rows: a subset in physical order, reversed, or with its first
            // half repeated.
            let mut logical: Vec<u32> =
                batch.logical.iter().copied().filter(|&r| keep[r as usize % 64]).collect();
            match order {
                1 => logical.reverse(),
                2 => logical.extend_from_within(..logical.len() / 2),
                _ => {}
            }
            batch.logical = logical;
            // Columns a condition decoded already (over the physical rows).
            batch.ensure(&pre, &ctx).unwrap();
            let (mut want, mut got) = (batch.clone(), batch);
            let reference = |want: &mut Batch| {
                want.ensure(&offsets, &ctx).unwrap();
                want.compact(&offsets);
            };
            // Either one first: the scan's decoders (the learned layout) are shared.
            if got_first {
                got.ensure_compact(&offsets, &ctx).unwrap();
                reference(&mut want);
            } else {
                reference(&mut want);
                got.ensure_compact(&offsets, &ctx).unwrap();
            }
            prop_assert_eq!(got.len(), want.len());
            prop_assert_eq!(values(&got, &offsets), values(&want, &offsets));
            // The same columns left to decode (all but `offsets`, unless nothing needed
            // compacting).
            let raw = |b: &Batch| -> Vec<bool> {
                b.cols.iter().map(|c| matches!(c, LazyCol::Raw)).collect()
            };
            prop_assert_eq!(raw(&got), raw(&want));
        }
    }
}
