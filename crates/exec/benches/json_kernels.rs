//! JSON kernels over one 1024-row batch of small documents: `JSON_EXTRACT(doc, '$.b[1]')`,
//! `JSON_UNQUOTE` of a JSON string's text, `JSON_OBJECT('k', doc, 'n', doc)` and
//! `CAST(text AS JSON)` (parsing), against a baseline measured in the same run (a plain copy
//! of the JSON column). Throughput is rows.

#![expect(clippy::expect_used, reason = "benchmark fixtures are known-valid")]

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rcop_datum::Json;
use rcop_datum::chunk::mysql_type as mt;
use rcop_exec::{
    Batch, BytesT, Elem, EvalConfig, EvalContext, EvalType, FieldType, Scalar, VecCol,
};
use rcop_proto::tipb::ScalarFuncSig as S;
use support::dag::*;

const ROWS: usize = 1024;

/// `{"a": n, "b": [n, "wörd n", true], "c": {"d": null}}` with varying n, as text.
fn texts() -> Vec<String> {
    let mut x: u64 = 7;
    (0..ROWS)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let n = x >> 40;
            format!(r#"{{"a": {n}, "b": [{n}.5, "wörd {n}", true], "c": {{"d": null}}}}"#)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let j = ft(mt::JSON);
    let s = ft_str(-46);
    let texts = texts();
    let mut docs = VecCol::new(EvalType::Json, ROWS);
    let mut text_col = VecCol::new(EvalType::Bytes, ROWS);
    let mut quoted = VecCol::new(EvalType::Bytes, ROWS);
    for t in &texts {
        docs.push_scalar(&Scalar::Json(Json::parse(t).expect("json")));
        BytesT::push(&mut text_col, Some(t.as_bytes()));
        let q = format!("\"{}\"", &t[..t.len().min(20)].replace('"', "\\\""));
        BytesT::push(&mut quoted, Some(q.as_bytes()));
    }
    let schema: Vec<FieldType> =
        [&j, &s, &s].iter().map(|f| FieldType::from_proto(Some(f))).collect();
    let batch = Batch::from_cols(vec![docs, text_col, quoted]);
    let cfg = EvalConfig::default();
    let build = |e| rcop_exec::build_expr(&e, &schema, &cfg, 100).expect("build");
    // TiDB's ParseToJSONFlag on CAST(string AS JSON).
    let parse_ft = rcop_proto::tipb::FieldType { flag: Some(1 << 18), ..j.clone() };
    let exprs = [
        ("baseline_column_copy", build(col(0, j.clone()))),
        (
            "json_extract",
            build(func(
                S::JsonExtractSig as i32,
                j.clone(),
                vec![col(0, j.clone()), string("$.b[1]", -46)],
            )),
        ),
        ("json_unquote", build(func(S::JsonUnquoteSig as i32, s.clone(), vec![col(2, s.clone())]))),
        (
            "json_object",
            build(func(
                S::JsonObjectSig as i32,
                j.clone(),
                vec![string("k", -46), col(0, j.clone()), string("n", -46), col(0, j.clone())],
            )),
        ),
        ("cast_string_as_json", build(func(S::CastStringAsJson as i32, parse_ft, vec![col(1, s)]))),
    ];
    let mut g = c.benchmark_group("json_kernels");
    g.throughput(Throughput::Elements(ROWS as u64));
    for (name, node) in &exprs {
        g.bench_function(*name, |b| {
            b.iter(|| {
                let mut ctx = EvalContext::default();
                rcop_exec::eval_expr(node, &batch, &mut ctx).expect("eval").into_col(node.et, ROWS)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
