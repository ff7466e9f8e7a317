//! COUNT (`tidb_query_aggr` `impl_count.rs`): the number of non-NULL argument values, as an
//! unsigned BIGINT whatever type TiDB gives the call.

use std::ops::Range;

use crate::column::VecCol;
use crate::error::Result;
use crate::exec::agg::{AggState, Plan, count_col, count_ft, drain_front};
use crate::expr::Node;
use crate::expr::eval::Value;
use crate::types::FieldType;

/// Plans COUNT: any argument, one unsigned BIGINT column.
pub(crate) fn plan(_own: &FieldType, _arg: &Node) -> Result<Plan> {
    Ok(Plan { cast: None, out: vec![count_ft()], state: Box::new(Count(Vec::new())) })
}

/// Per group, the count.
#[derive(Debug)]
pub(crate) struct Count(Vec<i64>);

impl AggState for Count {
    fn grow(&mut self, groups: usize) {
        self.0.resize(groups, 0);
    }

    fn update(&mut self, g: &[u32], v: &Value<'_>, _arg_ft: &FieldType) -> Result<()> {
        let c = &mut self.0;
        // COUNT(constant): every row counts, or none (NULL).
        if let Value::Scalar(x) = v {
            if !x.is_null() {
                for &gi in g {
                    if let Some(n) = c.get_mut(gi as usize) {
                        *n += 1;
                    }
                }
            }
            return Ok(());
        }
        for (i, &gi) in g.iter().enumerate() {
            let present = v.col().is_some_and(|col| col.valid.get(i));
            if let Some(x) = c.get_mut(gi as usize) {
                *x += i64::from(present);
            }
        }
        Ok(())
    }

    fn finish(&self, groups: Range<usize>, out: &mut Vec<VecCol>) -> Result<()> {
        out.push(count_col(&self.0, groups));
        Ok(())
    }

    fn forget_front(&mut self, k: usize) {
        drain_front(&mut self.0, k);
    }
}
