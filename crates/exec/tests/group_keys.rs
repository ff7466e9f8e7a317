//! A hash aggregation grouping on string columns the scan still holds raw reads its keys
//! straight from the rows (`RawRows::string_cells`); this checks the groups against a model
//! of MySQL's: NULL apart from '', trailing spaces ignored under PAD SPACE collations and
//! kept under binary, case folded under `_ci`, each group's values the first row's. Rows of
//! other layouts, rows without the column (its default, NULL), keys too long to pack and
//! collations with no byte key all send a batch back to decoding partway through, after
//! some groups were found from the rows.

#![expect(clippy::unwrap_used, reason = "fixture builders outside #[test] fns")]

mod support;

use proptest::prelude::*;
use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::RowEncoder;
use rcop_datum::{Datum, key};
use rcop_exec::{Engine, MemStore};
use rcop_proto::tipb;
use support::dag::*;

const TID: i64 = 93;

/// The string values a cell takes: NULL, '', padded and case variants, and a value long
/// enough that two of them do not pack into one word.
const VALUES: [Option<&str>; 9] = [
    None,
    Some(""),
    Some("a"),
    Some("a "),
    Some("a  "),
    Some("A"),
    Some("b"),
    Some("ab "),
    Some("abcdefghij"),
];

/// One row: its two string cells (index into [`VALUES`]; `None` leaves the column out of
/// the row), and an integer the selection filters on.
type Row = (Option<usize>, Option<usize>, i64);

fn store(rows: &[Row]) -> MemStore {
    MemStore::from_pairs(rows.iter().enumerate().map(|(h, &(a, b, n))| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, TID, h as i64 + 1);
        let mut enc = RowEncoder::new();
        for (id, cell) in [(1, a), (2, b)] {
            match cell.map(|i| VALUES[i % VALUES.len()]) {
                Some(Some(s)) => enc.bytes(id, s.as_bytes()),
                Some(None) => enc.null(id),
                None => &mut enc,
            };
        }
        enc.int(3, n);
        let mut v = Vec::new();
        enc.finish(&mut v).unwrap();
        (k, v)
    }))
}

/// The collations a key column takes: binary, utf8mb4_bin (PAD SPACE), utf8mb4_general_ci.
const COLLATIONS: [i32; 3] = [63, -46, -45];

/// A row's two key values (`None`: NULL).
type Key = Vec<Option<Vec<u8>>>;

/// What a value compares as under `collate`.
fn collated(v: &Option<Vec<u8>>, collate: i32) -> Option<Vec<u8>> {
    let mut s = v.clone()?;
    if collate != 63 {
        while s.last() == Some(&b' ') {
            s.pop();
        }
    }
    if collate == -45 {
        s.make_ascii_lowercase();
    }
    Some(s)
}

/// The groups of the rows with `n >= min`, in the order first met: count and key values.
fn model(rows: &[Row], colls: [i32; 2], min: i64) -> Vec<Vec<Datum>> {
    let cell = |c: Option<usize>| -> Option<Vec<u8>> {
        c.and_then(|i| VALUES[i % VALUES.len()]).map(|s| s.as_bytes().to_vec())
    };
    // Each group's collated key, count and first row's values.
    let mut groups: Vec<(Key, u64, Key)> = Vec::new();
    for &(a, b, _) in rows.iter().filter(|r| r.2 >= min) {
        let values = vec![cell(a), cell(b)];
        let k: Vec<_> = values.iter().zip(colls).map(|(v, c)| collated(v, c)).collect();
        match groups.iter_mut().find(|g| g.0 == k) {
            Some(g) => g.1 += 1,
            None => groups.push((k, 1, values)),
        }
    }
    let datum = |v: Option<Vec<u8>>| v.map_or(Datum::Null, Datum::Bytes);
    groups
        .into_iter()
        .map(|(_, count, values)| {
            let mut row = vec![Datum::Uint(count)];
            row.extend(values.into_iter().map(datum));
            row
        })
        .collect()
}

fn run(rows: &[Row], colls: [i32; 2], min: Option<i64>) -> Vec<Vec<Datum>> {
    let int = ft(mt::LONG_LONG);
    let (sa, sb) = (ft_str(colls[0]), ft_str(colls[1]));
    let infos =
        vec![column_info(1, &sa, false), column_info(2, &sb, false), column_info(3, &int, false)];
    let mut executors = vec![scan(TID, infos, false)];
    if let Some(min) = min {
        // GEInt: `c3 >= min`.
        executors.push(selection(vec![func(
            130,
            int.clone(),
            vec![col(2, int.clone()), support::dag::int(min)],
        )]));
    }
    let count = agg(tipb::ExprType::Count as i32, int.clone(), vec![support::dag::int(1)]);
    executors.push(aggregation(vec![col(0, sa), col(1, sb)], vec![count]));
    let d = dag(executors, vec![0, 1, 2], false);
    let resp = Engine::default()
        .handle(&request(&d, vec![table_range(TID, None)]), &mut store(rows).scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    assert_eq!(sel.error, None);
    default_rows(&sel, 3)
}

fn rows() -> impl Strategy<Value = Vec<Row>> {
    let cell = prop_oneof![8 => (0..VALUES.len()).prop_map(Some), 1 => Just(None)];
    prop::collection::vec((cell.clone(), cell, 0i64..100), 0..3000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn groups_read_from_the_rows_are_the_models(
        rows in rows(),
        colls in (0..COLLATIONS.len(), 0..COLLATIONS.len()),
        min in prop::option::of(0i64..100),
    ) {
        let colls = [COLLATIONS[colls.0], COLLATIONS[colls.1]];
        prop_assert_eq!(run(&rows, colls, min), model(&rows, colls, min.unwrap_or(0)));
    }
}

/// Every row holds both columns and every key packs: each batch is grouped from the rows.
#[test]
fn short_keys_of_one_layout_are_the_models() {
    // At most two bytes a value: two of them pack into a word under any collation.
    let short = [0, 1, 2, 3, 5, 6];
    let pick = |i: usize| Some(short[i % short.len()]);
    let rows: Vec<Row> = (0..5000).map(|i| (pick(i), pick(i / 6), i as i64 % 100)).collect();
    for colls in [[63, 63], [-46, -46], [63, -46]] {
        for min in [None, Some(30)] {
            assert_eq!(run(&rows, colls, min), model(&rows, colls, min.unwrap_or(0)));
        }
    }
}
