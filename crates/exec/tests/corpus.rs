//! Runs the data-driven corpus in `testdata/exec/` against the engine (both response
//! encodings) and against the row-at-a-time reference evaluator.

#![expect(clippy::unwrap_used, reason = "corpus runner helpers outside #[test] fns")]

mod support;

use prost::Message;
use rcop_datum::chunk::{ChunkColumnRef, fixed_size_of, mysql_type as mt};
use rcop_datum::{Datum, Decimal, Duration, Reader, Time, Tz};
use rcop_exec::{Engine, KeyRange};
use rcop_proto::tipb;
use support::corpus::{self, Case, Table, build_dag, build_table};
use support::dag::{request, table_range};
use support::reference::{self, RV, render};

fn tz_of(c: &Case) -> Tz {
    match &c.tz {
        Some(n) => Tz::from_name(n).unwrap(),
        None => Tz::from_offset_secs(c.tz_offset.unwrap_or(0)).unwrap(),
    }
}

fn decode_default(sel: &tipb::SelectResponse, fts: &[tipb::FieldType], tz: &Tz) -> Vec<Vec<RV>> {
    let mut out = Vec::new();
    for c in &sel.chunks {
        let data = c.rows_data.as_deref().unwrap_or(&[]);
        let ds = Datum::decode_all(data).unwrap();
        assert_eq!(ds.len() % fts.len().max(1), 0);
        for row in ds.chunks(fts.len().max(1)) {
            out.push(
                row.iter()
                    .zip(fts)
                    .map(|(d, f)| {
                        reference::from_datum(
                            d.clone(),
                            f.tp.unwrap_or(0),
                            f.flag.unwrap_or(0) as i32,
                            f.decimal.unwrap_or(0),
                            tz,
                        )
                        .unwrap()
                    })
                    .collect(),
            );
        }
    }
    out
}

fn decode_chunk(sel: &tipb::SelectResponse, fts: &[tipb::FieldType]) -> Vec<Vec<RV>> {
    let mut out = Vec::new();
    for c in &sel.chunks {
        let data = c.rows_data.as_deref().unwrap_or(&[]);
        let mut r = Reader::new(data);
        let mut cols = Vec::new();
        for f in fts {
            cols.push(
                ChunkColumnRef::decode(&mut r, fixed_size_of(f.tp.unwrap_or(0) as u8)).unwrap(),
            );
        }
        assert!(r.is_empty(), "trailing chunk bytes");
        let n = cols.first().map_or(0, ChunkColumnRef::len);
        for i in 0..n {
            let mut row = Vec::new();
            for (col, f) in cols.iter().zip(fts) {
                let tp = f.tp.unwrap_or(0) as u8;
                let uns = f.flag.unwrap_or(0) & 32 != 0;
                let v = match col.get(i).filter(|_| !col.is_null(i)) {
                    None => RV::Null,
                    Some(b) => match tp {
                        mt::LONG_LONG
                        | mt::LONG
                        | mt::TINY
                        | mt::SHORT
                        | mt::INT24
                        | mt::YEAR
                        | mt::NULL => RV::Int(i64::from_le_bytes(b.try_into().unwrap()), uns),
                        mt::DOUBLE => RV::Real(f64::from_le_bytes(b.try_into().unwrap())),
                        mt::FLOAT => RV::Real(f64::from(f32::from_le_bytes(b.try_into().unwrap()))),
                        mt::NEW_DECIMAL => RV::Dec(Decimal::from_chunk_bytes(b).unwrap()),
                        mt::DATE | mt::DATETIME | mt::TIMESTAMP => RV::Time(
                            Time::from_chunk_u64(u64::from_le_bytes(b.try_into().unwrap()))
                                .unwrap(),
                        ),
                        mt::DURATION => RV::Dur(
                            Duration::from_nanos(
                                i64::from_le_bytes(b.try_into().unwrap()),
                                f.decimal.unwrap_or(0).clamp(0, 6) as u8,
                            )
                            .unwrap(),
                        ),
                        _ => RV::Str(b.to_vec()),
                    },
                };
                row.push(v);
            }
            out.push(row);
        }
    }
    out
}

fn rendered(rows: &[Vec<RV>], sorted: bool) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|r| r.iter().map(|x| render(x).trim().to_string()).collect::<Vec<_>>().join(" | "))
        .collect();
    if sorted {
        v.sort();
    }
    v
}

fn run_case(t: &Table, c: &Case) -> Result<(), String> {
    let range = table_range(t.spec.id, t.spec.keyspace);
    let engine = Engine::default();
    let mut expect: Vec<String> =
        c.expect.iter().map(|r| corpus::split_row(r).join(" | ")).collect();
    if c.sorted {
        expect.sort();
    }
    for chunk in [false, true] {
        let (dag, fts) = build_dag(t, c, chunk);
        let resp = engine.handle(&request(&dag, vec![range.clone()]), &mut t.store.scanner());
        if !resp.other_error.is_empty() {
            return Err(format!("other_error: {}", resp.other_error));
        }
        let sel = tipb::SelectResponse::decode(resp.data).unwrap();
        // The capability check accepts exactly what the engine runs: it refuses a DAG just
        // when the engine answers "unsupported", and names the same thing.
        let checked = rcop_exec::check_dag(&dag).err().map(|e| e.to_string());
        let unsupported = sel
            .error
            .as_ref()
            .and_then(|e| e.msg.clone())
            .filter(|m| m.starts_with("unsupported "));
        if let Some(msg) = &unsupported {
            if checked.as_ref() != Some(msg) {
                return Err(format!("engine says {msg:?}, capability check says {checked:?}"));
            }
        } else if let Some(e) = checked {
            // A malformed DAG: the engine must refuse it too (the node keeps it local).
            if e.starts_with("unsupported ") || sel.error.is_none() {
                return Err(format!("capability check refused a DAG the engine runs: {e}"));
            }
        }
        if let Some(want) = &c.error {
            let got = sel.error.as_ref().and_then(|e| e.msg.clone()).unwrap_or_default();
            if !got.contains(want.as_str()) {
                return Err(format!(
                    "expected error containing {want:?}, got {got:?} (chunks: {})",
                    sel.chunks.len()
                ));
            }
            continue;
        }
        if let Some(e) = &sel.error {
            return Err(format!("engine error: {e:?}"));
        }
        if let Some(w) = c.warnings
            && sel.warning_count != Some(w)
        {
            return Err(format!(
                "expected {w} warnings, got {:?}: {:?}",
                sel.warning_count, sel.warnings
            ));
        }
        assert_eq!(sel.execution_summaries.len(), dag.executors.len(), "one summary per executor");
        let rows =
            if chunk { decode_chunk(&sel, &fts) } else { decode_default(&sel, &fts, &tz_of(c)) };
        let got = rendered(&rows, c.sorted);
        if got != expect {
            return Err(format!(
                "{} result mismatch\n got: {got:#?}\nwant: {expect:#?}",
                if chunk { "TypeChunk" } else { "TypeDefault" }
            ));
        }
        if c.reference && !chunk {
            let kr = KeyRange::new(range.start.to_vec(), range.end.to_vec());
            let refr = reference::run(&t.store, &[kr], &dag)
                .map_err(|e| format!("reference failed: {e}"))?;
            let rgot = rendered(&refr, c.sorted);
            if rgot != expect {
                return Err(format!("reference mismatch\n ref: {rgot:#?}\nwant: {expect:#?}"));
            }
        }
    }
    if c.error.is_some() && c.reference {
        let (dag, _) = build_dag(t, c, false);
        let kr = KeyRange::new(range.start.to_vec(), range.end.to_vec());
        if reference::run(&t.store, &[kr], &dag).is_ok() {
            return Err("the reference evaluator did not fail".into());
        }
    }
    Ok(())
}

#[test]
fn corpus() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/exec");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    let mut count = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let file: corpus::File =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let tables: Vec<Table> = file.table.iter().map(build_table).collect();
        for c in &file.case {
            count += 1;
            let t = tables
                .iter()
                .find(|t| t.spec.name == c.table)
                .unwrap_or_else(|| panic!("no table {}", c.table));
            if let Err(e) = run_case(t, c) {
                failures.push(format!(
                    "{}::{}: {e}",
                    f.file_name().unwrap().to_string_lossy(),
                    c.name
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    eprintln!("{count} corpus cases passed");
}
