//! Bad input: every byte of small files flipped in turn, every truncation. Each read must
//! return an error or the correct data — never a panic, never wrong data.
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "helpers outside #[test] fns build known-good files and assert error kinds"
)]

use std::collections::BTreeMap;

use bytes::Bytes;
use rcop_sst::{
    BuilderOptions, CF_LOCK, CF_WRITE, ChecksumType, Compression, CorruptKind, Error, FileId,
    L0Builder, L0Table, NewValue, Table, TableBuilder,
};

/// key -> [(version, value)] newest first.
type Model = BTreeMap<Vec<u8>, Vec<(u64, Vec<u8>)>>;

fn model() -> Model {
    let mut m = Model::new();
    for i in 0..24u32 {
        let key = format!("key{:03}", i * 7).into_bytes();
        let mut vs = vec![(100 + u64::from(i), format!("value-{i}-latest").into_bytes())];
        if i % 3 == 0 {
            vs.push((50, format!("value-{i}-old").into_bytes()));
            vs.push((10, Vec::new()));
        }
        m.insert(key, vs);
    }
    m
}

fn build(m: &Model, compression: Compression) -> Bytes {
    let mut b = TableBuilder::new(
        FileId(9),
        BuilderOptions::default()
            .with_block_size(120)
            .with_compression(compression)
            .with_checksum(ChecksumType::Crc32c),
    );
    for (k, vs) in m {
        for (ver, val) in vs {
            b.add(k, &NewValue { meta: 0, version: *ver, user_meta: b"u", value: val }).unwrap();
        }
    }
    b.finish().unwrap()
}

fn err_names_file(e: &Error, file: FileId) {
    match e {
        Error::Corrupt { file_id, .. } => assert_eq!(*file_id, file),
        other => panic!("unexpected error kind {other:?}"),
    }
}

/// Reads everything the table offers; every successful answer must match the model.
/// Returns how many reads failed.
fn read_all(table: &Table<impl rcop_sst::BlockSource>, m: &Model) -> usize {
    let mut errors = 0;
    let file = table.meta().file_id();
    let latest: Vec<(Vec<u8>, u64, Vec<u8>)> =
        m.iter().map(|(k, vs)| (k.clone(), vs[0].0, vs[0].1.clone())).collect();

    // Forward scan: the prefix read before an error must be correct.
    let mut it = table.iter();
    let mut got = Vec::new();
    let r = (|| -> Result<(), Error> {
        it.seek_to_first()?;
        while it.valid() {
            got.push((it.key().to_vec(), it.value().version, it.value().value.to_vec()));
            it.next()?;
        }
        Ok(())
    })();
    match r {
        Ok(()) => assert_eq!(got, latest),
        Err(e) => {
            err_names_file(&e, file);
            assert_eq!(got.as_slice(), &latest[..got.len()]);
            errors += 1;
        }
    }

    // Reverse scan.
    let mut got = Vec::new();
    let r = (|| -> Result<(), Error> {
        it.seek_to_last()?;
        while it.valid() {
            got.push(it.key().to_vec());
            it.prev()?;
        }
        Ok(())
    })();
    let want: Vec<Vec<u8>> = m.keys().rev().cloned().collect();
    match r {
        Ok(()) => assert_eq!(got, want),
        Err(e) => {
            err_names_file(&e, file);
            assert_eq!(got.as_slice(), &want[..got.len()]);
            errors += 1;
        }
    }

    // Point gets at several timestamps, present and absent keys.
    for k in m.keys().cloned().chain([b"key000x".to_vec(), b"a".to_vec(), b"zzz".to_vec()]) {
        for ts in [5, 10, 60, 120, u64::MAX] {
            let want = m
                .get(&k)
                .and_then(|vs| vs.iter().find(|(v, _)| *v <= ts))
                .map(|(v, val)| (*v, val.clone()));
            match table.get(&k, ts) {
                Ok(got) => {
                    assert_eq!(got.map(|v| (v.version, v.value.to_vec())), want, "{k:?}@{ts}")
                }
                Err(e) => {
                    err_names_file(&e, file);
                    errors += 1;
                }
            }
        }
    }
    errors
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

#[test]
fn every_flipped_byte_gives_an_error_or_correct_data() {
    let m = model();
    for compression in compressions() {
        let good = build(&m, compression);
        let t = Table::open_in_memory(FileId(9), good.clone()).unwrap();
        assert!(t.meta().num_blocks(rcop_sst::Section::Data) > 3, "want several blocks");
        assert!(t.meta().num_blocks(rcop_sst::Section::Old) > 1);
        assert_eq!(read_all(&t, &m), 0);
        let mut undetected = Vec::new();
        for i in 0..good.len() {
            for flip in [0xffu8, 0x01] {
                let mut bad = good.to_vec();
                bad[i] ^= flip;
                match Table::open_in_memory(FileId(9), Bytes::from(bad)) {
                    Err(e) => err_names_file(&e, FileId(9)),
                    Ok(t) => {
                        if read_all(&t, &m) == 0 {
                            undetected.push((i, flip));
                        }
                    }
                }
            }
        }
        // CRC32C covers every section, so the only flip that reads back correct data
        // without an error is the footer's checksum type turning from CRC32C (1) to
        // "none" (0): the data is intact, just no longer verified.
        assert_eq!(undetected, vec![(good.len() - 7, 0x01)], "{compression:?}");
    }
}

#[test]
fn every_truncation_is_an_error() {
    let m = model();
    let good = build(&m, Compression::Lz4);
    for len in 0..good.len() {
        let e = Table::open_in_memory(FileId(9), good.slice(..len)).unwrap_err();
        err_names_file(&e, FileId(9));
    }
}

#[test]
fn typed_errors_name_kind_and_offset() {
    let m = model();
    let good = build(&m, Compression::Lz4);
    let n = good.len();
    // Wrong magic.
    let mut bad = good.to_vec();
    bad[n - 1] ^= 0x55;
    let e = Table::open_in_memory(FileId(9), Bytes::from(bad)).unwrap_err();
    assert_eq!(e.corrupt_kind(), Some(CorruptKind::BadMagic));
    assert!(matches!(e, Error::Corrupt { offset, .. } if offset == (n - 28) as u64));
    // Checksum mismatch in the first data block: opening works, reading it fails.
    let mut bad = good.to_vec();
    bad[10] ^= 0x01;
    let t = Table::open_in_memory(FileId(9), Bytes::from(bad)).unwrap();
    let e = t.get(b"key000", u64::MAX).unwrap_err();
    assert_eq!(e.corrupt_kind(), Some(CorruptKind::ChecksumMismatch));
    assert!(matches!(e, Error::Corrupt { offset: 0, .. }));
    // Tiny files.
    for len in [0usize, 1, 27, 28] {
        let e = Table::open_in_memory(FileId(9), Bytes::from(vec![0u8; len])).unwrap_err();
        assert!(e.corrupt_kind().is_some());
    }
}

#[test]
fn l0_flips_give_an_error_or_correct_data() {
    let m = model();
    let mut b = L0Builder::new(FileId(4), 777, BuilderOptions::default().with_block_size(100));
    for cf in [CF_WRITE, CF_LOCK] {
        for (k, vs) in &m {
            for (ver, val) in vs {
                b.add(cf, k, &NewValue { meta: 0, version: *ver, user_meta: &[], value: val })
                    .unwrap();
            }
        }
    }
    let good = b.finish().unwrap();
    for i in 0..good.len() {
        let mut bad = good.to_vec();
        bad[i] ^= 0xff;
        match L0Table::open(FileId(4), Bytes::from(bad)) {
            Err(e) => err_names_file(&e, FileId(4)),
            Ok(l0) => {
                for cf in [CF_WRITE, CF_LOCK] {
                    // A flipped CF offset can hide a CF (then nothing is returned) or
                    // must fail; whatever is returned must be right.
                    if let Some(t) = l0.cf(cf) {
                        read_all(t, &m);
                    }
                }
            }
        }
    }
    for len in 0..good.len() {
        assert!(L0Table::open(FileId(4), good.slice(..len)).is_err());
    }
}

mod random {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Arbitrary bytes never panic: they are rejected with a typed error (or, by a
        /// fantastic accident, decode).
        #[test]
        fn arbitrary_bytes_are_rejected_without_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            if let Err(e) = Table::open_in_memory(FileId(5), Bytes::from(bytes.clone())) {
                prop_assert!(e.corrupt_kind().is_some());
            }
            if let Err(e) = L0Table::open(FileId(5), Bytes::from(bytes)) {
                prop_assert!(e.corrupt_kind().is_some());
            }
        }

        /// Several random bytes overwritten at once (any value, not just flips): every read
        /// gives an error or the correct data.
        #[test]
        fn random_overwrites_give_an_error_or_correct_data(
            edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            compression in prop::sample::select(compressions()),
        ) {
            let m = model();
            let good = build(&m, compression);
            let mut bad = good.to_vec();
            for (i, v) in &edits {
                let i = i.index(bad.len());
                bad[i] = *v;
            }
            if let Ok(t) = Table::open_in_memory(FileId(9), Bytes::from(bad)) {
                read_all(&t, &m);
            }
        }
    }
}
