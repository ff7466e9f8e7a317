//! String kernels over one 1024-row batch of short mixed ASCII / UTF-8 strings: `UPPER`,
//! `SUBSTRING(s, 2, 5)`, `LIKE '%ab%'`, `LOWER`, `TRIM`, `CHAR_LENGTH`, `LEFT(s, 4)`,
//! `LOCATE('ta', s)`, `REPLACE(s, 'a', 'AA')`, `LPAD(s, 20, '*')` and `CONCAT(s, '-', t)`,
//! against a baseline measured
//! in the same run (a plain copy of the string column); `s IN (64 strings)` hashed against
//! the same list compared item by item. Throughput is rows.

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_datum::chunk::mysql_type as mt;
use rcop_exec::{Batch, BytesT, Elem, EvalConfig, EvalContext, EvalType, FieldType, VecCol};
use rcop_proto::tipb::ScalarFuncSig as S;
use support::dag::*;

const ROWS: usize = 1024;

fn strings(seed: u64) -> VecCol {
    let words = ["alpha", "Beta", "gamma ñu", "délta", "epsilon€", "zeta", "ETA", "théta ab"];
    let mut c = VecCol::new(EvalType::Bytes, ROWS);
    let mut x = seed;
    for _ in 0..ROWS {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let w = words[(x >> 33) as usize % words.len()];
        let v = format!("{w} {}", x % 1000);
        BytesT::push(&mut c, Some(v.as_bytes()));
    }
    c
}

fn bench(c: &mut Criterion) {
    let s = ft_str(-46);
    let schema: Vec<FieldType> = [&s, &s].iter().map(|f| FieldType::from_proto(Some(f))).collect();
    let batch = Batch::from_cols(vec![strings(1), strings(2)]);
    let cfg = EvalConfig::default();
    let build = |e| rcop_exec::build_expr(&e, &schema, &cfg, 100).expect("build");
    let exprs = [
        ("baseline_column_copy", build(col(0, s.clone()))),
        ("upper_utf8", build(func(S::UpperUtf8 as i32, s.clone(), vec![col(0, s.clone())]))),
        (
            "substring_utf8_2_5",
            build(func(
                S::Substring3ArgsUtf8 as i32,
                s.clone(),
                vec![col(0, s.clone()), int(2), int(5)],
            )),
        ),
        (
            "like_contains",
            build(func(4310, tipb_int(-46), vec![col(0, s.clone()), string("%ab%", -46), int(92)])),
        ),
        ("lower_utf8", build(func(S::LowerUtf8 as i32, s.clone(), vec![col(0, s.clone())]))),
        ("trim", build(func(S::Trim1Arg as i32, s.clone(), vec![col(0, s.clone())]))),
        (
            "char_length_utf8",
            build(func(S::CharLengthUtf8 as i32, ft(mt::LONG_LONG), vec![col(0, s.clone())])),
        ),
        (
            "left_utf8_4",
            build(func(S::LeftUtf8 as i32, s.clone(), vec![col(0, s.clone()), int(4)])),
        ),
        (
            "locate_utf8",
            build(func(
                S::Locate2ArgsUtf8 as i32,
                ft(mt::LONG_LONG),
                vec![string("ta", -46), col(0, s.clone())],
            )),
        ),
        (
            "replace",
            build(func(
                S::Replace as i32,
                s.clone(),
                vec![col(0, s.clone()), string("a", -46), string("AA", -46)],
            )),
        ),
        (
            "lpad_20",
            build(func(
                S::Lpad as i32,
                s.clone(),
                vec![col(0, s.clone()), int(20), string("*", -46)],
            )),
        ),
        (
            "concat_3",
            build(func(
                S::Concat as i32,
                s.clone(),
                vec![col(0, s.clone()), string("-", -46), col(1, s.clone())],
            )),
        ),
    ];
    let mut g = c.benchmark_group("string_kernels");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, node) in &exprs {
        g.bench_function(*name, |b| {
            b.iter(|| {
                let mut ctx = EvalContext::default();
                rcop_exec::eval_expr(node, &batch, &mut ctx).expect("eval").into_col(node.et, ROWS)
            })
        });
    }
    // LIKE with three `%` runs over 1024 texts of about 600 bytes that almost match
    // (`ab` and `cd` recur, `ef` never comes): the backtracking walk retries from every `a`.
    let long_text: Vec<u8> = b"ab-cd-".iter().copied().cycle().take(600).collect();
    let mut long = VecCol::new(EvalType::Bytes, ROWS);
    (0..ROWS).for_each(|_| BytesT::push(&mut long, Some(&long_text)));
    let long_batch = Batch::from_cols(vec![long]);
    let like_runs = build(func(
        4310,
        tipb_int(-46),
        vec![col(0, s.clone()), string("%ab%cd%ef%", -46), int(92)],
    ));
    g.bench_function("like_runs_600b", |b| {
        b.iter(|| {
            let mut ctx = EvalContext::default();
            rcop_exec::eval_expr(&like_runs, &long_batch, &mut ctx)
                .expect("eval")
                .into_col(like_runs.et, ROWS)
        })
    });
    // `s IN (64 strings)`: the constant list hashed once (the engine's path for a constant
    // list) against the same items as columns, compared one by one (its path for any other
    // list), in the same run.
    let items: Vec<String> = (0..64).map(|i| format!("alpha {}", i * 15)).collect();
    let mut in_schema = vec![FieldType::from_proto(Some(&s))];
    let mut cols = vec![strings(1)];
    let mut as_consts = vec![col(0, s.clone())];
    let mut as_cols = vec![col(0, s.clone())];
    for (k, it) in items.iter().enumerate() {
        as_consts.push(string(it, -46));
        as_cols.push(col(k as i64 + 1, s.clone()));
        in_schema.push(FieldType::from_proto(Some(&s)));
        let mut c = VecCol::new(EvalType::Bytes, ROWS);
        (0..ROWS).for_each(|_| BytesT::push(&mut c, Some(it.as_bytes())));
        cols.push(c);
    }
    let in_batch = Batch::from_cols(cols);
    let build_in = |e| rcop_exec::build_expr(&e, &in_schema, &cfg, 100).expect("build");
    for (name, node) in [
        ("in_64_consts_hashed", build_in(func(4004, tipb_int(-46), as_consts))),
        ("in_64_item_by_item", build_in(func(4004, tipb_int(-46), as_cols))),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut ctx = EvalContext::default();
                rcop_exec::eval_expr(&node, &in_batch, &mut ctx)
                    .expect("eval")
                    .into_col(node.et, ROWS)
            })
        });
    }
    g.finish();
}

fn tipb_int(collate: i32) -> rcop_proto::tipb::FieldType {
    rcop_proto::tipb::FieldType { collate: Some(collate), ..ft(mt::LONG_LONG) }
}

criterion_group!(benches, bench);
criterion_main!(benches);
