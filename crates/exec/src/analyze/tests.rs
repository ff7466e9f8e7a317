//! Analyze tests: every statistic recomputed directly from the rows of the test.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use proptest::prelude::*;
use prost::Message;
use rcop_datum::row::RowEncoder;
use rcop_datum::{Datum, Mode, key};
use rcop_proto::{REQ_TYPE_ANALYZE, coprocessor, tipb};

use super::hash::murmur3_x64_128;
use super::sketch::{CmSketch, FmSketch, Histogram};
use super::*;
use crate::collation::Collation;
use crate::limits::{Abort, CappedBudget};
use crate::scan::MemStore;
use crate::{Engine, EngineConfig};

const TABLE: i64 = 10;
const ROWS: i64 = 3000;

/// c1 BIGINT: `h % 37`, NULL when `h % 11 == 0`; c2 VARCHAR utf8mb4_general_ci: `ab{h % 5}`
/// with the case of the letters varying (`h % 3`).
fn c1(h: i64) -> Option<i64> {
    (h % 11 != 0).then_some(h % 37)
}
fn c2(h: i64) -> String {
    let s = ["ab", "AB", "aB"][(h % 3) as usize];
    format!("{s}{}", h % 5)
}

fn table() -> MemStore {
    MemStore::from_pairs((1..=ROWS).map(|h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TABLE, h);
        let mut v = Vec::new();
        let mut enc = RowEncoder::new();
        match c1(h) {
            Some(x) => enc.int(1, x),
            None => enc.null(1),
        };
        enc.bytes(2, c2(h).as_bytes()).finish(&mut v).unwrap();
        (k, v)
    }))
}

fn table_range() -> Vec<KeyRange> {
    let (mut s, mut e) = (Vec::new(), Vec::new());
    key::encode_record_prefix(&mut s, TABLE);
    key::encode_record_prefix(&mut e, TABLE + 1);
    vec![KeyRange::new(s, e)]
}

fn columns() -> Vec<tipb::ColumnInfo> {
    vec![
        tipb::ColumnInfo {
            column_id: Some(100),
            tp: Some(8),
            pk_handle: Some(true),
            flag: Some(3),
            ..Default::default()
        },
        tipb::ColumnInfo { column_id: Some(1), tp: Some(8), ..Default::default() },
        tipb::ColumnInfo {
            column_id: Some(2),
            tp: Some(15),
            collation: Some(-45),
            ..Default::default()
        },
    ]
}

/// The response datums, written here by hand: INT flag + big-endian with the sign flipped;
/// compact bytes with a one-byte zigzag length (all test strings are short).
fn int_datum(x: i64) -> Vec<u8> {
    let mut v = vec![3];
    v.extend_from_slice(&((x as u64) ^ (1 << 63)).to_be_bytes());
    v
}
fn str_datum(s: &str) -> Vec<u8> {
    let mut v = vec![2, (2 * s.len()) as u8];
    v.extend_from_slice(s.as_bytes());
    v
}
fn row_datums(h: i64) -> Vec<Vec<u8>> {
    vec![int_datum(h), c1(h).map_or(vec![0], int_datum), str_datum(&c2(h))]
}
fn general_ci_key(s: &str) -> Vec<u8> {
    let mut k = Vec::new();
    Collation::GeneralCi.sort_key(s.as_bytes(), &mut k);
    k
}

/// What an FM sketch of `max_size` must hold after seeing `hashes` (any order, repeats):
/// the smallest mask `2^k - 1` under which at most `max_size` distinct hashes have their
/// low `k` bits zero, and those hashes.
fn fm_model(hashes: impl IntoIterator<Item = u64>, max_size: usize) -> (u64, Vec<u64>) {
    let distinct: BTreeSet<u64> = hashes.into_iter().collect();
    let mut mask = 0u64;
    loop {
        let kept: Vec<u64> = distinct.iter().copied().filter(|h| h & mask == 0).collect();
        if kept.len() <= max_size || mask == u64::MAX {
            return (mask, kept);
        }
        mask = (mask << 1) | 1;
    }
}

fn col_req(sample_size: i64, groups: Vec<Vec<i64>>) -> tipb::AnalyzeColumnsReq {
    tipb::AnalyzeColumnsReq {
        sample_size: Some(sample_size),
        sketch_size: Some(100),
        columns_info: columns(),
        column_groups: groups
            .into_iter()
            .map(|o| tipb::AnalyzeColumnGroup { column_offsets: o, prefix_lengths: vec![] })
            .collect(),
        version: Some(2),
        ..Default::default()
    }
}

fn full_sampling_req(col: tipb::AnalyzeColumnsReq) -> tipb::AnalyzeReq {
    tipb::AnalyzeReq {
        tp: Some(tipb::AnalyzeType::TypeFullSampling as i32),
        col_req: Some(col),
        ..Default::default()
    }
}

fn run(
    req: &tipb::AnalyzeReq,
    store: &MemStore,
    ranges: &[KeyRange],
    seed: u64,
) -> Result<Vec<u8>> {
    analyze(req, ranges, &mut store.scanner(), &ExecLimits::default(), seed)
}

fn row_collector(bytes: &[u8]) -> tipb::RowSampleCollector {
    tipb::AnalyzeColumnsResp::decode(bytes).unwrap().row_collector.unwrap()
}

#[test]
fn fm_sketch_keeps_exactly_the_hashes_of_its_mask_and_estimates_ndv() {
    // (A sketch widens its mask once per insert, so the model is exact unless one widening
    // leaves more than `max_size` hashes — likely only for tiny sizes, checked below.)
    for (n, max) in [(10u64, 100usize), (5000, 100), (100_000, 1000)] {
        let mut s = FmSketch::new(max);
        let mut hashes = Vec::new();
        for i in 0..n {
            let v = int_datum((i % 50_000) as i64 * 7);
            s.insert(&v);
            s.insert(&v);
            hashes.push(murmur3_x64_128(&v).0);
        }
        let (mask, kept) = fm_model(hashes, max);
        let p = s.to_proto();
        assert_eq!((p.mask, p.hashset), (Some(mask), kept), "n {n} max {max}");
        if n == 100_000 {
            let ndv = s.ndv() as f64;
            assert!((ndv / 50_000.0 - 1.0).abs() < 0.1, "ndv estimate {ndv} for 50000");
        }
    }
    // TiKV's own case: at 3 hashes over a size of 2, the odd one goes and the mask is 1.
    let mut s = FmSketch::new(2);
    for h in [1, 2, 4] {
        s.insert_hash(h);
    }
    assert_eq!(s.to_proto(), tipb::FmSketch { mask: Some(1), hashset: vec![2, 4] });
    let mut zero = FmSketch::new(0);
    for i in 0..100 {
        zero.insert(&int_datum(i));
    }
    assert!(zero.to_proto().hashset.len() <= 1);
}

#[test]
fn cm_sketch_never_undercounts_and_counts_every_insert() {
    let mut c = CmSketch::new(5, 64).unwrap();
    let mut truth: HashMap<Vec<u8>, u32> = HashMap::new();
    for i in 0..5000i64 {
        let v = int_datum((i * i) % 301);
        c.insert(&v);
        *truth.entry(v).or_default() += 1;
    }
    assert_eq!(c.count(), 5000);
    for (v, n) in &truth {
        assert!(c.query_min(v) >= *n);
    }
    let (v, n) = truth.iter().max_by_key(|(_, n)| **n).unwrap();
    c.sub(v, *n);
    assert_eq!(c.count(), 5000 - n);
    assert!(CmSketch::new(0, 10).is_none() && CmSketch::new(3, 0).is_none());
}

/// TiKV's histogram test trace, bucket by bucket.
#[test]
fn histogram_follows_tikvs_merge_trace() {
    let d = |x| int_datum(x);
    let mut h = Histogram::new(3);
    for x in 0..3 {
        h.append(&d(x), false);
    }
    let bounds = |h: &Histogram| {
        h.clone()
            .into_proto()
            .buckets
            .iter()
            .map(|b| {
                (
                    b.lower_bound.clone().unwrap(),
                    b.upper_bound.clone().unwrap(),
                    b.count.unwrap(),
                    b.repeats.unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(bounds(&h).len(), 3);
    h.append(&d(3), false); // merged: [0,1] [2,3]
    assert_eq!(bounds(&h), [(d(0).into(), d(1).into(), 2, 1), (d(2).into(), d(3).into(), 4, 1)]);
    for _ in 0..3 {
        h.append(&d(3), false); // [2,3,3,3,3]
    }
    for _ in 0..4 {
        h.append(&d(4), false); // new bucket [4,4,4,4]
    }
    h.append(&d(5), false); // merged: [0..3] [4] then 5 → [0..3], [4,5]? limit 4
    let b = bounds(&h);
    assert_eq!(b[0], (d(0).into(), d(3).into(), 7, 4));
    assert_eq!(b.last().unwrap().1, bytes::Bytes::from(d(5)));
    assert_eq!(h.clone().into_proto().ndv, Some(6));
}

proptest! {
    /// Over random sorted multisets: counts are cumulative and end at the total, bounds
    /// partition the values (no value in two buckets), repeats count the upper bound,
    /// bucket NDVs sum to the NDV, and there are at most `buckets` buckets. (From 2 buckets:
    /// with one, TiKV's merge keeps only the first bucket and can drop a second one that a
    /// repeated value forced open — kept as TiKV has it.)
    #[test]
    fn histogram_buckets_partition_the_values(mut xs in prop::collection::vec(0i64..60, 0..400), buckets in 2usize..12) {
        xs.sort_unstable();
        let mut h = Histogram::new(buckets);
        for &x in &xs {
            h.append(&int_datum(x), true);
        }
        let p = h.into_proto();
        let mut counts: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
        for &x in &xs {
            *counts.entry(int_datum(x)).or_default() += 1;
        }
        prop_assert_eq!(p.ndv, Some(counts.len() as i64));
        prop_assert!(p.buckets.len() <= buckets);
        let (mut prev, mut ndv_sum) = (0i64, 0i64);
        let mut prev_upper: Option<Vec<u8>> = None;
        for b in &p.buckets {
            let (lo, up) = (b.lower_bound.clone().unwrap().to_vec(), b.upper_bound.clone().unwrap().to_vec());
            prop_assert!(lo <= up);
            if let Some(pu) = &prev_upper { prop_assert!(pu < &lo); }
            let inside: i64 = counts.range(lo.clone()..=up.clone()).map(|(_, n)| n).sum();
            prop_assert_eq!(b.count.unwrap() - prev, inside);
            prop_assert_eq!(b.repeats.unwrap(), counts[&up]);
            prop_assert_eq!(b.ndv.unwrap(), counts.range(lo..=up.clone()).count() as i64);
            ndv_sum += b.ndv.unwrap();
            prev = b.count.unwrap();
            prev_upper = Some(up);
        }
        prop_assert_eq!(prev, xs.len() as i64);
        prop_assert_eq!(ndv_sum, counts.len() as i64);
    }
}

#[test]
fn full_sampling_counts_sizes_sketches_and_samples_are_those_of_the_rows() {
    let store = table();
    let req = full_sampling_req(col_req(200, vec![vec![1, 2], vec![2]]));
    let rc = row_collector(&run(&req, &store, &table_range(), 42).unwrap());
    assert_eq!(rc.count, Some(ROWS));

    // Exactly `sample_size` samples, distinct rows of the table, weights in [0, i64::MAX).
    assert_eq!(rc.samples.len(), 200);
    let all: HashMap<Vec<Vec<u8>>, i64> = (1..=ROWS).map(|h| (row_datums(h), h)).collect();
    let mut seen = BTreeSet::new();
    for s in &rc.samples {
        let row: Vec<Vec<u8>> = s.row.iter().map(|b| b.to_vec()).collect();
        let h = all.get(&row).expect("a sample that is a row of the table");
        assert!(seen.insert(*h));
        assert!(s.weight.unwrap() >= 0);
    }

    // Per column, then per group: nulls, sizes (datum bytes without the flag), FM sketches
    // (string columns by their collation key, groups by the hash of the concatenation).
    let nulls = (1..=ROWS).filter(|h| c1(*h).is_none()).count() as i64;
    let size = |f: &dyn Fn(i64) -> Option<Vec<u8>>| -> i64 {
        (1..=ROWS).filter_map(f).map(|v| v.len() as i64 - 1).sum()
    };
    let s0 = size(&|h| Some(int_datum(h)));
    let s1 = size(&|h| c1(h).map(int_datum));
    let s2 = size(&|h| Some(str_datum(&c2(h))));
    assert_eq!(rc.null_counts, [0, nulls, 0, 0, 0]);
    assert_eq!(rc.total_size, [s0, s1, s2, s1 + s2, s2]);
    let fm = |hashes: Vec<u64>| {
        let (mask, kept) = fm_model(hashes, 100);
        tipb::FmSketch { mask: Some(mask), hashset: kept }
    };
    let h0 = fm((1..=ROWS).map(|h| murmur3_x64_128(&int_datum(h)).0).collect());
    let h1 = fm((1..=ROWS).filter_map(c1).map(|x| murmur3_x64_128(&int_datum(x)).0).collect());
    let h2 = fm((1..=ROWS).map(|h| murmur3_x64_128(&general_ci_key(&c2(h))).0).collect());
    let g12 = fm((1..=ROWS)
        .map(|h| {
            let mut cat = c1(h).map_or(vec![0], int_datum);
            cat.extend(general_ci_key(&c2(h)));
            murmur3_x64_128(&cat).0
        })
        .collect());
    assert_eq!(rc.fm_sketch, [h0, h1, h2.clone(), g12, h2]);
    // The case-insensitive collation folds "ab", "AB" and "aB": 5 distinct values.
    assert_eq!(rc.fm_sketch[2].hashset.len(), 5);
}

#[test]
fn reservoir_sampling_is_uniform_over_seeds() {
    // 100 rows, 20 samples, 1000 seeds: every row is expected 200 times.
    let store = MemStore::from_pairs((1..=100i64).map(|h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TABLE, h);
        let mut v = Vec::new();
        RowEncoder::new().int(1, h).finish(&mut v).unwrap();
        (k, v)
    }));
    let mut col = col_req(20, vec![]);
    col.columns_info.truncate(2);
    let req = full_sampling_req(col);
    let mut freq: HashMap<Vec<u8>, u32> = HashMap::new();
    for seed in 0..1000 {
        let rc = row_collector(&run(&req, &store, &table_range(), seed).unwrap());
        assert_eq!(rc.samples.len(), 20);
        for s in rc.samples {
            *freq.entry(s.row[1].to_vec()).or_default() += 1;
        }
    }
    assert_eq!(freq.len(), 100);
    for (v, n) in freq {
        assert!((140..=260).contains(&n), "row {v:?} sampled {n} times, expected about 200");
    }
}

#[test]
fn bernoulli_sampling_keeps_about_the_rate() {
    let store = table();
    let mut col = col_req(0, vec![]);
    col.sample_rate = Some(0.1);
    let rc = row_collector(&run(&full_sampling_req(col), &store, &table_range(), 7).unwrap());
    assert_eq!(rc.count, Some(ROWS));
    // Binomial(3000, 0.1): mean 300, sd ≈ 16.4.
    assert!((230..=370).contains(&rc.samples.len()), "{} samples", rc.samples.len());
    assert!(rc.samples.iter().all(|s| s.weight.is_none() && s.row.len() == 3));
}

/// Index (a, b) of table 10, index 1, over `n` entries; `a` is skewed so the TopN is clear.
fn index_store(n: i64) -> (MemStore, Vec<KeyRange>, Vec<Vec<u8>>) {
    let mut values = Vec::new();
    let pairs: Vec<_> = (0..n)
        .map(|i| {
            let a = if i % 3 == 0 {
                5
            } else if i % 5 == 0 {
                9
            } else {
                i % 97
            };
            let mut vals = Vec::new();
            Datum::Int(a).encode(Mode::Key, &mut vals).unwrap();
            Datum::Bytes(format!("b{}", i % 4).into_bytes()).encode(Mode::Key, &mut vals).unwrap();
            values.push(vals.clone());
            Datum::Int(i).encode(Mode::Key, &mut vals).unwrap(); // the handle
            let mut k = Vec::new();
            key::encode_index_key(&mut k, TABLE, 1, &vals);
            (k, vec![b'0'])
        })
        .collect();
    let (mut s, mut e) = (Vec::new(), Vec::new());
    key::encode_index_prefix(&mut s, TABLE, 1);
    key::encode_index_prefix(&mut e, TABLE, 2);
    values.sort();
    (MemStore::from_pairs(pairs), vec![KeyRange::new(s, e)], values)
}

fn index_req(version: i32, top_n: i32) -> tipb::AnalyzeReq {
    tipb::AnalyzeReq {
        tp: Some(tipb::AnalyzeType::TypeIndex as i32),
        idx_req: Some(tipb::AnalyzeIndexReq {
            bucket_size: Some(16),
            num_columns: Some(2),
            cmsketch_depth: Some(5),
            cmsketch_width: Some(256),
            sketch_size: Some(64),
            top_n_size: Some(top_n),
            version: Some(version),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn index_analyze_answers_the_statistics_of_the_sorted_values() {
    let (store, ranges, values) = index_store(2000);
    let mut freq: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    for v in &values {
        *freq.entry(v.clone()).or_default() += 1;
    }
    let resp =
        tipb::AnalyzeIndexResp::decode(&run(&index_req(2, 3), &store, &ranges, 0).unwrap()[..])
            .unwrap();
    let hist = resp.hist.unwrap();
    assert_eq!(hist.ndv, Some(freq.len() as i64));
    assert!(hist.buckets.len() <= 16);
    assert_eq!(hist.buckets.last().unwrap().count, Some(2000));
    assert_eq!(hist.buckets.first().unwrap().lower_bound.as_deref(), Some(&values[0][..]));
    assert_eq!(hist.buckets.last().unwrap().upper_bound.as_deref(), values.last().map(|v| &v[..]));

    // The TopN: the three most frequent (value, count) pairs exactly.
    let mut by_count: Vec<(u64, Vec<u8>)> = freq.iter().map(|(v, n)| (*n, v.clone())).collect();
    by_count.sort_by(|a, b| b.cmp(a));
    let cms = resp.cms.unwrap();
    let mut top: Vec<(u64, Vec<u8>)> =
        cms.top_n.iter().map(|t| (t.count.unwrap(), t.data.clone().unwrap().to_vec())).collect();
    top.sort_by(|a, b| b.cmp(a));
    assert_eq!(top, by_count[..3]);
    // Every counter row counts each prefix insert (2 per key) less the TopN's.
    let top_total: u64 = top.iter().map(|t| t.0).sum();
    for row in &cms.rows {
        assert_eq!(row.counters.len(), 256);
        assert_eq!(row.counters.iter().map(|&c| u64::from(c)).sum::<u64>(), 4000 - top_total);
    }
    let fm = resp.collector.unwrap().fm_sketch.unwrap();
    let (mask, kept) = fm_model(values.iter().map(|v| murmur3_x64_128(v).0), 64);
    assert_eq!((fm.mask, fm.hashset), (Some(mask), kept));

    // Version 1: no TopN, bucket NDVs 0.
    let v1 =
        tipb::AnalyzeIndexResp::decode(&run(&index_req(1, 3), &store, &ranges, 0).unwrap()[..])
            .unwrap();
    assert!(v1.cms.unwrap().top_n.is_empty());
    assert!(v1.hist.unwrap().buckets.iter().all(|b| b.ndv == Some(0)));
}

#[test]
fn common_handle_analyze_reads_the_record_keys() {
    let pairs: Vec<_> = (0..500i64)
        .map(|i| {
            let mut h = Vec::new();
            Datum::Bytes(format!("k{:03}", i % 50).into_bytes()).encode(Mode::Key, &mut h).unwrap();
            Datum::Int(i).encode(Mode::Key, &mut h).unwrap();
            let mut k = Vec::new();
            key::encode_common_handle_record_key(&mut k, TABLE, &h);
            (k, vec![0x80])
        })
        .collect();
    let store = MemStore::from_pairs(pairs);
    let mut req = index_req(2, 0);
    req.tp = Some(tipb::AnalyzeType::TypeCommonHandle as i32);
    if let Some(i) = req.idx_req.as_mut() {
        i.num_columns = Some(1);
    }
    let resp =
        tipb::AnalyzeIndexResp::decode(&run(&req, &store, &table_range(), 0).unwrap()[..]).unwrap();
    let hist = resp.hist.unwrap();
    assert_eq!(hist.ndv, Some(50));
    assert_eq!(hist.buckets.last().unwrap().count, Some(500));
    assert!(hist.buckets.iter().all(|b| b.repeats == Some(10)));
}

#[test]
fn column_v1_collectors_and_the_handle_histogram() {
    let store = table();
    let mut col = col_req(50, vec![]);
    col.bucket_size = Some(8);
    col.cmsketch_depth = Some(4);
    col.cmsketch_width = Some(128);
    let req = tipb::AnalyzeReq {
        tp: Some(tipb::AnalyzeType::TypeColumn as i32),
        col_req: Some(col),
        ..Default::default()
    };
    let resp = tipb::AnalyzeColumnsResp::decode(&run(&req, &store, &table_range(), 3).unwrap()[..])
        .unwrap();
    let pk = resp.pk_hist.unwrap();
    assert_eq!(pk.ndv, Some(ROWS));
    assert_eq!(pk.buckets.last().unwrap().count, Some(ROWS));
    assert_eq!(resp.collectors.len(), 2);
    let nulls = (1..=ROWS).filter(|h| c1(*h).is_none()).count() as i64;
    let c = &resp.collectors[0];
    assert_eq!((c.null_count, c.count), (Some(nulls), Some(ROWS - nulls)));
    assert_eq!(c.samples.len(), 50);
    // Ints are sampled as TiDB's value encoding (VAR_INT), the string by its collation key.
    assert!(c.samples.iter().all(|s| s[0] == 8));
    let s = &resp.collectors[1];
    assert!(s.samples.iter().all(|v| v[0] == 2));
    assert_eq!(s.fm_sketch.as_ref().unwrap().hashset.len(), 5);
    assert_eq!(s.cm_sketch.as_ref().unwrap().rows.len(), 4);
}

fn engine_req(req: &tipb::AnalyzeReq) -> coprocessor::Request {
    coprocessor::Request {
        tp: REQ_TYPE_ANALYZE,
        data: req.encode_to_vec().into(),
        ranges: table_range()
            .into_iter()
            .map(|r| coprocessor::KeyRange { start: r.start.into(), end: r.end.into() })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes() {
    let store = table();
    let req = engine_req(&full_sampling_req(col_req(100, vec![vec![1, 2]])));
    let e = Engine::new(EngineConfig::default().with_analyze_seed(9));
    let a = e.handle(&req, &mut store.scanner());
    let b = e.handle(&req, &mut store.scanner());
    assert!(a.other_error.is_empty(), "{}", a.other_error);
    assert_eq!(a.encode_to_vec(), b.encode_to_vec());
    let c = Engine::new(EngineConfig::default().with_analyze_seed(10))
        .handle(&req, &mut store.scanner());
    assert_ne!(a.data, c.data);
    // Without a seed every request draws its own.
    let d = Engine::default().handle(&req, &mut store.scanner());
    let f = Engine::default().handle(&req, &mut store.scanner());
    assert_ne!(d.data, f.data);
}

#[test]
fn hostile_requests_get_typed_errors() {
    let store = table();
    let ranges = table_range();
    let err = |req: &tipb::AnalyzeReq| run(req, &store, &ranges, 1).unwrap_err();
    let big = |col: tipb::AnalyzeColumnsReq| full_sampling_req(col);
    assert!(matches!(
        err(&big(col_req(i64::MAX, vec![]))),
        Error::TooLarge { what: "sample_size", .. }
    ));
    assert!(matches!(err(&big(col_req(-1, vec![]))), Error::InvalidRequest(_)));
    let mut c = col_req(10, vec![]);
    c.sketch_size = Some(1 << 40);
    assert!(matches!(err(&big(c)), Error::TooLarge { what: "sketch_size", .. }));
    let mut c = col_req(0, vec![]);
    c.sample_rate = Some(f64::NAN);
    assert!(matches!(err(&big(c)), Error::InvalidRequest(_)));
    assert!(matches!(err(&big(col_req(10, vec![vec![0, 7]]))), Error::InvalidRequest(_)));
    assert!(matches!(err(&big(col_req(10, vec![vec![-1]]))), Error::InvalidRequest(_)));
    let mut c = col_req(10, vec![]);
    c.columns_info.clear();
    assert!(matches!(err(&big(c)), Error::InvalidRequest(_)));
    let mut c = col_req(10, vec![]);
    c.columns_info[2].collation = Some(-999);
    assert!(matches!(err(&big(c)), Error::Unsupported { .. }));

    let no_sub =
        |tp: tipb::AnalyzeType| tipb::AnalyzeReq { tp: Some(tp as i32), ..Default::default() };
    for tp in [
        tipb::AnalyzeType::TypeIndex,
        tipb::AnalyzeType::TypeCommonHandle,
        tipb::AnalyzeType::TypeColumn,
        tipb::AnalyzeType::TypeMixed,
        tipb::AnalyzeType::TypeFullSampling,
    ] {
        assert!(matches!(err(&no_sub(tp)), Error::InvalidRequest(_)), "{tp:?}");
    }
    assert!(matches!(err(&no_sub(tipb::AnalyzeType::TypeSampleIndex)), Error::Unsupported { .. }));
    assert!(matches!(
        err(&tipb::AnalyzeReq { tp: Some(77), ..Default::default() }),
        Error::InvalidRequest(_)
    ));

    let idx = |f: &dyn Fn(&mut tipb::AnalyzeIndexReq)| {
        let mut r = index_req(2, 3);
        if let Some(i) = r.idx_req.as_mut() {
            f(i);
        }
        r
    };
    let (istore, iranges, _) = index_store(50);
    let ierr = |r: &tipb::AnalyzeReq| run(r, &istore, &iranges, 1).unwrap_err();
    assert!(matches!(ierr(&idx(&|i| i.cmsketch_depth = Some(1 << 20))), Error::TooLarge { .. }));
    assert!(matches!(ierr(&idx(&|i| i.cmsketch_width = Some(-5))), Error::InvalidRequest(_)));
    assert!(matches!(ierr(&idx(&|i| i.bucket_size = Some(1 << 40))), Error::TooLarge { .. }));
    assert!(matches!(ierr(&idx(&|i| i.top_n_size = Some(i32::MAX))), Error::TooLarge { .. }));
    assert!(matches!(ierr(&idx(&|i| i.num_columns = Some(-1))), Error::InvalidRequest(_)));
    // More columns than the keys hold.
    assert!(matches!(
        ierr(&idx(&|i| i.num_columns = Some(4))),
        Error::InvalidRequest(_) | Error::Corrupt(_)
    ));
    // Index analyze over record keys: not index keys.
    assert!(matches!(run(&index_req(2, 3), &store, &ranges, 1).unwrap_err(), Error::Corrupt(_)));

    // Through the engine: an `other_error`, never a panic.
    let resp = Engine::default().handle(
        &coprocessor::Request {
            tp: REQ_TYPE_ANALYZE,
            data: vec![0xff, 0x01, 0x02].into(),
            ..Default::default()
        },
        &mut store.scanner(),
    );
    assert!(resp.other_error.contains("AnalyzeReq"), "{}", resp.other_error);
}

#[test]
fn samples_are_accounted_against_the_budget() {
    let store = table();
    let req = engine_req(&full_sampling_req(col_req(MAX_SAMPLE_SIZE, vec![])));
    let budget = Arc::new(CappedBudget::new(64 << 10));
    let limits = ExecLimits::default().with_memory(budget.clone());
    let e = Engine::new(EngineConfig::default().with_analyze_seed(1));
    let got = e.handle_limited(&req, &mut store.scanner(), &limits);
    assert!(matches!(got, Err(Abort::OverBudget { .. })), "{got:?}");
    assert_eq!(budget.used(), 0);
    // Under a large budget the same request completes, and its peak shows the samples.
    let budget = Arc::new(CappedBudget::new(1 << 30));
    let limits = ExecLimits::default().with_memory(budget.clone());
    let ok = e.handle_limited(&req, &mut store.scanner(), &limits).unwrap();
    assert_eq!(row_collector(&ok.data).samples.len(), ROWS as usize);
    assert!(budget.peak() > ROWS as usize * 3 * 8);
    assert_eq!(budget.used(), 0);
    // A count-min sketch is accounted before it is allocated.
    let (istore, iranges, _) = index_store(10);
    let mut ireq = index_req(2, 3);
    if let Some(i) = ireq.idx_req.as_mut() {
        i.cmsketch_depth = Some(1 << 10);
        i.cmsketch_width = Some(1 << 12);
    }
    let small = ExecLimits::default().with_memory(Arc::new(CappedBudget::new(1 << 20)));
    let e = analyze(&ireq, &iranges, &mut istore.scanner(), &small, 0);
    assert!(matches!(e, Err(Error::Aborted(Abort::OverBudget { .. }))), "{e:?}");

    let flag = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let cancelled = ExecLimits::default().with_cancel_flag(flag);
    assert!(matches!(e_handle(&req, &store, &cancelled), Err(Abort::Cancelled)));
}

fn e_handle(
    req: &coprocessor::Request,
    store: &MemStore,
    limits: &ExecLimits,
) -> std::result::Result<coprocessor::Response, Abort> {
    Engine::default().handle_limited(req, &mut store.scanner(), limits)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Random analyze requests (arbitrary sizes, types, groups, rates) and random bytes:
    /// an answer or a typed error, never a panic.
    #[test]
    fn random_requests_never_panic(
        tp in -1i32..7,
        sample_size in prop_oneof![Just(0i64), 0i64..50, any::<i64>()],
        sketch in prop_oneof![0i64..20, any::<i64>()],
        rate in prop_oneof![Just(0.5f64), any::<f64>()],
        groups in prop::collection::vec(prop::collection::vec(-2i64..5, 0..4), 0..3),
        depth in prop_oneof![0i32..4, any::<i32>()],
        width in prop_oneof![0i32..64, any::<i32>()],
        buckets in prop_oneof![0i64..8, any::<i64>()],
        num_columns in -1i32..4,
        garbage in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let store = table();
        let (istore, iranges, _) = index_store(40);
        let mut col = col_req(sample_size, groups);
        col.sketch_size = Some(sketch);
        col.sample_rate = Some(rate);
        col.cmsketch_depth = Some(depth);
        col.cmsketch_width = Some(width);
        col.bucket_size = Some(buckets);
        let idx = tipb::AnalyzeIndexReq {
            bucket_size: Some(buckets), num_columns: Some(num_columns), cmsketch_depth: Some(depth),
            cmsketch_width: Some(width), sketch_size: Some(sketch), top_n_size: Some(depth), version: Some(2),
            ..Default::default()
        };
        let req = tipb::AnalyzeReq { tp: Some(tp), col_req: Some(col), idx_req: Some(idx), ..Default::default() };
        let budget = ExecLimits::default().with_memory(Arc::new(CappedBudget::new(64 << 20)));
        let _ = analyze(&req, &table_range(), &mut store.scanner(), &budget, 5);
        let _ = analyze(&req, &iranges, &mut istore.scanner(), &budget, 5);
        let raw = coprocessor::Request { tp: REQ_TYPE_ANALYZE, data: garbage.into(), ..Default::default() };
        let _ = Engine::default().handle(&raw, &mut store.scanner());
    }
}
