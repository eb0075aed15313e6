//! Tests of lexical search.
