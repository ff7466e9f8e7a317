//! Evaluation context: the DAG's flags, SQL mode, time zone and the warnings it collects.

use rcop_datum::Tz;
use rcop_proto::tipb;

use crate::error::{Error, Result};
use crate::limits::{ExecLimits, Guard};

/// DAG flag bit 0: ignore truncation silently.
pub const FLAG_IGNORE_TRUNCATE: u64 = 1;
/// DAG flag bit 1: report truncation as a warning.
pub const FLAG_TRUNCATE_AS_WARNING: u64 = 1 << 1;
/// DAG flag bit 3: the statement is an INSERT.
pub const FLAG_IN_INSERT_STMT: u64 = 1 << 3;
/// DAG flag bit 4: the statement is an UPDATE or DELETE.
pub const FLAG_IN_UPDATE_OR_DELETE_STMT: u64 = 1 << 4;
/// DAG flag bit 6: report overflow as a warning.
pub const FLAG_OVERFLOW_AS_WARNING: u64 = 1 << 6;
/// DAG flag bit 8: report division by zero as a warning.
pub const FLAG_DIVIDED_BY_ZERO_AS_WARNING: u64 = 1 << 8;

/// SQL mode bit: STRICT_TRANS_TABLES.
pub const MODE_STRICT_TRANS_TABLES: u64 = 1 << 21;
/// SQL mode bit: STRICT_ALL_TABLES.
pub const MODE_STRICT_ALL_TABLES: u64 = 1 << 22;
/// SQL mode bit: NO_ZERO_IN_DATE.
pub const MODE_NO_ZERO_IN_DATE: u64 = 1 << 23;
/// SQL mode bit: NO_ZERO_DATE.
pub const MODE_NO_ZERO_DATE: u64 = 1 << 24;
/// SQL mode bit: ERROR_FOR_DIVISION_BY_ZERO.
pub const MODE_ERROR_FOR_DIVISION_BY_ZERO: u64 = 1 << 26;

/// Most warnings a response keeps, whatever `max_warning_count` asks: each is a formatted
/// message, and a hostile request could otherwise keep one per row.
pub const MAX_WARNINGS_CAP: usize = 65_535;

/// TiDB's default `max_allowed_packet` (64 MiB), used when a request does not send one.
pub const DEFAULT_MAX_ALLOWED_PACKET: u64 = 64 << 20;

/// The largest `max_allowed_packet` a request may set (MySQL's own bound, 1 GiB): a string
/// result is never allocated larger.
pub const MAX_ALLOWED_PACKET_CAP: u64 = 1 << 30;

/// TiKV's default `max_warning_count`.
pub const DEFAULT_MAX_WARNINGS: usize = 64;

/// The per-request settings that change evaluation results.
#[derive(Debug, Clone)]
pub struct EvalConfig {
    /// DAG flags (`FLAG_*`).
    pub flags: u64,
    /// SQL mode bits (`MODE_*`).
    pub sql_mode: u64,
    /// The session time zone (TIMESTAMP values are shown in it).
    pub tz: Tz,
    /// MySQL `div_precision_increment`.
    pub div_precision_increment: u8,
    /// At most this many warnings are kept (all are counted).
    pub max_warning_count: usize,
    /// The request's paging size when it pages (TiKV's `EvalConfig::paging_size`): blocking
    /// executors end a page at this many groups.
    pub paging_size: Option<u64>,
    /// MySQL `max_allowed_packet`: functions whose result would be longer give NULL and
    /// a warning (`REPEAT`, `LPAD`, `CONCAT`, `UNCOMPRESS`, …), as in MySQL.
    pub max_allowed_packet: u64,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            flags: 0,
            sql_mode: 0,
            tz: Tz::utc(),
            div_precision_increment: rcop_datum::decimal::DEFAULT_DIV_FRAC_INCR,
            max_warning_count: DEFAULT_MAX_WARNINGS,
            paging_size: None,
            max_allowed_packet: DEFAULT_MAX_ALLOWED_PACKET,
        }
    }
}

impl EvalConfig {
    /// Reads the settings of a DAG request: the zone by name when present and non-empty,
    /// else by offset.
    pub fn from_dag(dag: &tipb::DagRequest) -> Result<EvalConfig> {
        let name = dag.time_zone_name.as_deref().filter(|n| !n.is_empty());
        let tz = Tz::from_request(name, dag.time_zone_offset)?;
        Ok(EvalConfig {
            flags: dag.flags.unwrap_or(0),
            sql_mode: dag.sql_mode.unwrap_or(0),
            tz,
            div_precision_increment: dag
                .div_precision_increment
                .map_or(rcop_datum::decimal::DEFAULT_DIV_FRAC_INCR, |v| v.min(30) as u8),
            max_warning_count: dag.max_warning_count.map_or(DEFAULT_MAX_WARNINGS, |v| {
                usize::try_from(v).unwrap_or(usize::MAX).min(MAX_WARNINGS_CAP)
            }),
            paging_size: None,
            max_allowed_packet: dag
                .max_allowed_packet
                .map_or(DEFAULT_MAX_ALLOWED_PACKET, |v| v.min(MAX_ALLOWED_PACKET_CAP)),
        })
    }

    /// True under STRICT_TRANS_TABLES or STRICT_ALL_TABLES.
    pub fn is_strict(&self) -> bool {
        self.sql_mode & (MODE_STRICT_TRANS_TABLES | MODE_STRICT_ALL_TABLES) != 0
    }
}

/// Evaluation state: the configuration and the warnings so far.
#[derive(Debug, Clone, Default)]
pub struct EvalContext {
    /// The settings.
    pub cfg: EvalConfig,
    warnings: Vec<tipb::Error>,
    warning_count: usize,
    /// The request's limits and what it holds of its memory budget.
    guard: Guard,
}

impl EvalContext {
    /// A context with the given settings and no warnings.
    pub fn new(cfg: EvalConfig) -> Self {
        EvalContext { cfg, warnings: Vec::new(), warning_count: 0, guard: Guard::default() }
    }

    /// The same context running under `limits` (see [`ExecLimits`]): evaluation and the
    /// executors check them and account their memory through this context.
    #[must_use]
    pub fn with_limits(mut self, limits: &ExecLimits) -> Self {
        self.guard = Guard::new(limits);
        self
    }

    /// Checks the cancel flag and the deadline (an atomic load and a clock read; free
    /// without limits).
    pub(crate) fn check_limits(&mut self) -> Result<()> {
        Ok(self.guard.check()?)
    }

    /// Counts `units` of work of a long kernel (characters, steps, rows) and checks the
    /// limits every [`CHECK_EVERY`](crate::limits::CHECK_EVERY) units.
    #[inline]
    pub(crate) fn tick(&mut self, units: usize) -> Result<()> {
        Ok(self.guard.tick(units)?)
    }

    /// Moves a memory account from `*accounted` to `now` bytes: grows (failing when the
    /// budget refuses) or gives back the difference.
    pub(crate) fn account(&mut self, accounted: &mut usize, now: usize) -> Result<()> {
        Ok(self.guard.resize(accounted, now)?)
    }

    /// Gives back all the memory this context holds of its budget.
    pub(crate) fn release_memory(&mut self) {
        self.guard.release_all();
    }

    /// Records a warning (kept only while fewer than `max_warning_count` are kept).
    pub fn warn(&mut self, e: &Error) {
        self.warning_count += 1;
        if self.warnings.len() < self.cfg.max_warning_count {
            self.warnings.push(tipb::Error { code: Some(e.code()), msg: Some(e.to_string()) });
        }
    }

    /// The kept warnings and the total count, leaving the context without warnings.
    pub fn take_warnings(&mut self) -> (Vec<tipb::Error>, usize) {
        let n = std::mem::take(&mut self.warning_count);
        (std::mem::take(&mut self.warnings), n)
    }

    /// A truncated conversion: ignored, a warning, or the error, by the DAG flags.
    pub fn truncated(&mut self, e: Error) -> Result<()> {
        if self.cfg.flags & FLAG_IGNORE_TRUNCATE != 0 {
            Ok(())
        } else if self.cfg.flags & FLAG_TRUNCATE_AS_WARNING != 0 {
            self.warn(&e);
            Ok(())
        } else {
            Err(e)
        }
    }

    /// An overflowing conversion: a warning under OVERFLOW_AS_WARNING, else the error.
    pub fn overflow(&mut self, e: Error) -> Result<()> {
        if self.cfg.flags & FLAG_OVERFLOW_AS_WARNING != 0 {
            self.warn(&e);
            Ok(())
        } else {
            Err(e)
        }
    }

    /// An invalid date/time value (the result is NULL): an error in a strict INSERT, UPDATE
    /// or DELETE, a warning otherwise (TiKV's `handle_invalid_time_error`).
    pub fn invalid_time(&mut self, e: Error) -> Result<()> {
        let writes = self.cfg.flags & (FLAG_IN_INSERT_STMT | FLAG_IN_UPDATE_OR_DELETE_STMT) != 0;
        if writes && self.cfg.is_strict() {
            return Err(e);
        }
        self.warn(&e);
        Ok(())
    }

    /// A zero date (`0000-00-00`) under the SQL mode: `None` when NO_ZERO_DATE is off (the
    /// zero date stands), else a warning and `Some(true)` to keep the zero date (not strict,
    /// or IGNORE_TRUNCATE) or `Some(false)` for an invalid value (strict), as TiKV's
    /// `handle_zero_date`.
    pub fn zero_date(&mut self) -> Option<bool> {
        if self.cfg.sql_mode & MODE_NO_ZERO_DATE == 0 {
            return None;
        }
        if !self.cfg.is_strict() || self.cfg.flags & FLAG_IGNORE_TRUNCATE != 0 {
            self.warn(&Error::DataTruncated);
            return Some(true);
        }
        Some(false)
    }

    /// A division by zero (the result is NULL): an error only in strict INSERT/UPDATE/DELETE
    /// with ERROR_FOR_DIVISION_BY_ZERO and without DIVIDED_BY_ZERO_AS_WARNING, silent in
    /// such statements without ERROR_FOR_DIVISION_BY_ZERO, a warning otherwise (as TiKV).
    pub fn division_by_zero(&mut self) -> Result<()> {
        let f = self.cfg.flags;
        if f & (FLAG_IN_INSERT_STMT | FLAG_IN_UPDATE_OR_DELETE_STMT) != 0 {
            if self.cfg.sql_mode & MODE_ERROR_FOR_DIVISION_BY_ZERO == 0 {
                return Ok(());
            }
            if self.cfg.is_strict() && f & FLAG_DIVIDED_BY_ZERO_AS_WARNING == 0 {
                return Err(Error::DivisionByZero);
            }
        }
        self.warn(&Error::DivisionByZero);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_bounded_but_counted() {
        let mut ctx = EvalContext::new(EvalConfig { max_warning_count: 2, ..Default::default() });
        for _ in 0..5 {
            ctx.division_by_zero().unwrap();
        }
        let (w, n) = ctx.take_warnings();
        assert_eq!((w.len(), n), (2, 5));
        assert_eq!(w[0].code, Some(crate::error::ER_DIVISION_BY_ZERO));
    }

    #[test]
    fn flags_select_truncate_and_overflow_handling() {
        let t = || Error::Truncated { what: "INTEGER", value: "1x".into() };
        assert!(EvalContext::default().truncated(t()).is_err());
        let mut c =
            EvalContext::new(EvalConfig { flags: FLAG_IGNORE_TRUNCATE, ..Default::default() });
        c.truncated(t()).unwrap();
        assert_eq!(c.take_warnings().1, 0);
        let mut c =
            EvalContext::new(EvalConfig { flags: FLAG_TRUNCATE_AS_WARNING, ..Default::default() });
        c.truncated(t()).unwrap();
        assert_eq!(c.take_warnings().1, 1);
        assert!(EvalContext::default().overflow(Error::Overflow("BIGINT")).is_err());
        let mut c =
            EvalContext::new(EvalConfig { flags: FLAG_OVERFLOW_AS_WARNING, ..Default::default() });
        c.overflow(Error::Overflow("BIGINT")).unwrap();
        let strict_insert = EvalConfig {
            flags: FLAG_IN_INSERT_STMT,
            sql_mode: MODE_STRICT_ALL_TABLES | MODE_ERROR_FOR_DIVISION_BY_ZERO,
            ..Default::default()
        };
        assert_eq!(EvalContext::new(strict_insert).division_by_zero(), Err(Error::DivisionByZero));
    }
}
