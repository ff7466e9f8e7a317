//! Selection: keeps the rows for which every condition is true, shrinking the selection
//! vector only (no data is copied).

use std::cmp::Ordering;
use std::time::Instant;

use crate::batch::{Batch, LazyCol};
use crate::column::{Bitmap, ColData, Scalar};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::exec::{BatchResult, ConstCmp, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::build::NodeKind;
use crate::expr::compare::{CmpOp, cmp_int, comparison};
use crate::expr::eval::Value;
use crate::expr::eval::truth_at;
use crate::expr::{Node, eval};
use crate::fixed;
use crate::types::{EvalType, FieldType};

/// The Selection executor.
#[derive(Debug)]
pub struct SelectionExecutor {
    child: Box<dyn Executor>,
    conditions: Vec<Node>,
    /// Per condition, its direct form when it compares a column with a constant.
    direct: Vec<Option<Direct>>,
    /// Per condition that begins a run of direct conditions on one column (the next
    /// condition on another column, or not direct, ends it): the column and the run's
    /// comparisons, applied from the scan's rows while the column is raw; the loop then skips
    /// the rest of the run.
    runs: Vec<Option<(usize, Vec<ConstCmp>)>>,
    refs: Vec<Vec<usize>>,
    /// Every column the conditions read, but those only direct conditions read, plus those
    /// the parent reads: what a batch decodes in one pass when most rows pass.
    prefetch: Vec<usize>,
    /// Rows in and out of the previous batch, to tell a selective filter (decode lazily,
    /// condition by condition) from one that keeps most rows (decode everything in one pass).
    last_in: usize,
    last_out: usize,
    stats: ExecStats,
}

impl SelectionExecutor {
    /// Wraps `child` with the (ANDed) conditions.
    pub fn new(child: Box<dyn Executor>, conditions: Vec<Node>) -> Self {
        let refs = conditions
            .iter()
            .map(|c| {
                let mut v = Vec::new();
                c.column_refs(&mut v);
                v
            })
            .collect();
        let direct: Vec<Option<Direct>> = conditions.iter().map(Direct::of).collect();
        let runs = (0..direct.len())
            .map(|i| {
                let col = direct.get(i)?.as_ref()?.col;
                // Inside a run (the condition before is direct on the same column): none.
                if i.checked_sub(1)
                    .and_then(|p| direct.get(p)?.as_ref())
                    .is_some_and(|d| d.col == col)
                {
                    return None;
                }
                let cmps: Vec<ConstCmp> = direct
                    .get(i..)?
                    .iter()
                    .map_while(|d| d.as_ref().filter(|d| d.col == col))
                    .map(|d| ConstCmp { op: d.op, konst: d.konst.clone(), unsigned: d.unsigned })
                    .collect();
                Some((col, cmps))
            })
            .collect();
        SelectionExecutor {
            child,
            conditions,
            direct,
            runs,
            refs,
            prefetch: Vec::new(),
            last_in: 0,
            last_out: 0,
            stats: ExecStats::default(),
        }
    }
}

/// A condition `column op constant` (or `constant op column`) over integers, fixed-point
/// decimals, dates and times or durations, applied straight to the selection: each selected
/// row's value is compared with the constant where it lies, without a result column or
/// gathering the column first. It keeps exactly the rows the comparison kernel finds true (NULL compares
/// to nothing).
#[derive(Debug)]
struct Direct {
    col: usize,
    /// The operator with the column on its left.
    op: CmpOp,
    konst: Scalar,
    /// Whether the column and the constant are unsigned (integers).
    unsigned: (bool, bool),
}

impl Direct {
    fn of(cond: &Node) -> Option<Direct> {
        let NodeKind::Func(f) = &cond.kind else { return None };
        let (op, et) = comparison(f.sig)?;
        if op == CmpOp::NullEq
            || !matches!(
                et,
                EvalType::Int | EvalType::Decimal | EvalType::DateTime | EvalType::Duration
            )
        {
            return None;
        }
        let [a, b] = f.children.as_slice() else { return None };
        let (col, konst, op) = match (&a.kind, &b.kind) {
            (NodeKind::Column(o), NodeKind::Const(s)) => ((*o, a), (s, b), op),
            (NodeKind::Const(s), NodeKind::Column(o)) => ((*o, b), (s, a), flip(op)),
            _ => return None,
        };
        // The constant must already be of the compared type (else the kernel converts it).
        let typed = matches!(
            (et, konst.0),
            (_, Scalar::Null)
                | (EvalType::Int, Scalar::Int(_))
                | (EvalType::Decimal, Scalar::Decimal(_))
                | (EvalType::DateTime, Scalar::DateTime(_))
                | (EvalType::Duration, Scalar::Duration(_))
        );
        if !typed || col.1.et != et || konst.1.et != et {
            return None;
        }
        let unsigned = (col.1.ft.is_unsigned(), konst.1.ft.is_unsigned());
        Some(Direct { col: col.0, op, konst: konst.0.clone(), unsigned })
    }

    /// Applies the condition to `batch`'s selection; false (the selection untouched) when
    /// the column is not decoded as expected, for the general path to evaluate it.
    fn apply(&self, batch: &mut Batch) -> bool {
        let Batch { cols, logical, .. } = batch;
        let Some(LazyCol::Decoded(c)) = cols.get(self.col) else { return false };
        let (op, valid) = (self.op, &c.valid);
        match (&c.data, &self.konst) {
            (_, Scalar::Null) => logical.clear(),
            (ColData::Int(v), Scalar::Int(k)) => match self.unsigned {
                (false, false) => retain_cmp(logical, valid, v, op, |x| x.cmp(k)),
                (ua, ub) => retain_cmp(logical, valid, v, op, |x| cmp_int(*x, ua, *k, ub)),
            },
            (ColData::Fixed(f), Scalar::Decimal(d)) => {
                // The constant at the column's scale, when it is exact there (else the general
                // path rescales the column).
                let Some(k) = fixed::at_scale(d, f.scale) else { return false };
                retain_cmp(logical, valid, &f.m, op, |x| x.cmp(&k));
            }
            (ColData::DateTime(v), Scalar::DateTime(k)) => {
                retain_cmp(logical, valid, v, op, |x| x.cmp(k));
            }
            (ColData::Duration(v), Scalar::Duration(k)) => {
                retain_cmp(logical, valid, v, op, |x| x.cmp(k));
            }
            _ => return false,
        }
        true
    }
}

/// Keeps the selected rows whose value `v[r]` is valid and `ord(v[r])` satisfies `op` (one
/// loop per operator, so the test inlines).
fn retain_cmp<T>(
    logical: &mut Vec<u32>,
    valid: &Bitmap,
    v: &[T],
    op: CmpOp,
    ord: impl Fn(&T) -> Ordering,
) {
    match op {
        CmpOp::Lt => retain_by(logical, valid, v, |x| ord(x).is_lt()),
        CmpOp::Le => retain_by(logical, valid, v, |x| ord(x).is_le()),
        CmpOp::Gt => retain_by(logical, valid, v, |x| ord(x).is_gt()),
        CmpOp::Ge => retain_by(logical, valid, v, |x| ord(x).is_ge()),
        // `<=>` never comes here: `Direct::of` refuses it.
        CmpOp::Eq | CmpOp::NullEq => retain_by(logical, valid, v, |x| ord(x).is_eq()),
        CmpOp::Ne => retain_by(logical, valid, v, |x| ord(x).is_ne()),
    }
}

#[inline(always)]
fn retain_by<T>(logical: &mut Vec<u32>, valid: &Bitmap, v: &[T], keep: impl Fn(&T) -> bool) {
    if valid.no_nulls() {
        logical.retain(|&r| v.get(r as usize).is_some_and(&keep));
    } else {
        logical.retain(|&r| valid.get(r as usize) && v.get(r as usize).is_some_and(&keep));
    }
}

/// The operator with its operands swapped: `a op b` is `b flip(op) a`.
fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        other => other,
    }
}

/// Keeps `logical[i]` where the condition value at `i` is true: TiKV's `as_mysql_bool`
/// ([`truth_at`]), numbers on the fast paths here.
fn keep_true(logical: &mut Vec<u32>, v: &Value<'_>, ctx: &mut EvalContext) -> Result<()> {
    let col = match v {
        Value::Scalar(s) => {
            let t = match s {
                Scalar::Null => false,
                Scalar::Int(x) => *x != 0,
                Scalar::Real(x) => *x != 0.0,
                Scalar::Decimal(d) => !d.is_zero(),
                _ => truth_at(v, 0, ctx)?,
            };
            if !t {
                logical.clear();
            }
            return Ok(());
        }
        Value::Owned(c) => c,
        Value::Ref(c) => *c,
    };
    let mut i = 0;
    match &col.data {
        ColData::Int(d) if col.valid.no_nulls() => logical.retain(|_| {
            let k = d.get(i).is_some_and(|x| *x != 0);
            i += 1;
            k
        }),
        ColData::Int(d) => logical.retain(|_| {
            let k = col.valid.get(i) && d.get(i).is_some_and(|x| *x != 0);
            i += 1;
            k
        }),
        ColData::Real(d) => logical.retain(|_| {
            let k = col.valid.get(i) && d.get(i).is_some_and(|x| *x != 0.0);
            i += 1;
            k
        }),
        ColData::Fixed(f) => logical.retain(|_| {
            let k = col.valid.get(i) && f.m.get(i).is_some_and(|x| *x != 0);
            i += 1;
            k
        }),
        ColData::Decimal(d) => logical.retain(|_| {
            let k = col.valid.get(i) && d.get(i).is_some_and(|x| !x.is_zero());
            i += 1;
            k
        }),
        _ => {
            // Strings, times and durations (TiDB pushes them uncast as conditions).
            let mut keep = Vec::with_capacity(logical.len());
            for j in 0..logical.len() {
                keep.push(truth_at(v, j, ctx)?);
            }
            logical.retain(|_| {
                let k = keep.get(i).copied().unwrap_or(false);
                i += 1;
                k
            });
        }
    }
    Ok(())
}

impl Executor for SelectionExecutor {
    fn schema(&self) -> &[FieldType] {
        self.child.schema()
    }

    fn next_batch(&mut self, hint: usize, env: &mut ExecEnv<'_>) -> Result<BatchResult> {
        let start = Instant::now();
        let mut r = self.child.next_batch(hint, env)?;
        // When most rows passed last time, decode every column needed here and above in one
        // pass over the rows; otherwise each condition decodes its columns for the rows
        // still selected.
        if !self.prefetch.is_empty() && self.last_out * 2 > self.last_in {
            r.batch.ensure(&self.prefetch, env.ctx)?;
        }
        self.last_in = r.batch.len();
        let mut i = 0;
        while let (Some(cond), Some(refs), Some(direct)) =
            (self.conditions.get(i), self.refs.get(i), self.direct.get(i))
        {
            if r.batch.is_empty() {
                break;
            }
            // This and the next conditions comparing the same still raw column with
            // constants: applied from the rows, without decoding the column.
            if let Some(Some((col, cmps))) = self.runs.get(i)
                && r.batch.retain_raw(*col, cmps)
            {
                i += cmps.len();
                continue;
            }
            i += 1;
            r.batch.ensure(refs, env.ctx)?;
            if direct.as_ref().is_some_and(|d| d.apply(&mut r.batch)) {
                continue;
            }
            let v = eval(cond, &r.batch, env.ctx)?;
            let mut logical = r.batch.logical.clone();
            keep_true(&mut logical, &v, env.ctx)?;
            drop(v);
            r.batch.logical = logical;
        }
        self.last_out = r.batch.len();
        self.stats.record(start, r.batch.len());
        Ok(r)
    }

    fn prefetch_hint(&mut self, cols: &[usize]) {
        // A direct condition's column is left out: its run is applied from the scan's rows
        // without decoding it, and when that path declines, the loop decodes it for the
        // rows still selected.
        let general = self.refs.iter().zip(&self.direct).filter(|(_, d)| d.is_none());
        let mut all: Vec<usize> =
            general.flat_map(|(r, _)| r).copied().chain(cols.iter().copied()).collect();
        all.sort_unstable();
        all.dedup();
        self.prefetch = all;
    }

    fn collect_stats(&self, sink: &mut Vec<ExecStats>) {
        self.child.collect_stats(sink);
        sink.push(self.stats);
    }

    fn scan_counters(&self) -> &ScanCounters {
        self.child.scan_counters()
    }

    fn paging_drained(&self) -> bool {
        self.child.paging_drained()
    }

    fn holds_state(&self) -> bool {
        self.child.holds_state()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::column::{BytesT, DurT, Elem, TimeT, VecCol};
    use crate::ctx::{EvalConfig, FLAG_TRUNCATE_AS_WARNING};
    use crate::types::EvalType;
    use rcop_datum::{Duration, Time, TimeType};

    /// A scan over `n` rows (`id` 1: the handle, `id` 2: an int, NULL every 10th row), and the
    /// store it reads.
    fn int_scan(n: i64) -> (crate::exec::TableScanExecutor, crate::scan::MemStore) {
        use crate::exec::TableScanExecutor;
        use crate::scan::{KeyRange, MemStore};
        use rcop_datum::key;
        use rcop_datum::row::RowEncoder;
        use rcop_proto::tipb;
        let store = MemStore::from_pairs((0..n).map(|i| {
            let mut k = Vec::new();
            key::encode_record_key(&mut k, 7, i);
            let mut enc = RowEncoder::new();
            if i % 10 == 0 {
                enc.null(2)
            } else {
                enc.int(2, i)
            };
            let mut v = Vec::new();
            enc.finish(&mut v).unwrap();
            (k, v)
        }));
        let col = |id: i64| tipb::ColumnInfo {
            column_id: Some(id),
            tp: Some(8),
            pk_handle: Some(id == 1),
            ..Default::default()
        };
        let ts = tipb::TableScan {
            table_id: Some(7),
            columns: vec![col(1), col(2)],
            ..Default::default()
        };
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        key::encode_record_key(&mut lo, 7, i64::MIN);
        key::encode_record_key(&mut hi, 7, i64::MAX);
        let scan = TableScanExecutor::new(&ts, vec![KeyRange::new(lo, hi)], &EvalConfig::default())
            .unwrap();
        (scan, store)
    }

    /// A scan's batch of 100 rows ([`int_scan`]) with its columns still raw.
    fn raw_batch() -> Batch {
        let (mut scan, store) = int_scan(100);
        let mut ctx = EvalContext::new(EvalConfig::default());
        let mut source = store.scanner();
        let mut env = ExecEnv { ctx: &mut ctx, source: &mut source };
        scan.next_batch(1024, &mut env).unwrap().batch
    }

    /// The comparisons of a run on a still raw column are applied from the rows: the column
    /// stays raw and the rows kept are those the comparisons keep (NULLs dropped); a
    /// decoded column, or a constant of another type, is left to the general path.
    #[test]
    fn a_run_on_a_raw_column_is_applied_from_the_rows() {
        let mut b = raw_batch();
        assert_eq!(b.len(), 100);
        let cmp = |op, k| ConstCmp { op, konst: Scalar::Int(k), unsigned: (false, false) };
        assert!(b.retain_raw(1, &[cmp(CmpOp::Ge, 15), cmp(CmpOp::Lt, 25)]));
        assert!(matches!(b.cols.get(1), Some(LazyCol::Raw)));
        assert_eq!(b.logical, [15, 16, 17, 18, 19, 21, 22, 23, 24]);
        assert!(b.retain_raw(1, &[cmp(CmpOp::Ne, 17)]));
        assert_eq!(b.logical, [15, 16, 18, 19, 21, 22, 23, 24]);
        let real = ConstCmp { op: CmpOp::Lt, konst: Scalar::Real(1.0), unsigned: (false, false) };
        assert!(!b.retain_raw(1, &[real]));
        b.ensure(&[1], &EvalContext::new(EvalConfig::default())).unwrap();
        assert!(!b.retain_raw(1, &[cmp(CmpOp::Ge, 0)]));
        assert_eq!(b.logical, [15, 16, 18, 19, 21, 22, 23, 24]);
    }

    /// Once most rows pass, a selection decodes what its conditions read in one pass over
    /// the rows, but a column only direct conditions read is still applied from the rows
    /// and left raw; a general condition's column is decoded.
    #[test]
    fn an_eager_selection_leaves_a_direct_column_raw() {
        use crate::expr::build;
        use rcop_proto::tipb;
        let ft = tipb::FieldType { tp: Some(8), ..Default::default() };
        let col = |off: i64| {
            let mut v = Vec::new();
            rcop_datum::codec::encode_i64(&mut v, off);
            tipb::Expr {
                tp: Some(tipb::ExprType::ColumnRef as i32),
                val: Some(v.into()),
                field_type: Some(ft.clone()),
                ..Default::default()
            }
        };
        let int = |k: i64| {
            let mut v = Vec::new();
            rcop_datum::codec::encode_i64(&mut v, k);
            tipb::Expr {
                tp: Some(tipb::ExprType::Int64 as i32),
                val: Some(v.into()),
                field_type: Some(ft.clone()),
                ..Default::default()
            }
        };
        let func = |sig: i32, children| tipb::Expr {
            tp: Some(tipb::ExprType::ScalarFunc as i32),
            sig: Some(sig),
            children,
            field_type: Some(ft.clone()),
            ..Default::default()
        };
        let cfg = EvalConfig::default();
        let schema = [FieldType::from_proto(Some(&ft)), FieldType::from_proto(Some(&ft))];
        let build = |e: &tipb::Expr| build::build(e, &schema, &cfg, 64).unwrap();
        // `c2 >= 5` (GEInt) is direct; `c1 + 0` (PlusInt, as a truth value) is not.
        let direct = build(&func(130, vec![col(1), int(5)]));
        let general = build(&func(203, vec![col(0), int(0)]));
        for (conds, c1_decoded) in [(vec![direct.clone()], false), (vec![general, direct], true)] {
            let (scan, store) = int_scan(3000);
            let mut sel = SelectionExecutor::new(Box::new(scan), conds);
            sel.prefetch_hint(&[]);
            let mut ctx = EvalContext::new(cfg.clone());
            let mut source = store.scanner();
            let mut env = ExecEnv { ctx: &mut ctx, source: &mut source };
            let mut first = 0;
            for k in 0..3 {
                let b = sel.next_batch(1000, &mut env).unwrap().batch;
                let want: Vec<u32> = (0..1000u32)
                    .filter(|&i| (first + i) % 10 != 0 && first + i >= 5 && first + i > 0)
                    .collect();
                assert_eq!(b.logical, want, "batch {k}");
                // From the second batch on, the selection is eager.
                assert!(matches!(b.cols.get(1), Some(LazyCol::Raw)), "batch {k}");
                assert_eq!(matches!(b.cols.first(), Some(LazyCol::Decoded(_))), c1_decoded);
                first += 1000;
            }
        }
    }

    fn kept(v: &Value<'_>, n: usize, ctx: &mut EvalContext) -> Vec<u32> {
        let mut logical: Vec<u32> = (0..n as u32).collect();
        keep_true(&mut logical, v, ctx).unwrap();
        logical
    }

    #[test]
    fn strings_times_and_durations_as_mysql_bools() {
        let mut ctx =
            EvalContext::new(EvalConfig { flags: FLAG_TRUNCATE_AS_WARNING, ..Default::default() });
        let mut s = VecCol::new(EvalType::Bytes, 6);
        for x in [&b""[..], b"0", b"0.0", b"abc", b"1abc", b" 2.5"] {
            BytesT::push(&mut s, Some(x));
        }
        BytesT::push(&mut s, None);
        assert_eq!(kept(&Value::Owned(s), 7, &mut ctx), [4, 5]);
        // 'abc' and '1abc' are truncations; '' is not.
        assert_eq!(ctx.take_warnings().1, 2);
        let mut t = VecCol::new(EvalType::DateTime, 2);
        TimeT::push(&mut t, Some(Time::zero(TimeType::DateTime, 0).unwrap()));
        TimeT::push(&mut t, Some(Time::parse("2020-01-02", TimeType::Date, 0).unwrap()));
        assert_eq!(kept(&Value::Owned(t), 2, &mut ctx), [1]);
        let mut d = VecCol::new(EvalType::Duration, 3);
        for x in ["00:00:00", "-00:00:00.1", "01:00:00"] {
            DurT::push(&mut d, Some(Duration::parse(x, 1).unwrap()));
        }
        assert_eq!(kept(&Value::Owned(d), 3, &mut ctx), [1, 2]);
        let c = Value::Scalar(Scalar::Bytes(b"0x".to_vec()));
        assert!(kept(&c, 3, &mut ctx).is_empty());
    }
}
