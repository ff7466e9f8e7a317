//! Scalar functions against the MariaDB oracle: every row of `testdata/functions/*.toml` runs
//! through the engine three ways — its arguments as columns of a one-row scan, as constants,
//! and among all the file's other rows in one batch (the vectorised kernels, NULLs mixed in) —
//! and must give what `tools/fn-oracle.py` recorded in the `.expected` file beside it, or the
//! MySQL 8 answer a row carries where MariaDB differs. See `testdata/functions/README.md`.

#![expect(clippy::unwrap_used, clippy::panic, reason = "oracle runner helpers outside #[test] fns")]

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use prost::Message;
use rcop_datum::chunk::mysql_type as mt;
use rcop_datum::{Datum, Duration, Time, codec, key};
use rcop_exec::{Engine, FLAG_OVERFLOW_AS_WARNING, FLAG_TRUNCATE_AS_WARNING};
use rcop_proto::{coprocessor, tipb};
use serde::Deserialize;
use support::corpus::{self, TableSpec, build_table};
use support::dag::{column_info, dag, default_rows, projection, request, scan, table_range};

/// TiDB's flags for a SELECT: truncation and overflow are warnings, zero dates are allowed
/// (`InSelectStmt` 1 << 5, `IgnoreZeroInDate` 1 << 7).
const SELECT_FLAGS: u64 = FLAG_TRUNCATE_AS_WARNING | FLAG_OVERFLOW_AS_WARNING | 1 << 5 | 1 << 7;
/// MySQL 8's default sql_mode as TiDB sends it: STRICT_TRANS_TABLES, NO_ZERO_IN_DATE,
/// NO_ZERO_DATE, ERROR_FOR_DIVISION_BY_ZERO, NO_ENGINE_SUBSTITUTION.
const SQL_MODE: u64 = 1 << 21 | 1 << 23 | 1 << 24 | 1 << 26 | 1 << 30;

#[derive(Debug, Deserialize)]
struct File {
    #[serde(default, rename = "fn")]
    fns: Vec<Fn>,
}

#[derive(Debug, Deserialize)]
struct Fn {
    sig: String,
    #[expect(dead_code, reason = "read by the oracle script")]
    sql: String,
    args: Vec<String>,
    ret: String,
    cases: Vec<Vec<String>>,
    #[serde(default)]
    mysql: Vec<Override>,
    /// Rows where TiKV (which the engine follows) answers differently from MySQL 8.
    #[serde(default)]
    tikv: Vec<Override>,
    #[serde(default)]
    flags: Option<u64>,
    #[serde(default)]
    sql_mode: Option<u64>,
    /// Arguments always passed as constants (an interval unit); the oracle writes them into
    /// the SQL as they are.
    #[serde(default)]
    literal: Vec<usize>,
    /// Compare whether a warning was raised (default true).
    #[serde(default = "yes")]
    warnings: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
struct Override {
    case: usize,
    kind: String,
    #[serde(default)]
    value: String,
    #[serde(default)]
    warnings: Option<u32>,
    #[expect(dead_code, reason = "documentation in the case file")]
    why: String,
}

#[derive(Debug, Clone, PartialEq)]
struct Expected {
    kind: String,
    value: String,
    warnings: u32,
}

/// What the engine answered for one row.
#[derive(Debug, Clone, PartialEq)]
enum Got {
    Null,
    Value(Datum),
    Error(String),
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/functions")
}

fn load_expected(path: &Path) -> HashMap<(usize, usize), Expected> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (run tools/fn-oracle.py)", path.display()));
    let mut out = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 6, "bad expected line {line:?}");
        out.insert(
            (f[0].parse().unwrap(), f[2].parse().unwrap()),
            Expected {
                kind: f[3].to_string(),
                value: f[4].to_string(),
                warnings: f[5].parse().unwrap(),
            },
        );
    }
    out
}

/// A column type with its options (`unsigned`, `not_null`, `collate=ID`, `charset=NAME`,
/// `flag=BITS`).
fn field_type(spec: &str) -> tipb::FieldType {
    let mut parts = spec.split_whitespace();
    let mut ft = corpus::parse_type(parts.next().unwrap());
    for opt in parts {
        match opt.split_once('=') {
            None if opt == "unsigned" => ft.flag = Some(ft.flag.unwrap_or(0) | 32),
            None if opt == "not_null" => ft.flag = Some(ft.flag.unwrap_or(0) | 1),
            Some(("collate", id)) => ft.collate = Some(id.parse().unwrap()),
            // The charset TiDB names beside the collation (`gbk` for gbk_bin).
            Some(("charset", name)) => ft.charset = Some(name.to_owned()),
            // Extra `FieldType.flag` bits (TiDB's `ParseToJSONFlag`, `IsBooleanFlag`).
            Some(("flag", bits)) => {
                ft.flag = Some(ft.flag.unwrap_or(0) | bits.parse::<u32>().unwrap())
            }
            _ => panic!("unknown type option {opt}"),
        }
    }
    ft
}

/// A constant expression of `d`, typed `ft`.
fn constant(d: &Datum, ft: &tipb::FieldType) -> tipb::Expr {
    let mut val = Vec::new();
    let tp = match d {
        Datum::Null => 0,
        Datum::Int(v) => {
            codec::encode_i64(&mut val, *v);
            1
        }
        Datum::Uint(v) => {
            codec::encode_u64(&mut val, *v);
            2
        }
        Datum::Float(v) => {
            codec::encode_f64(&mut val, *v);
            4
        }
        Datum::Bytes(b) => {
            val.extend_from_slice(b);
            6
        }
        Datum::Decimal(x) => {
            let (p, f) = x.prec_and_frac();
            let _ = x.write_bin(p, f, &mut val).unwrap();
            102
        }
        Datum::Time(t) => {
            codec::encode_u64(&mut val, t.to_packed_u64());
            107
        }
        Datum::Duration(x) => {
            codec::encode_i64(&mut val, x.nanos());
            103
        }
        Datum::Json(b) => {
            val.extend_from_slice(b);
            108
        }
        other => panic!("no constant for {other:?}"),
    };
    tipb::Expr {
        tp: Some(tp),
        val: Some(val.into()),
        field_type: Some(ft.clone()),
        ..Default::default()
    }
}

fn call(f: &Fn, args: Vec<tipb::Expr>) -> tipb::Expr {
    let sig = tipb::ScalarFuncSig::from_str_name(&f.sig)
        .unwrap_or_else(|| panic!("unknown ScalarFuncSig {}", f.sig));
    tipb::Expr {
        tp: Some(10000),
        sig: Some(sig as i32),
        children: args,
        field_type: Some(field_type(&f.ret)),
        ..Default::default()
    }
}

/// A table of `rows` (one column per argument), and the scan over it.
fn table(id: i64, f: &Fn, rows: &[&Vec<String>]) -> (corpus::Table, tipb::Executor) {
    let spec = TableSpec {
        name: "t".into(),
        id,
        keyspace: None,
        format: "v2".into(),
        common_pk: vec![],
        columns: f.args.iter().enumerate().map(|(i, a)| format!("a{i} {a}")).collect(),
        rows: rows
            .iter()
            .map(|r| {
                assert!(r.iter().all(|c| !c.contains('|')), "{}: a cell holds '|'", f.sig);
                r.join(" | ")
            })
            .collect(),
    };
    let t = build_table(&spec);
    let cols = t.cols.iter().map(|c| column_info(c.id, &c.ft, false)).collect();
    (t, scan(id, cols, false))
}

/// Runs `expr` over the rows of `t` in `range`; one answer per row, or the request's error.
fn run(
    t: &corpus::Table,
    sc: &tipb::Executor,
    expr: tipb::Expr,
    f: &Fn,
    range: coprocessor::KeyRange,
) -> Result<(Vec<Got>, u32), String> {
    let mut d = dag(vec![sc.clone(), projection(vec![expr])], vec![0], false);
    d.flags = Some(f.flags.unwrap_or(SELECT_FLAGS));
    d.sql_mode = Some(f.sql_mode.unwrap_or(SQL_MODE));
    let resp = Engine::default().handle(&request(&d, vec![range]), &mut t.store.scanner());
    if !resp.other_error.is_empty() {
        return Err(resp.other_error);
    }
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    if let Some(e) = sel.error {
        return Err(e.msg.unwrap_or_default());
    }
    let warnings = sel.warning_count.unwrap_or(sel.warnings.len() as i64) as u32;
    let rows = default_rows(&sel, 1)
        .into_iter()
        .map(|mut r| match r.pop().unwrap() {
            Datum::Null => Got::Null,
            d => Got::Value(d),
        })
        .collect();
    Ok((rows, warnings))
}

fn row_range(table_id: i64, handle: i64) -> coprocessor::KeyRange {
    let (mut start, mut end) = (Vec::new(), Vec::new());
    key::encode_record_key(&mut start, table_id, handle);
    key::encode_record_key(&mut end, table_id, handle + 1);
    coprocessor::KeyRange { start: start.into(), end: end.into() }
}

/// The text MariaDB prints for a value of the result type (strings: hex of the bytes).
fn render(d: &Datum, ret: &tipb::FieldType) -> String {
    let fsp = ret.decimal.unwrap_or(0).clamp(0, 6) as u8;
    let tp = ret.tp.unwrap_or(0) as u8;
    let unsigned = ret.flag.unwrap_or(0) & 32 != 0;
    match (d, tp) {
        (Datum::Uint(v), mt::DATE | mt::DATETIME | mt::TIMESTAMP) => {
            Time::from_packed_u64(*v, corpus::time_type(ret), fsp).unwrap().to_string()
        }
        (Datum::Int(v), mt::DURATION) => Duration::from_nanos(*v, fsp).unwrap().to_string(),
        (Datum::Duration(x), _) => Duration::from_nanos(x.nanos(), fsp).unwrap().to_string(),
        (Datum::Time(t), _) => {
            Time::from_packed_u64(t.to_packed_u64(), corpus::time_type(ret), fsp)
                .unwrap()
                .to_string()
        }
        (Datum::Int(v), _) if unsigned => (*v as u64).to_string(),
        (Datum::Int(v), _) => v.to_string(),
        (Datum::Uint(v), _) => v.to_string(),
        (Datum::Float(v), _) => v.to_string(),
        (Datum::Decimal(x), _) => x.to_string(),
        (Datum::Bytes(b), _) => hex::encode_upper(b),
        (Datum::Json(b), _) => compact_json(b),
        (other, _) => format!("{other:?}"),
    }
}

/// MySQL's text of a JSON value without the blanks after `:` and `,` (as the oracle's
/// `JSON_COMPACT` prints it).
fn compact_json(b: &[u8]) -> String {
    let text = rcop_datum::JsonRef::decode(b).unwrap().to_text().unwrap();
    let (mut out, mut in_str, mut esc, mut prev) = (String::new(), false, false, ' ');
    for ch in text.chars() {
        if in_str {
            in_str = esc || ch != '"';
            esc = !esc && ch == '\\';
        } else if ch == '"' {
            in_str = true;
        } else if ch == ' ' && (prev == ':' || prev == ',') {
            continue;
        }
        out.push(ch);
        prev = ch;
    }
    out
}

fn same_number(got: &str, want: &str) -> bool {
    match (got.parse::<f64>(), want.parse::<f64>()) {
        (Ok(a), Ok(b)) => a == b || (a - b).abs() <= 1e-15 * a.abs().max(b.abs()),
        _ => false,
    }
}

/// `None` when `got` is what was expected, else the difference.
fn differs(got: &Got, warned: Option<u32>, want: &Expected, f: &Fn) -> Option<String> {
    let ret = field_type(&f.ret);
    let ok = match (got, want.kind.as_str()) {
        (Got::Null, "null") => true,
        (Got::Error(_), "err") => true,
        (Got::Value(d), "val" | "hex") => {
            let r = render(d, &ret);
            r == want.value || (matches!(d, Datum::Float(_)) && same_number(&r, &want.value))
        }
        _ => false,
    };
    let warn_ok = match warned {
        Some(w) if f.warnings && want.kind != "err" => (w > 0) == (want.warnings > 0),
        _ => true,
    };
    if ok && warn_ok {
        return None;
    }
    let shown = match got {
        Got::Value(d) => format!("{} {:?}", render(d, &ret), d),
        g => format!("{g:?}"),
    };
    Some(format!("got {shown} with {warned:?} warnings, want {want:?}"))
}

#[test]
fn scalar_functions_match_the_oracle() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no case files in {}", dir().display());
    let (mut failures, mut checked) = (Vec::new(), 0);
    for path in &files {
        let file: File = toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let expected = load_expected(&path.with_extension("expected"));
        for (fi, f) in file.fns.iter().enumerate() {
            let want = |ci: usize| -> Expected {
                if let Some(o) = f.tikv.iter().chain(&f.mysql).find(|o| o.case == ci) {
                    return Expected {
                        kind: o.kind.clone(),
                        value: o.value.clone(),
                        warnings: o.warnings.unwrap_or(0),
                    };
                }
                expected
                    .get(&(fi, ci))
                    .unwrap_or_else(|| {
                        panic!("{}: no expected row {ci} (re-run the oracle)", f.sig)
                    })
                    .clone()
            };
            let arg_fts: Vec<tipb::FieldType> = f.args.iter().map(|a| field_type(a)).collect();
            let table_id = 1000 + fi as i64;
            let all: Vec<&Vec<String>> = f.cases.iter().collect();
            let (t, sc) = table(table_id, f, &all);
            // Column references, but the `literal` arguments as the case's constants.
            let cols_for = |case: &[String]| -> Vec<tipb::Expr> {
                arg_fts
                    .iter()
                    .enumerate()
                    .map(|(i, ft)| {
                        if f.literal.contains(&i) {
                            constant(&corpus::parse_value(&case[i], ft), ft)
                        } else {
                            support::dag::col(i as i64, ft.clone())
                        }
                    })
                    .collect()
            };
            let mut report = |ci: usize, how: &str, got: &Got, warned: u32| {
                if let Some(d) = differs(got, Some(warned), &want(ci), f) {
                    failures.push(format!(
                        "{}: {} row {ci} {:?} ({how}): {d}",
                        path.display(),
                        f.sig,
                        f.cases[ci]
                    ));
                }
            };
            for (ci, case) in f.cases.iter().enumerate() {
                // One row, its arguments as columns.
                let range = row_range(table_id, ci as i64 + 1);
                let (got, warned) = match run(&t, &sc, call(f, cols_for(case)), f, range.clone()) {
                    Ok((rows, w)) => {
                        (rows.into_iter().next().unwrap_or(Got::Error("no row".into())), w)
                    }
                    Err(e) => (Got::Error(e), 0),
                };
                report(ci, "column", &got, warned);
                // The same row, its arguments as constants.
                let consts = case
                    .iter()
                    .zip(&arg_fts)
                    .map(|(c, ft)| constant(&corpus::parse_value(c, ft), ft))
                    .collect();
                let (got, warned) = match run(&t, &sc, call(f, consts), f, range) {
                    Ok((rows, w)) => {
                        (rows.into_iter().next().unwrap_or(Got::Error("no row".into())), w)
                    }
                    Err(e) => (Got::Error(e), 0),
                };
                report(ci, "constant", &got, warned);
                checked += 1;
            }
            // Every row that does not fail, in one batch (one per value of the literals).
            let ok: Vec<usize> = (0..f.cases.len()).filter(|ci| want(*ci).kind != "err").collect();
            let key = |ci: usize| -> Vec<String> {
                f.literal.iter().map(|&i| f.cases[ci][i].clone()).collect()
            };
            let mut keys: Vec<Vec<String>> = ok.iter().map(|&ci| key(ci)).collect();
            keys.dedup();
            keys.sort();
            keys.dedup();
            for k in keys {
                let group: Vec<usize> = ok.iter().copied().filter(|&ci| key(ci) == k).collect();
                let rows: Vec<&Vec<String>> = group.iter().map(|ci| &f.cases[*ci]).collect();
                let (bt, bsc) = table(table_id, f, &rows);
                let expr = call(f, cols_for(&f.cases[group[0]]));
                match run(&bt, &bsc, expr, f, table_range(table_id, None)) {
                    Ok((got, _)) => {
                        assert_eq!(got.len(), group.len(), "{}: batch row count", f.sig);
                        for (ci, g) in group.iter().zip(&got) {
                            if let Some(d) = differs(g, None, &want(*ci), f) {
                                failures.push(format!(
                                    "{}: {} row {ci} (batch): {d}",
                                    path.display(),
                                    f.sig
                                ));
                            }
                        }
                    }
                    Err(e) => {
                        failures.push(format!("{}: {} batch failed: {e}", path.display(), f.sig))
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 0);
}
