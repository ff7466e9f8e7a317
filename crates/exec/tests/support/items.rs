//! A small synthetic table (`items`, table 400) and the executor DAGs the executor benches
//! and the allocation test run over it: TopN, Selection + Projection, Limit, LIKE.
//!
//! Columns: 1 `id` BIGINT (the handle), 2 `grp` BIGINT (`id % 97`), 3 `name` VARCHAR
//! `utf8mb4_bin` (NULL every 13th row, otherwise `item-<5 digits>-<word>`, about 16 bytes,
//! some non-ASCII), 4 `price` DECIMAL(15,2) (`id * 37 % 100000` cents), 5 `day` DATE (a day
//! of 1992–1998).
#![allow(dead_code)]

use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::row::RowEncoder;
use rcop_datum::{Decimal, Time, TimeType, key};
use rcop_exec::{KeyRange, MemStore};
use rcop_proto::tipb;
use rcop_proto::tipb::ScalarFuncSig as S;

use super::dag::*;

/// The table id of `items`.
pub const ITEMS_ID: i64 = 400;

const WORDS: [&str; 8] = ["alpha", "Beta", "gamma", "délta", "eps€", "zeta", "ETA", "théta"];

/// `name` of row `h` (`None`: NULL).
pub fn name_of(h: i64) -> Option<String> {
    (h % 13 != 0).then(|| {
        let w = WORDS[(h as usize * 5) % WORDS.len()];
        format!("item-{:05}-{w}", (h * 7919) % 100_000)
    })
}

/// `price` of row `h`, in cents.
pub fn price_of(h: i64) -> i64 {
    h * 37 % 100_000
}

/// `items` with handles `1..=rows`.
pub fn items(rows: i64) -> MemStore {
    let mut enc = RowEncoder::new();
    MemStore::from_pairs((1..=rows).map(|h| {
        let mut k = Vec::new();
        key::encode_record_key(&mut k, ITEMS_ID, h);
        enc.int(1, h).int(2, h % 97);
        match name_of(h) {
            Some(n) => enc.bytes(3, n.as_bytes()),
            None => enc.null(3),
        };
        let p = price_of(h);
        let d: Decimal = format!("{}.{:02}", p / 100, p % 100).parse().unwrap();
        enc.decimal(4, &d, 15, 2).unwrap();
        let day = 1 + (h % 2500) as u32;
        let (y, m, dd) = (1992 + day / 365, 1 + (day % 365) / 31, 1 + (day % 31).min(27));
        enc.time(5, Time::from_parts(y, m.min(12), dd, 0, 0, 0, 0, TimeType::Date, 0).unwrap());
        let mut v = Vec::new();
        enc.finish(&mut v).unwrap();
        (k, v)
    }))
}

/// The record range of `items`.
pub fn items_ranges() -> Vec<KeyRange> {
    let r = table_range(ITEMS_ID, None);
    vec![KeyRange::new(r.start.to_vec(), r.end.to_vec())]
}

pub fn int_ft() -> tipb::FieldType {
    ft(mt::LONG_LONG)
}

pub fn name_ft() -> tipb::FieldType {
    ft_str(-46)
}

pub fn price_ft() -> tipb::FieldType {
    ft_dec(15, 2)
}

pub fn day_ft() -> tipb::FieldType {
    tipb::FieldType { decimal: Some(0), ..ft(mt::DATE) }
}

/// The scan of every `items` column.
pub fn items_scan() -> tipb::Executor {
    scan(
        ITEMS_ID,
        vec![
            column_info(1, &int_ft(), true),
            column_info(2, &int_ft(), false),
            column_info(3, &name_ft(), false),
            column_info(4, &price_ft(), false),
            column_info(5, &day_ft(), false),
        ],
        false,
    )
}

/// `ORDER BY name DESC, price LIMIT limit` (NULL names last, as DESC puts them).
pub fn top_n_dag(limit: u64, chunk: bool) -> tipb::DagRequest {
    dag(
        vec![
            items_scan(),
            top_n(vec![(col(2, name_ft()), true), (col(3, price_ft()), false)], limit),
        ],
        vec![0, 1, 2, 3, 4],
        chunk,
    )
}

/// `WHERE grp < 50` then `id + grp, price * price, name, day`: a filter and arithmetic.
pub fn selection_projection_dag(chunk: bool) -> tipb::DagRequest {
    dag(
        vec![
            items_scan(),
            selection(vec![func(S::LtInt as i32, int_ft(), vec![col(1, int_ft()), int(50)])]),
            projection(vec![
                func(S::PlusInt as i32, int_ft(), vec![col(0, int_ft()), col(1, int_ft())]),
                func(
                    S::MultiplyDecimal as i32,
                    ft_dec(30, 4),
                    vec![col(3, price_ft()), col(3, price_ft())],
                ),
                col(2, name_ft()),
                col(4, day_ft()),
            ]),
        ],
        vec![0, 1, 2, 3],
        chunk,
    )
}

/// Every column of every row, no executor but the scan (the encoders' input).
pub fn scan_all_dag(chunk: bool) -> tipb::DagRequest {
    dag(vec![items_scan()], vec![0, 1, 2, 3, 4], chunk)
}

/// `LIMIT n` over the scan.
pub fn limit_dag(n: u64, chunk: bool) -> tipb::DagRequest {
    dag(vec![items_scan(), limit(n)], vec![0, 1, 2, 3, 4], chunk)
}

/// `WHERE name LIKE pattern` with a constant pattern.
pub fn like_dag(pattern: &str, chunk: bool) -> tipb::DagRequest {
    dag(
        vec![
            items_scan(),
            selection(vec![func(
                S::LikeSig as i32,
                tipb::FieldType { collate: Some(-46), ..int_ft() },
                vec![col(2, name_ft()), string(pattern, -46), int(92)],
            )]),
        ],
        vec![0, 2],
        chunk,
    )
}
