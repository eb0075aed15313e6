//! VitePress: a site is a `.vitepress/` folder at the root or in a conventional site
//! folder (`docs/`); its heading ids are markdown-it-anchor's with VitePress's `slugify`.

use std::path::Path;

use crate::config::CONVENTIONAL_SITE_ROOTS;

/// True when `root` or one of the [`CONVENTIONAL_SITE_ROOTS`] has a `.vitepress/` folder.
pub(super) fn is_site(root: &Path) -> bool {
    std::iter::once("")
        .chain(CONVENTIONAL_SITE_ROOTS.iter().copied())
        .any(|dir| root.join(dir).join(".vitepress").is_dir())
}

/// The id VitePress gives a heading (its `slugify`, from `@mdit-vue/shared`): the text
/// decomposed (NFKD) with combining marks and control characters removed, each run of
/// white space and ASCII punctuation (`` ~`!@#$%^&*()-_+=[]{}|\;:"'<>,.?/ `` and curly
/// quotes) turned into one `-`, `-` trimmed from both ends, `_` put before a leading
/// digit, lowercased. `build.assetsInlineLimit` → `build-assetsinlinelimit` (GitHub:
/// `buildassetsinlinelimit`); `日本語` stays `日本語`.
pub fn vitepress_slug(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    let special = |c: char| {
        c.is_whitespace()
            || c.is_ascii_punctuation()
            || matches!(c, '\u{201c}' | '\u{201d}' | '\u{2018}' | '\u{2019}')
    };
    let mut out = String::with_capacity(text.len());
    for c in text.nfkd() {
        if ('\u{300}'..='\u{36f}').contains(&c) || c < '\u{20}' {
            continue;
        }
        if special(c) {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.extend(c.to_lowercase());
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{trimmed}")
    } else {
        trimmed.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vitepress_slugs() {
        assert_eq!(
            vitepress_slug("build.assetsInlineLimit"),
            "build-assetsinlinelimit"
        );
        assert_eq!(vitepress_slug("Caret, Mark & Tilde"), "caret-mark-tilde");
        assert_eq!(vitepress_slug("`--host` flag"), "host-flag");
        assert_eq!(vitepress_slug("2.0 Release"), "_2-0-release");
        assert_eq!(vitepress_slug("Café “quoted”"), "cafe-quoted");
        assert_eq!(vitepress_slug("日本語の見出し"), "日本語の見出し");
        assert_eq!(vitepress_slug("a_b"), "a-b");
    }
}
