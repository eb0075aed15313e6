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

/// The first of `base`, `base-1`, `base-2`, … not in `used`, added to it: how markdown-it-anchor
/// (VitePress) and Markdig (docfx) make a repeated heading id unique.
pub fn first_free_id(base: &str, used: &mut std::collections::HashSet<String>) -> String {
    let mut candidate = base.to_owned();
    let mut n = 1;
    while used.contains(&candidate) {
        candidate = format!("{base}-{n}");
        n += 1;
    }
    used.insert(candidate.clone());
    candidate
}
