//! Human-readable sizes and durations for configuration files: `"512MiB"`, `"1.5GB"`,
//! `"100ms"`, `"1h30m"`.
//!
//! The grammar is TiKV's (`components/tikv_util/src/config.rs`, `ReadableSize` and
//! `ReadableDuration`), so a value that TiKV reads means the same here; the few places where
//! this crate is stricter or finer are listed on [`ReadableSize`] and [`ReadableDuration`].
//! Both types parse with [`FromStr`](std::str::FromStr), print with `Display` in a form that
//! parses back to the same value, and (de)serialize through serde as those strings (a size also
//! deserializes from a plain number of bytes).
//!
//! ```
//! use std::time::Duration;
//! use rcop_units::{ReadableDuration, ReadableSize};
//!
//! let size: ReadableSize = "1.5GB".parse()?;
//! assert_eq!(size, ReadableSize::mib(1536));
//! assert_eq!(size.to_string(), "1536MiB");
//!
//! let wait: ReadableDuration = "1h30m".parse()?;
//! assert_eq!(wait.as_duration(), Duration::from_secs(5400));
//! assert_eq!(ReadableDuration::millis(90_500).to_string(), "1m30s500ms");
//!
//! assert!("100".parse::<ReadableDuration>().is_err(), "a duration needs a unit");
//! # Ok::<(), rcop_units::ParseError>(())
//! ```

#![warn(missing_docs)]

mod duration;
mod error;
pub mod log;
mod number;
mod size;

pub use duration::ReadableDuration;
pub use error::ParseError;
pub use size::ReadableSize;
