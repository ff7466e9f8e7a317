//! Differential property test at the executor level: random tables and random plans
//! (selection, projection, aggregation, TopN, Limit) run by the engine, in both response
//! encodings, and by the row-at-a-time reference evaluator must give the same rows.

#![expect(clippy::unwrap_used, reason = "fixture builders outside #[test] fns")]

mod support;

/// Random cells of the corpus tables (proptest strategies: not in `support`, which crates
/// without proptest include too).
#[path = "support/cells.rs"]
mod cells;

use cells::{cell_dec, cell_int, cell_str};
use proptest::prelude::*;
use prost::Message;
use rcop_exec::{Engine, KeyRange};
use rcop_proto::tipb;
use support::corpus::{Case, TableSpec, build_dag, build_table};
use support::dag::{request, table_range};
use support::reference::{self, render};

fn rows() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec((cell_int(), cell_int(), cell_dec(), cell_str()), 0..30).prop_map(
        |rs| {
            rs.into_iter()
                .enumerate()
                .map(|(i, (a, b, c, s))| format!("{} | {a} | {b} | {c} | {s}", i + 1))
                .collect()
        },
    )
}

/// One plan line over the scan schema (#0 id, #1 a, #2 b, #3 c decimal, #4 s string).
fn plan() -> impl Strategy<Value = Vec<String>> {
    let cond = prop_oneof![
        (0..4usize, -5i64..5)
            .prop_map(|(op, k)| format!("{}(#1, {k})", ["lt", "ge", "eq", "ne"][op])),
        (-5i64..5).prop_map(|k| format!("gt(#3, {k}.5m)")),
        Just("isnull(#2)".to_string()),
        Just("or(lt(#1, #2), eq(#4, 'a'))".to_string()),
        Just("in(#2, 1, 2, null)".to_string()),
    ];
    let sel = proptest::option::of(cond.prop_map(|c| format!("sel {c}")));
    let tail = prop_oneof![
        Just(vec![]),
        Just(vec!["agg count(1); sum(#1); max(#3); min(#4) by #4".to_string()]),
        Just(vec!["agg count(#2); sum(#3); avg(#1) by #1; #4".to_string()]),
        Just(vec!["agg count(1); sum(#3); first(#0)".to_string()]),
        (1u64..6).prop_map(|k| vec![format!("topn {k} by #1 desc; #3")]),
        (0u64..6).prop_map(|k| vec![format!("limit {k}")]),
        Just(vec![
            "proj plus(#1, #2); mul(#3, #3); minus(#3, 1m); if(gt(#1, 0), #4, 'z')".to_string()
        ]),
        Just(vec!["proj mul(#3, 2m); #0".to_string(), "topn 3 by #0".to_string()]),
    ];
    (sel, tail).prop_map(|(s, t)| s.into_iter().chain(t).collect())
}

fn engine_rows(t: &support::corpus::Table, c: &Case, chunk: bool) -> Result<Vec<String>, String> {
    let (dag, fts) = build_dag(t, c, chunk);
    let range = table_range(t.spec.id, t.spec.keyspace);
    let resp = Engine::default().handle(&request(&dag, vec![range]), &mut t.store.scanner());
    let sel = tipb::SelectResponse::decode(resp.data).unwrap();
    if let Some(e) = sel.error {
        return Err(e.msg.unwrap_or_default());
    }
    Ok(reference::response_rows(&sel, &fts, chunk))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    #[test]
    fn engine_matches_reference(rows in rows(), plan in plan(), v1 in any::<bool>()) {
        let spec = TableSpec {
            name: "r".into(),
            id: 77,
            keyspace: Some(3),
            format: if v1 { "v1".into() } else { "v2".into() },
            common_pk: vec![],
            columns: vec!["id bigint pk".into(), "a bigint".into(), "b bigint".into(), "c decimal(8,2)".into(), "s varchar(4)".into()],
            rows,
        };
        let t = build_table(&spec);
        let case = Case {
            name: "random".into(),
            table: "r".into(),
            scan: vec!["id".into(), "a".into(), "b".into(), "c".into(), "s".into()],
            desc: false,
            plan,
            output: None,
            expect: vec![],
            sorted: false,
            error: None,
            flags: 0,
            sql_mode: 0,
            tz: None,
            tz_offset: None,
            warnings: None,
            reference: true,
        };
        let (dag, _) = build_dag(&t, &case, false);
        let r = table_range(77, Some(3));
        let want = reference::run(&t.store, &[KeyRange::new(r.start.to_vec(), r.end.to_vec())], &dag)
            .map(|rows| rows.iter().map(|row| row.iter().map(render).collect::<Vec<_>>().join(" | ")).collect::<Vec<_>>());
        for chunk in [false, true] {
            let got = engine_rows(&t, &case, chunk);
            match (&got, &want) {
                (Ok(g), Ok(w)) => prop_assert_eq!(g, w, "plan {:?} chunk {}", case.plan, chunk),
                (Err(_), Err(_)) => {}
                _ => prop_assert!(false, "engine {:?} vs reference {:?} for {:?}", got, want, case.plan),
            }
        }
    }
}
