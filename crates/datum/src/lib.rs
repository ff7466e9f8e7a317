//! TiDB's data model and codecs, as TiKV's coprocessor speaks them.
//!
//! Every decoder here takes bytes from outside and checks every length before reading:
//! malformed input returns an [`Error`], never a panic.
//!
//! Contents:
//! - [`codec`]: comparable numbers, varints, memcomparable and compact bytes, and the
//!   [`Reader`] cursor every decoder reads through;
//! - [`Datum`] and the datum flags, in key (comparable) and value mode;
//! - [`Decimal`] with MySQL semantics, [`Time`] and [`Duration`];
//! - row formats v1 and v2 ([`row`]);
//! - table keys, index keys and the API v2 keyspace prefix ([`key`]).

mod error;

pub mod codec;
pub mod decimal;
pub mod duration;
pub mod time;

pub use codec::Reader;
pub use decimal::Decimal;
pub use duration::Duration;
pub use error::{Error, Result};
pub use time::Time;
