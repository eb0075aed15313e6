//! folio-core.

pub mod search;
pub mod store;
