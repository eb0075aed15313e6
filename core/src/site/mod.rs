//! Site generators' own rules, one file per generator: what a published site makes of a
//! link or a heading that plain Markdown does not.
//!
//! - [`docfx`]: Microsoft Learn's build (docfx): redirection files, which keep links to
//!   removed pages working, and Markdig's heading ids.
//!
//! The rules of MkDocs, VitePress, Docusaurus and Hugo still live in
//! [`crate::workspace`] (`site.rs`), [`crate::links`] (`hugo.rs`, `site_move.rs`) and
//! [`crate::parse::slug`]; they move here one generator at a time.

pub mod docfx;
