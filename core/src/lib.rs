//! folio-core.
