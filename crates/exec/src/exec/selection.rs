//! Selection: keeps the rows for which every condition is true, shrinking the selection
//! vector only (no data is copied).

use std::time::Instant;

use crate::column::{ColData, Scalar};
use crate::ctx::EvalContext;
use crate::error::Result;
use crate::exec::{BatchResult, ExecEnv, ExecStats, Executor, ScanCounters};
use crate::expr::eval::Value;
use crate::expr::eval::truth_at;
use crate::expr::{Node, eval};
use crate::types::FieldType;

/// The Selection executor.
#[derive(Debug)]
pub struct SelectionExecutor {
    child: Box<dyn Executor>,
    conditions: Vec<Node>,
    refs: Vec<Vec<usize>>,
    /// Every column the conditions read, plus those the parent reads.
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
        SelectionExecutor {
            child,
            conditions,
            refs,
            prefetch: Vec::new(),
            last_in: 0,
            last_out: 0,
            stats: ExecStats::default(),
        }
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
        for (cond, refs) in self.conditions.iter().zip(&self.refs) {
            if r.batch.is_empty() {
                break;
            }
            r.batch.ensure(refs, env.ctx)?;
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
        let mut all: Vec<usize> =
            self.refs.iter().flatten().copied().chain(cols.iter().copied()).collect();
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
