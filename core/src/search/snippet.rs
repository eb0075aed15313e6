//! Snippets cut from a chunk's original text around the first query hit.
//!
//! FTS5's `snippet()` cannot be used: the indexed text is bigram-transformed
//! and the table is contentless. The snippet is built here instead, from the
//! text stored in `chunks`.

/// Snippet length in characters (the `…` marks not counted).
pub const SNIPPET_CHARS: usize = 200;

/// Characters of context kept before the first hit.
const CONTEXT_BEFORE: usize = 60;

/// Returns a window of about [`SNIPPET_CHARS`] characters of `text`, with
/// whitespace runs collapsed to one space, around the first case-insensitive
/// occurrence of any of `needles`; `…` marks each side that was cut.
/// Without a hit the window starts at the beginning of the text.
pub fn make_snippet(text: &str, needles: &[String]) -> String {
    let collapsed: Vec<char> = collapse_whitespace(text).chars().collect();
    let lowered_needles: Vec<Vec<char>> = needles
        .iter()
        .map(|n| lower_chars(n))
        .filter(|n: &Vec<char>| !n.is_empty())
        .collect();
    let lowered_text: Vec<char> = collapsed.iter().map(|&c| lower_char(c)).collect();
    let hit = lowered_needles
        .iter()
        .filter_map(|needle| find_chars(&lowered_text, needle))
        .min()
        .unwrap_or(0);
    let n_chars = collapsed.len();
    let mut start = hit.saturating_sub(CONTEXT_BEFORE);
    let end = (start + SNIPPET_CHARS).min(n_chars);
    // A hit near the end shifts the window back to keep it full.
    start = start.min(end.saturating_sub(SNIPPET_CHARS));
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(collapsed[start..end].iter());
    if end < n_chars {
        out.push('…');
    }
    out
}

/// The words to look for in a snippet: every included term's text and,
/// for multi-word terms, each of its words.
pub fn needles_for(terms: &[super::query::QueryTerm]) -> Vec<String> {
    let mut res = Vec::new();
    for term in terms.iter().filter(|t| !t.excluded) {
        res.push(term.text.clone());
        let words: Vec<&str> = term
            .text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        if words.len() > 1 {
            res.extend(words.iter().map(|w| w.to_string()));
        }
    }
    res
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lowercases one character to one character; characters whose lowercase is
/// longer (such as `İ`) are kept as they are so positions stay aligned.
fn lower_char(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

fn lower_chars(text: &str) -> Vec<char> {
    text.chars().map(lower_char).collect()
}

/// Returns the character index of the first occurrence of `needle` in
/// `haystack`.
fn find_chars(haystack: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needles(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn short_text_is_whole() {
        assert_eq!(
            make_snippet("Hello,\n\n  World  ", &needles(&["world"])),
            "Hello, World"
        );
    }

    #[test]
    fn window_around_hit() {
        let text = format!("{} NEEDLE {}", "a ".repeat(200), "b ".repeat(200));
        let snippet = make_snippet(&text, &needles(&["needle"]));
        let expected = format!("…{}NEEDLE {}b…", "a ".repeat(30), "b ".repeat(66));
        assert_eq!(snippet, expected);
        assert_eq!(snippet.chars().count(), SNIPPET_CHARS + 2);
    }

    #[test]
    fn hit_near_end_keeps_window_full() {
        let text = format!("{}end", "x".repeat(300));
        let snippet = make_snippet(&text, &needles(&["END"]));
        assert_eq!(snippet, format!("…{}end", "x".repeat(197)));
    }

    #[test]
    fn cjk_hit() {
        let text = format!("{}全文検索の話です。{}", "あ".repeat(300), "い".repeat(300));
        let snippet = make_snippet(&text, &needles(&["検索"]));
        assert_eq!(
            snippet,
            format!(
                "…{}全文検索の話です。{}…",
                "あ".repeat(58),
                "い".repeat(133)
            )
        );
    }

    #[test]
    fn no_hit_starts_at_beginning() {
        let text = "word ".repeat(100);
        let snippet = make_snippet(&text, &needles(&["missing"]));
        assert_eq!(snippet, format!("{}…", "word ".repeat(40)));
    }
}
