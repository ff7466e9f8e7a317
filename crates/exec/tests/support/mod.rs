//! Shared test and bench helpers.
#![allow(dead_code)]
#![expect(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test fixtures are known-valid; a malformed corpus file should fail loudly"
)]

pub mod alloc;
pub mod corpus;
pub mod dag;
pub mod items;
pub mod reference;
pub mod tpch;
