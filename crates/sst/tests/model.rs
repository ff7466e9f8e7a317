//! Writer then reader against a `BTreeMap` model: seeks, both directions, old versions at
//! random read timestamps, point gets, properties, L0 files.
#![expect(
    clippy::unwrap_used,
    reason = "helpers outside #[test] fns unwrap known-good builds and reads"
)]

use std::collections::BTreeMap;

use bytes::Bytes;
use proptest::prelude::*;
use rcop_sst::{
    BIT_DELETE, BuilderOptions, CF_EXTRA, CF_LOCK, CF_WRITE, ChecksumType, Compression, FileId,
    L0Builder, L0Table, NewValue, Table, TableBuilder,
};

#[derive(Debug, Clone, PartialEq, Eq)]
struct Ver {
    meta: u8,
    version: u64,
    user_meta: Vec<u8>,
    value: Vec<u8>,
}

/// key -> versions, newest first.
type Model = BTreeMap<Vec<u8>, Vec<Ver>>;

fn model_strategy() -> impl Strategy<Value = Model> {
    let key = prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c', 0u8, 0xff]), 0..10);
    let ver = (
        any::<bool>(),
        prop::collection::vec(any::<u8>(), 0..3),
        prop::collection::vec(any::<u8>(), 0..120),
    );
    let versions = prop::collection::btree_map(1u64..60, ver, 1..5).prop_map(|m| {
        m.into_iter()
            .rev()
            .map(|(version, (del, user_meta, value))| Ver {
                meta: if del { BIT_DELETE } else { 0 },
                version,
                user_meta,
                value,
            })
            .collect::<Vec<_>>()
    });
    prop::collection::btree_map(key, versions, 0..80)
}

/// The block compressions this build writes and reads (Zstd only with the `zstd` feature).
fn compressions() -> Vec<Compression> {
    vec![
        Compression::None,
        Compression::Lz4,
        #[cfg(feature = "zstd")]
        Compression::Zstd,
    ]
}

fn options_strategy() -> impl Strategy<Value = BuilderOptions> {
    (
        prop::sample::select(compressions()),
        prop::sample::select(vec![ChecksumType::Crc32c, ChecksumType::None, ChecksumType::Crc32]),
        32usize..2048,
    )
        .prop_map(|(compression, checksum, block_size)| {
            BuilderOptions::default()
                .with_block_size(block_size)
                .with_compression(compression)
                .with_checksum(checksum)
        })
}

fn build(model: &Model, opts: BuilderOptions) -> Bytes {
    let mut b = TableBuilder::new(FileId(77), opts);
    for (k, vs) in model {
        for v in vs {
            b.add(
                k,
                &NewValue {
                    meta: v.meta,
                    version: v.version,
                    user_meta: &v.user_meta,
                    value: &v.value,
                },
            )
            .unwrap();
        }
    }
    b.finish().unwrap()
}

fn visible(model: &Model, key: &[u8], ts: u64) -> Option<Ver> {
    model.get(key)?.iter().find(|v| v.version <= ts).cloned()
}

fn check_table(
    table: &Table<impl rcop_sst::BlockSource>,
    model: &Model,
    probes: &[Vec<u8>],
    ts_probes: &[u64],
) {
    // Forward scan.
    let mut it = table.iter();
    it.seek_to_first().unwrap();
    let mut got = Vec::new();
    while it.valid() {
        let v = it.value();
        got.push((
            it.key().to_vec(),
            v.version,
            v.value.to_vec(),
            v.user_meta.to_vec(),
            v.meta & BIT_DELETE,
        ));
        it.next().unwrap();
    }
    let want: Vec<_> = model
        .iter()
        .map(|(k, vs)| {
            (k.clone(), vs[0].version, vs[0].value.clone(), vs[0].user_meta.clone(), vs[0].meta)
        })
        .collect();
    assert_eq!(got, want);

    // Reverse scan.
    it.seek_to_last().unwrap();
    let mut rev = Vec::new();
    while it.valid() {
        rev.push(it.key().to_vec());
        it.prev().unwrap();
    }
    let want_rev: Vec<_> = model.keys().rev().cloned().collect();
    assert_eq!(rev, want_rev);

    // Seeks in both directions, then a step each way.
    for p in probes {
        it.seek(p).unwrap();
        let want = model.range(p.clone()..).next().map(|(k, _)| k.clone());
        assert_eq!(it.valid().then(|| it.key().to_vec()), want, "seek {p:?}");
        if it.valid() {
            it.prev().unwrap();
            let want_prev = model.range(..p.clone()).next_back().map(|(k, _)| k.clone());
            assert_eq!(it.valid().then(|| it.key().to_vec()), want_prev, "prev after seek {p:?}");
        }
        it.seek_for_prev(p).unwrap();
        let want = model.range(..=p.clone()).next_back().map(|(k, _)| k.clone());
        assert_eq!(it.valid().then(|| it.key().to_vec()), want, "seek_for_prev {p:?}");
        if it.valid() {
            it.next().unwrap();
            let want_next = model
                .range((std::ops::Bound::Excluded(p.clone()), std::ops::Bound::Unbounded))
                .next()
                .map(|(k, _)| k.clone());
            assert_eq!(
                it.valid().then(|| it.key().to_vec()),
                want_next,
                "next after seek_for_prev {p:?}"
            );
        }
    }

    // Point gets and old versions at read timestamps.
    let keys: Vec<Vec<u8>> = model.keys().cloned().chain(probes.iter().cloned()).collect();
    for k in &keys {
        for &ts in ts_probes {
            let got = table.get(k, ts).unwrap().map(|v| Ver {
                meta: v.meta & BIT_DELETE,
                version: v.version,
                user_meta: v.user_meta.to_vec(),
                value: v.value.to_vec(),
            });
            assert_eq!(got, visible(model, k, ts), "get {k:?} @ {ts}");
            it.seek(k).unwrap();
            if it.valid() && it.key() == k.as_slice() {
                let via_iter = it.value_at(ts).unwrap().map(|v| v.version);
                assert_eq!(via_iter, visible(model, k, ts).map(|v| v.version));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn table_matches_model(
        model in model_strategy(),
        opts in options_strategy(),
        probes in prop::collection::vec(prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c', b'd', 0u8, 0xff]), 0..11), 0..20),
        ts_probes in prop::collection::vec(0u64..70, 1..6),
    ) {
        let bytes = build(&model, opts);
        let table = Table::open_in_memory(FileId(77), bytes).unwrap();
        let p = table.meta().properties();
        prop_assert_eq!(p.entries, model.len() as u64);
        prop_assert_eq!(p.old_entries, model.values().map(|v| v.len() as u64 - 1).sum::<u64>());
        prop_assert_eq!(p.max_ts, model.values().flatten().map(|v| v.version).max().unwrap_or(0));
        prop_assert_eq!(p.smallest.as_ref(), model.keys().next().map_or(&[][..], |k| k.as_slice()));
        prop_assert_eq!(p.biggest.as_ref(), model.keys().next_back().map_or(&[][..], |k| k.as_slice()));
        prop_assert_eq!(p.tombs, model.values().filter(|v| v[0].value.is_empty()).count() as u64);
        check_table(&table, &model, &probes, &ts_probes);
    }

    #[test]
    fn l0_file_matches_models(
        write in model_strategy(),
        lock in model_strategy(),
        snap_version in any::<u64>(),
    ) {
        let mut b = L0Builder::new(FileId(5), snap_version, BuilderOptions::default().with_block_size(256));
        for (cf, m) in [(CF_WRITE, &write), (CF_LOCK, &lock)] {
            for (k, vs) in m {
                for v in vs {
                    b.add(cf, k, &NewValue { meta: v.meta, version: v.version, user_meta: &v.user_meta, value: &v.value }).unwrap();
                }
            }
        }
        let l0 = L0Table::open(FileId(5), b.finish().unwrap()).unwrap();
        prop_assert_eq!(l0.snap_version(), snap_version);
        prop_assert!(l0.cf(CF_EXTRA).is_none());
        for (cf, m) in [(CF_WRITE, &write), (CF_LOCK, &lock)] {
            match l0.cf(cf) {
                None => prop_assert!(m.is_empty()),
                Some(t) => {
                    prop_assert_eq!(t.meta().footer().compression, Compression::None);
                    check_table(t, m, &[b"b".to_vec()], &[0, 30, 100]);
                }
            }
        }
    }
}

#[test]
fn builder_rejects_out_of_order_input() {
    let v = |version| NewValue { meta: 0, version, user_meta: &[], value: b"x" };
    let mut b = TableBuilder::new(FileId(1), BuilderOptions::default());
    b.add(b"b", &v(5)).unwrap();
    assert!(b.add(b"a", &v(5)).is_err());
    assert!(b.add(b"b", &v(5)).is_err());
    assert!(b.add(b"b", &v(6)).is_err());
    b.add(b"b", &v(4)).unwrap();
    let long = vec![0u8; 70_000];
    assert!(b.add(&long, &v(1)).is_err());
    let um = [0u8; 256];
    assert!(b.add(b"c", &NewValue { meta: 0, version: 1, user_meta: &um, value: b"" }).is_err());
    // The builder is still usable after rejected input.
    b.add(b"c", &v(1)).unwrap();
    let t = Table::open_in_memory(FileId(1), b.finish().unwrap()).unwrap();
    assert_eq!(t.meta().properties().entries, 2);
    assert_eq!(t.get(b"b", 4).unwrap().unwrap().version, 4);
}

#[test]
fn empty_table_reads_as_empty() {
    let bytes = TableBuilder::new(FileId(3), BuilderOptions::default()).finish().unwrap();
    let t = Table::open_in_memory(FileId(3), bytes).unwrap();
    assert!(t.meta().is_empty());
    let mut it = t.iter();
    it.seek_to_first().unwrap();
    assert!(!it.valid());
    it.seek_to_last().unwrap();
    assert!(!it.valid());
    assert_eq!(t.get(b"", u64::MAX).unwrap(), None);
}

#[test]
fn per_level_compression_follows_upstream() {
    assert_eq!(BuilderOptions::for_level(0).compression, Compression::None);
    assert_eq!(BuilderOptions::for_level(1).compression, Compression::Lz4);
    // Upstream's Zstd levels fall back to LZ4 in a build without zstd, so defaults build.
    let deep = if cfg!(feature = "zstd") { Compression::Zstd } else { Compression::Lz4 };
    assert_eq!(BuilderOptions::for_level(2).compression, deep);
    assert_eq!(BuilderOptions::for_level(3).compression, deep);
    assert_eq!(BuilderOptions::default().block_size, 64 << 10);
    assert_eq!(BuilderOptions::default().max_table_size, 16 << 20);
}

#[test]
fn range_blocks_size_sums_the_overlapping_blocks() {
    let mut b = TableBuilder::new(FileId(2), BuilderOptions::default().with_block_size(256));
    for i in 0..500u32 {
        let v = NewValue { meta: 0, version: 1, user_meta: &[], value: &[7; 40] };
        b.add(format!("k{i:04}").as_bytes(), &v).unwrap();
    }
    let t = Table::open_in_memory(FileId(2), b.finish().unwrap()).unwrap();
    let meta = t.meta();
    let n = meta.num_blocks(rcop_sst::Section::Data);
    let all: u64 =
        (0..n).map(|i| u64::from(meta.block_handle(rcop_sst::Section::Data, i).len)).sum();
    assert_eq!(all, u64::from(meta.footer().old_data_offset));
    assert_eq!(meta.range_blocks_size(b"", b""), all);
    assert_eq!(
        meta.range_blocks_size(b"k9", b""),
        u64::from(meta.block_handle(rcop_sst::Section::Data, n - 1).len)
    );
    assert_eq!(meta.range_blocks_size(b"a", b"b"), 0);
    // A range inside one block costs that block.
    let one = meta.blocks_for_range(rcop_sst::Section::Data, b"k0100", b"k0101");
    assert_eq!(one.len(), 1);
    assert_eq!(
        meta.range_blocks_size(b"k0100", b"k0101"),
        u64::from(meta.block_handle(rcop_sst::Section::Data, one.start).len)
    );
}
