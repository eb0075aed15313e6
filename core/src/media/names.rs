//! Names and Markdown references of saved images.

use crate::path_policy::check_syntax;

use super::DEFAULT_FOLDER;

/// A name derived from a URL or a file reference, made acceptable to the path policy:
/// characters it refuses become `-`, a trailing dot or space is dropped; `None` when
/// nothing acceptable is left.
pub fn clean_name(name: &str) -> Option<String> {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '/' | '\\' | ':' | '<' | '>' | '"' | '|' | '?' | '*') {
                '-'
            } else {
                c
            }
        })
        .collect();
    let cleaned = cleaned
        .trim_end_matches(['.', ' '])
        .trim_start()
        .to_string();
    if cleaned.is_empty() || check_syntax(&format!("{DEFAULT_FOLDER}/{cleaned}")).is_err() {
        return None;
    }
    Some(cleaned)
}

/// The last path segment of a URL, percent-decoded.
pub fn url_name(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let last = parsed.path_segments()?.next_back()?.to_string();
    Some(
        percent_encoding::percent_decode_str(&last)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

/// `name` with a numeric suffix before its extension: `cover.png`, `cover-2.png`, …
/// (`n` = 1 gives the name itself).
pub fn suffixed(name: &str, n: usize) -> String {
    if n <= 1 {
        return name.to_string();
    }
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => format!("{stem}-{n}.{ext}"),
        _ => format!("{name}-{n}"),
    }
}

/// Escapes a destination for a Markdown link: characters that end or change it are
/// percent-encoded; other characters (letters of any script) stay readable.
pub fn markdown_destination(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            ' ' | '(' | ')' | '[' | ']' | '<' | '>' | '%' | '#' | '?' | '`' | '"' | '\\' => {
                out.push_str(&format!("%{:02X}", c as u32));
            }
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Escapes alternative text for `![…]`.
pub fn markdown_alt(alt: &str) -> String {
    let mut out = String::with_capacity(alt.len());
    for c in alt.chars() {
        match c {
            '\\' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_references_escape_what_would_break_them() {
        assert_eq!(markdown_destination("images/cover.png"), "images/cover.png");
        assert_eq!(
            markdown_destination("images/my cover (1)#a.png"),
            "images/my%20cover%20%281%29%23a.png"
        );
        assert_eq!(markdown_destination("図/表紙.png"), "図/表紙.png");
        assert_eq!(markdown_alt("a [b] \\ c\nd"), "a \\[b\\] \\\\ c d");
    }

    #[test]
    fn derived_names_are_cleaned_or_dropped() {
        assert_eq!(clean_name("cover.png").as_deref(), Some("cover.png"));
        assert_eq!(clean_name("a:b?.png").as_deref(), Some("a-b-.png"));
        assert_eq!(clean_name("photo. "), Some("photo".to_string()));
        assert_eq!(clean_name(".."), None);
        assert_eq!(clean_name("CON.png"), None);
        assert_eq!(
            url_name("https://x.example/a/%E8%A1%A8%E7%B4%99.png?sig=1").as_deref(),
            Some("表紙.png")
        );
        assert_eq!(url_name("https://x.example/").as_deref(), Some(""));
        assert_eq!(suffixed("cover.png", 1), "cover.png");
        assert_eq!(suffixed("cover.png", 2), "cover-2.png");
        assert_eq!(suffixed(".hidden", 3), ".hidden-3");
        assert_eq!(suffixed("plain", 2), "plain-2");
    }
}
