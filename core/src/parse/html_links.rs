//! The links of raw HTML: the `src` of `<img>` and the `href` of `<a>`, read with the
//! attribute syntax of HTML (WHATWG HTML 13.1.2.3), so that a `src=` inside another
//! attribute's value (`alt="use src='x'"`) or a `>` inside a quoted value is read as the
//! browser reads it.

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

/// The `src` of each `<img>` and the `href` of each `<a>` in `html`: (the tag's bytes, the
/// value's bytes), relative to `html`. Quoted values only; nothing inside an HTML comment
/// or the text of `<script>`, `<style>` or `<textarea>` (raw text to a browser). A value
/// that is empty, protocol-relative (`//host/x`), only a fragment (`#x`: tables generated
/// by all-contributors and exporters are full of anchors that exist nowhere, on purpose)
/// or holds a character reference (`&amp;`, whose bytes are not the URL's) is left out.
/// Relative values resolve as a Markdown link's destination does (GitHub and static-site
/// renderers do so).
pub(super) fn html_links(html: &str) -> Vec<(Range<usize>, Range<usize>)> {
    let bytes = html.as_bytes();
    let raw = raw_text(html);
    let mut links = Vec::new();
    let mut at = 0;
    while let Some(found) = html[at..].find('<') {
        let start = at + found;
        at = start + 1;
        if let Some(r) = raw.iter().find(|r| r.start <= start && start < r.end) {
            at = r.end;
            continue;
        }
        let name_end = html[start + 1..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .map_or(html.len(), |n| start + 1 + n);
        let name = &html[start + 1..name_end];
        let wanted = if name.eq_ignore_ascii_case("img") {
            "src"
        } else if name.eq_ignore_ascii_case("a") {
            "href"
        } else {
            continue;
        };
        // `<a-scene>` is another element.
        if !matches!(
            bytes.get(name_end),
            Some(b' ' | b'\t' | b'\n' | b'\r' | b'/' | b'>')
        ) {
            continue;
        }
        let Some((end, value)) = attribute(html, name_end, wanted) else {
            continue;
        };
        at = end;
        let Some(value) = value else { continue };
        let written = &html[value.clone()];
        let url = written.trim();
        if url.is_empty() || url.starts_with("//") || url.starts_with('#') || url.contains('&') {
            continue;
        }
        let lead = written.len() - written.trim_start().len();
        links.push((
            start..end,
            value.start + lead..value.start + lead + url.len(),
        ));
    }
    links
}

/// Reads the attributes of a start tag from `from` (just after its name): the end of the
/// tag (after its `>`) and the bytes of the quoted value of attribute `wanted` (the first
/// one, as browsers keep it), or `None` when the tag does not end well-formed.
fn attribute(html: &str, from: usize, wanted: &str) -> Option<(usize, Option<Range<usize>>)> {
    let bytes = html.as_bytes();
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c');
    let mut j = from;
    let mut value = None;
    loop {
        while j < bytes.len() && (is_space(bytes[j]) || bytes[j] == b'/') {
            j += 1;
        }
        match bytes.get(j)? {
            b'>' => return Some((j + 1, value)),
            b'<' | b'"' | b'\'' | b'=' => return None,
            _ => {}
        }
        let name_start = j;
        while j < bytes.len() && !is_space(bytes[j]) && !matches!(bytes[j], b'=' | b'>' | b'/') {
            if matches!(bytes[j], b'<' | b'"' | b'\'') {
                return None;
            }
            j += 1;
        }
        let name = &html[name_start..j];
        let mut k = j;
        while k < bytes.len() && is_space(bytes[k]) {
            k += 1;
        }
        if bytes.get(k) != Some(&b'=') {
            continue;
        }
        k += 1;
        while k < bytes.len() && is_space(bytes[k]) {
            k += 1;
        }
        match bytes.get(k)? {
            quote @ (b'"' | b'\'') => {
                let close = html[k + 1..].find(*quote as char)? + k + 1;
                if value.is_none() && name.eq_ignore_ascii_case(wanted) {
                    value = Some(k + 1..close);
                }
                j = close + 1;
            }
            b'>' => return Some((k + 1, value)),
            _ => {
                // An unquoted value runs to white space or `>`.
                while k < bytes.len() && !is_space(bytes[k]) && bytes[k] != b'>' {
                    k += 1;
                }
                j = k;
            }
        }
    }
}

/// HTML comments and the contents of `<script>`, `<style>` and `<textarea>` (raw text:
/// no tags inside), an unclosed one to the end.
fn raw_text(html: &str) -> Vec<Range<usize>> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?is)<!--.*?(?:-->|\z)|<script\b.*?(?:</script\s*>|\z)|<style\b.*?(?:</style\s*>|\z)|<textarea\b.*?(?:</textarea\s*>|\z)",
        )
        .expect("valid regex")
    });
    re.find_iter(html).map(|m| m.range()).collect()
}

#[cfg(test)]
mod tests {
    use super::html_links;

    fn found(html: &str) -> Vec<(&str, &str)> {
        html_links(html)
            .into_iter()
            .map(|(tag, value)| (&html[tag], &html[value]))
            .collect()
    }

    #[test]
    fn attributes_are_read_as_a_browser_reads_them() {
        assert_eq!(
            found("<img alt=\"use src='no.png' here\" src=\"yes.png\">"),
            [(
                "<img alt=\"use src='no.png' here\" src=\"yes.png\">",
                "yes.png"
            )]
        );
        assert_eq!(
            found("<a title=\"a > b\" href='t.md'>t</a> <A\n  HREF = \"u.md\" >u</A>"),
            [
                ("<a title=\"a > b\" href='t.md'>", "t.md"),
                ("<A\n  HREF = \"u.md\" >", "u.md")
            ]
        );
        assert_eq!(
            found("<img width=10 src=\"a.png\"/><img src=b.png>"),
            [("<img width=10 src=\"a.png\"/>", "a.png")]
        );
    }

    #[test]
    fn raw_text_comments_other_elements_and_non_paths_are_not_links() {
        for html in [
            "<!-- <img src=\"a.png\"> -->",
            "<script>\ndocument.write('<img src=\"a.png\">');\n</script>",
            "<textarea>\n<img src=\"a.png\">\n</textarea>",
            "<a-scene><a-link href=\"a.md\"></a-link></a-scene>",
            "<a href=\"#top\">up</a> <a href=\"//cdn.x/y\">c</a> <a href=\"a&amp;b.md\">q</a>",
            "<img src=\"\"> <img src=\"a.png\"",
        ] {
            assert_eq!(found(html), Vec::<(&str, &str)>::new(), "{html}");
        }
        assert_eq!(
            found("<!-- x --><img src=\"after.png\">"),
            [("<img src=\"after.png\">", "after.png")]
        );
    }
}
