//! TiDB's data model and codecs, as TiKV's coprocessor speaks them.
//!
//! Every decoder here takes bytes from outside and checks every length before reading:
//! malformed input returns an [`Error`], never a panic.
//!
//! Contents:
//! - [`codec`]: comparable numbers, varints, memcomparable and compact bytes, and the
//!   [`Reader`] cursor every decoder reads through;
//! - [`Datum`] and the datum flags, in key, value and response mode ([`datum`]);
//! - binary JSON: decode, build, parse, print and compare as TiKV does ([`json`]);
//! - [`Decimal`] with MySQL semantics, [`Time`] with time zones ([`Tz`]) and [`Duration`];
//! - row formats v1 and v2 ([`row`]);
//! - table keys, index keys and the API v2 keyspace prefix ([`key`]);
//! - index values in every layout TiDB writes ([`index`]);
//! - the columnar chunk layout of TypeChunk responses ([`chunk`]);
//! - TiDB's `VECTOR(FLOAT32)` binary form ([`vector`]).
//!
//! ```
//! use rcop_datum::{key, row::{Row, Column, RowEncoder}};
//!
//! let mut k = Vec::new();
//! key::encode_record_key(&mut k, 53, 2);
//! assert_eq!(key::decode_record_key(&k).unwrap(), (53, 2));
//!
//! let mut value = Vec::new();
//! RowEncoder::new().int(1, 10).bytes(3, b"ab").finish(&mut value).unwrap();
//! let row = Row::parse(&value).unwrap();
//! assert_eq!(row.get(3).unwrap(), Column::V2(b"ab"));
//! assert_eq!(row.get(2).unwrap(), Column::Missing);
//! ```

mod error;

pub mod chunk;
pub mod codec;
pub mod datum;
pub mod decimal;
pub mod duration;
pub mod index;
pub mod json;
pub mod key;
pub mod row;
pub mod time;
pub mod vector;

pub use codec::Reader;
pub use datum::{Datum, Mode};
pub use decimal::{Decimal, Res};
pub use duration::Duration;
pub use error::{Error, Result};
pub use json::{Json, JsonRef, JsonType};
pub use key::KeyspaceId;
pub use time::{Time, TimeType, Tz};
pub use vector::VectorRef;
