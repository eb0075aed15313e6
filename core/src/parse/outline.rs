//! A document's outline (its headings and title) by a line scan, without the full parser.
//!
//! [`crate::parse::parse`] is the rule; this is a fast approximation of its headings and
//! [`Parsed::title`](super::Parsed::title), about a hundred times cheaper, for answers
//! that cannot wait for every document of a large workspace to be parsed (`folio lsp`
//! answers `workspace/symbol` from it while it loads).
//!
//! It finds ATX headings (CommonMark 4.2), also inside block quotes, and setext headings
//! (4.3) whose paragraph starts in column 0, outside fenced code (4.5), `$$` math blocks, HTML
//! blocks (4.6, ended by a blank line, or by `-->` for a comment) and the frontmatter. Its heading text drops
//! code-span backticks, emphasis markers, backslash escapes, HTML tags, link and image
//! destinations, the closing `#` sequence and a trailing attribute list (`{#id}`), as the full
//! parse does.
//! Where it differs from the full parse (rare in notes): headings in list items and in
//! MkDocs admonitions and content tabs are missed; a setext underline after a lazy continuation line, reference links, entities
//! other than the five XML ones, and emphasis rules beyond "drop the markers" read differently.

use std::ops::Range;

/// One heading found by the line scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineHeading {
    /// Level 1–6.
    pub level: u8,
    /// The heading's text with inline markup removed (see the module docs).
    pub text: String,
    /// Bytes of the heading line(s), without the line break: as [`super::Heading::range`].
    pub range: Range<usize>,
}

/// The headings and title of a document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outline {
    /// The frontmatter `title`, else the first level-1 heading (as
    /// [`Parsed::title`](super::Parsed::title)).
    pub title: Option<String>,
    /// Whether `title` is the frontmatter's.
    pub frontmatter_title: bool,
    /// Headings in document order.
    pub headings: Vec<OutlineHeading>,
}

/// A line: its bytes in the text (without the line break) and its content.
struct Line<'a> {
    start: usize,
    text: &'a str,
}

fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let mut start = 0;
    text.split_inclusive('\n').map(move |raw| {
        let line = Line {
            start,
            text: raw.trim_end_matches(['\n', '\r']),
        };
        start += raw.len();
        line
    })
}

/// Up to three leading spaces; `None` for four or more (indented code) or a tab.
fn indent(line: &str) -> Option<usize> {
    let n = line.len() - line.trim_start_matches(' ').len();
    (n <= 3 && !line[n..].starts_with('\t')).then_some(n)
}

/// A fence opener (4.5): the fence character, the run's length and, for backticks, an
/// info string without backticks. `$$` opens a math block.
fn fence_open(line: &str) -> Option<(u8, usize)> {
    let rest = &line[indent(line)?..];
    let c = *rest.as_bytes().first()?;
    if !matches!(c, b'`' | b'~' | b'$') {
        return None;
    }
    let run = rest.bytes().take_while(|&b| b == c).count();
    let needed = if c == b'$' { 2 } else { 3 };
    if run < needed || (c == b'`' && rest[run..].contains('`')) {
        return None;
    }
    Some((c, run))
}

fn fence_closes(line: &str, (c, run): (u8, usize)) -> bool {
    let Some(n) = indent(line) else {
        return false;
    };
    let rest = &line[n..];
    let len = rest.bytes().take_while(|&b| b == c).count();
    len >= run && rest[len..].trim().is_empty()
}

/// An ATX heading (4.2): its level and the bytes of its raw text within `line`.
fn atx(line: &str) -> Option<(u8, Range<usize>)> {
    let start = indent(line)?;
    let rest = &line[start..];
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let body_start = start + level;
    let mut body = &line[body_start..];
    body = body.trim_end_matches([' ', '\t']);
    // The closing sequence: `#`s preceded by white space, or the whole body.
    let without = body.trim_end_matches('#');
    if without.len() < body.len() && (without.is_empty() || without.ends_with([' ', '\t'])) {
        body = without;
    }
    let lead = body.len() - body.trim_start_matches([' ', '\t']).len();
    let body = body.trim_matches([' ', '\t']);
    Some((
        level as u8,
        body_start + lead..body_start + lead + body.len(),
    ))
}

/// A setext underline (4.3): the level it gives.
fn setext_underline(line: &str) -> Option<u8> {
    let rest = line[indent(line)?..].trim_end_matches([' ', '\t']);
    let c = *rest.as_bytes().first()?;
    (matches!(c, b'=' | b'-') && rest.bytes().all(|b| b == c)).then_some(if c == b'=' {
        1
    } else {
        2
    })
}

/// A thematic break (4.1): three or more `*`, `-` or `_`, spaces between allowed.
fn thematic_break(line: &str) -> bool {
    let Some(n) = indent(line) else {
        return false;
    };
    let rest: Vec<u8> = line[n..]
        .bytes()
        .filter(|b| !matches!(b, b' ' | b'\t'))
        .collect();
    rest.len() >= 3 && matches!(rest[0], b'*' | b'-' | b'_') && rest.iter().all(|&b| b == rest[0])
}

/// A line that starts a block other than a paragraph: the line after it cannot make it a
/// setext heading.
fn starts_other_block(line: &str) -> bool {
    let Some(n) = indent(line) else {
        return true;
    };
    let rest = &line[n..];
    let list_marker = |s: &str| {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let s = if (1..=9).contains(&digits) && s[digits..].starts_with(['.', ')']) {
            &s[digits + 1..]
        } else if s.starts_with(['-', '+', '*']) {
            &s[1..]
        } else {
            return false;
        };
        s.is_empty() || s.starts_with([' ', '\t'])
    };
    rest.starts_with(['>', '|', '<']) || list_marker(rest) || thematic_break(line)
}

/// An HTML block start (4.6): whether it ends at a `-->` (a comment) rather than at a
/// blank line.
fn html_block(line: &str) -> Option<bool> {
    let rest = &line[indent(line)?..];
    if rest.starts_with("<!--") {
        return Some(true);
    }
    let tag = rest.strip_prefix('<')?;
    let tag = tag.strip_prefix('/').unwrap_or(tag);
    tag.starts_with(|c: char| c.is_ascii_alphabetic() || c == '!' || c == '?')
        .then_some(false)
}

/// The frontmatter (YAML `---` or TOML `+++` at the very start, closed by the same line,
/// or `...` for YAML): its source and the byte where the body starts.
fn frontmatter(text: &str) -> Option<(bool, &str, usize)> {
    let mut it = lines(text);
    let first = it.next()?;
    let yaml = match first.text.trim_end() {
        "---" => true,
        "+++" => false,
        _ => return None,
    };
    let body = first.start + first.text.len();
    for line in it {
        let t = line.text.trim_end();
        if t == if yaml { "---" } else { "+++" } || (yaml && t == "...") {
            let end = text[line.start..]
                .find('\n')
                .map_or(text.len(), |i| line.start + i + 1);
            return Some((yaml, &text[body..line.start], end));
        }
    }
    None
}

/// The outline of `text` (see the module docs for what it finds).
pub fn outline(text: &str) -> Outline {
    let mut out = Outline::default();
    let mut skip_to = 0;
    if let Some((yaml, source, end)) = frontmatter(text) {
        let meta = if yaml {
            super::frontmatter::read_yaml(source)
        } else {
            super::frontmatter::read_toml(source)
        };
        out.title = meta
            .ok()
            .flatten()
            .and_then(|m| m.get("title")?.as_str().map(str::to_string))
            .filter(|t| !t.trim().is_empty());
        out.frontmatter_title = out.title.is_some();
        skip_to = end;
    }
    let mut fence: Option<(u8, usize)> = None;
    // An HTML block: `true` when a comment (ends at `-->`), `false` when it ends at a blank line.
    let mut html: Option<bool> = None;
    // The paragraph a setext underline would turn into a heading: its first line's start.
    let mut paragraph: Option<usize> = None;
    let mut previous_end = 0;
    for line in lines(text).filter(|l| l.start >= skip_to) {
        let t = line.text;
        if let Some(f) = fence {
            if fence_closes(t, f) {
                fence = None;
            }
            continue;
        }
        if let Some(comment) = html {
            if comment {
                if t.contains("-->") {
                    html = None;
                }
            } else if t.trim().is_empty() {
                html = None;
            }
            continue;
        }
        if t.trim().is_empty() {
            paragraph = None;
            continue;
        }
        if let Some(first) = paragraph
            && let Some(level) = setext_underline(t)
        {
            let raw = &text[first..previous_end];
            let joined: Vec<&str> = raw.lines().map(str::trim).collect();
            out.headings.push(OutlineHeading {
                level,
                text: heading_text(&joined.join(" ")),
                range: first..line.start + t.trim_end().len(),
            });
            paragraph = None;
            continue;
        }
        if let Some(f) = fence_open(t) {
            fence = Some(f);
            paragraph = None;
            continue;
        }
        // A block quote's markers, then what it holds.
        let mut quoted = t;
        let mut quote_offset = 0;
        while let Some(n) = indent(quoted).filter(|&n| quoted[n..].starts_with('>')) {
            let after = &quoted[n + 1..];
            let skip = n + 1 + usize::from(after.starts_with(' '));
            quote_offset += skip;
            quoted = &quoted[skip..];
        }
        if let Some((level, body)) = atx(quoted) {
            // A quoted heading's range starts at its `#`, as the parser's node does.
            let start = if quote_offset > 0 {
                line.start + quote_offset + indent(quoted).unwrap_or(0)
            } else {
                line.start
            };
            out.headings.push(OutlineHeading {
                level,
                text: heading_text(&quoted[body]),
                range: start..line.start + quote_offset + quoted.trim_end().len(),
            });
            paragraph = None;
            continue;
        }
        if paragraph.is_none()
            && let Some(comment) = html_block(t)
        {
            // A comment closed on its own first line is over at once.
            html = (!comment || !t.contains("-->")).then_some(comment);
            continue;
        }
        if starts_other_block(t) {
            paragraph = None;
        } else if paragraph.is_none() {
            paragraph = Some(line.start);
        }
        previous_end = line.start + t.len();
    }
    if out.title.is_none() {
        out.title = out
            .headings
            .iter()
            .find(|h| h.level == 1)
            .map(|h| h.text.clone())
            .filter(|t| !t.trim().is_empty());
    }
    out
}

impl Outline {
    /// The title of the document at `path` by the rule of
    /// [`Parsed::title_for`](super::Parsed::title_for) (`vault`: file names title notes).
    pub fn title_for(&self, path: &str, vault: bool) -> String {
        match &self.title {
            Some(t) if self.frontmatter_title || !vault => t.clone(),
            _ => super::file_title(path),
        }
    }
}

/// A heading's raw text as plain text (see the module docs), with a trailing attribute
/// list (`{#id}`, `{ #id .class }`) split off as the full parse does.
fn heading_text(raw: &str) -> String {
    let plain = plain_inline(raw);
    super::attribute_list::split_attribute_list(plain.trim()).text
}

/// Inline markup removed from `raw`: code-span backticks, emphasis and strikethrough
/// markers, backslash escapes, HTML tags, the XML entities, link and image destinations.
fn plain_inline(raw: &str) -> String {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    // The length of the tilde run that closes an open strikethrough.
    let mut closing: Option<usize> = None;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\\' if b.get(i + 1).is_some_and(u8::is_ascii_punctuation) => {
                out.push(b[i + 1] as char);
                i += 2;
            }
            b'`' => {
                let run = b[i..].iter().take_while(|&&x| x == b'`').count();
                let fence = &raw[i..i + run];
                match find_run(&raw[i + run..], fence) {
                    Some(end) => {
                        let code = &raw[i + run..i + run + end];
                        let code = if code.len() > 2
                            && code.starts_with(' ')
                            && code.ends_with(' ')
                            && !code.trim().is_empty()
                        {
                            &code[1..code.len() - 1]
                        } else {
                            code
                        };
                        out.push_str(code);
                        i += run + end + run;
                    }
                    None => {
                        out.push_str(fence);
                        i += run;
                    }
                }
            }
            b'*' => i += 1,
            // Strikethrough (GFM): a run of one or two tildes closed by the same run later;
            // any other tilde is text.
            b'~' => {
                let run = b[i..].iter().take_while(|&&x| x == b'~').count();
                if closing == Some(run) {
                    closing = None;
                } else if closing.is_none()
                    && run <= 2
                    && find_marker_run(&raw[i + run..], run, b'~').is_some()
                {
                    closing = Some(run);
                } else {
                    out.push_str(&raw[i..i + run]);
                }
                i += run;
            }
            b'_' => {
                let prev = raw[..i].chars().next_back();
                let next = raw[i + 1..].chars().next();
                if prev.is_some_and(char::is_alphanumeric)
                    && next.is_some_and(char::is_alphanumeric)
                {
                    out.push('_');
                }
                i += 1;
            }
            b'!' if b.get(i + 1) == Some(&b'[') => match link_parts(&raw[i + 1..]) {
                Some((label, len)) => {
                    out.push_str(&plain_inline(label));
                    i += 1 + len;
                }
                None => {
                    out.push('!');
                    i += 1;
                }
            },
            b'[' if b.get(i + 1) != Some(&b'[') => match link_parts(&raw[i..]) {
                Some((label, len)) => {
                    out.push_str(&plain_inline(label));
                    i += len;
                }
                None => {
                    out.push('[');
                    i += 1;
                }
            },
            b'<' => match raw[i + 1..].find('>') {
                Some(end) if is_tag_or_autolink(&raw[i + 1..i + 1 + end]) => {
                    let inner = &raw[i + 1..i + 1 + end];
                    // An autolink: its text is the address; a tag has none.
                    if (inner.contains(':') || inner.contains('@')) && !inner.contains(' ') {
                        out.push_str(inner);
                    }
                    i += end + 2;
                }
                _ => {
                    out.push('<');
                    i += 1;
                }
            },
            b'&' => {
                let entity = [
                    ("&amp;", '&'),
                    ("&lt;", '<'),
                    ("&gt;", '>'),
                    ("&quot;", '"'),
                    ("&#39;", '\''),
                ]
                .into_iter()
                .find(|(name, _)| raw[i..].starts_with(name));
                match entity {
                    Some((name, ch)) => {
                        out.push(ch);
                        i += name.len();
                    }
                    None => {
                        out.push('&');
                        i += 1;
                    }
                }
            }
            _ => {
                let ch = raw[i..].chars().next().expect("in bounds");
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    out
}

/// The byte offset in `s` of the next run of exactly `fence`'s backticks.
fn find_run(s: &str, fence: &str) -> Option<usize> {
    find_marker_run(s, fence.len(), b'`')
}

/// The byte offset in `s` of the next run of exactly `len` bytes `marker`.
fn find_marker_run(s: &str, len: usize, marker: u8) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == marker {
            let run = b[i..].iter().take_while(|&&x| x == marker).count();
            if run == len {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

/// `[label](destination)` at the start of `s`: the label and the bytes it all takes.
fn link_parts(s: &str) -> Option<(&str, usize)> {
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let rest = s[close + 1..].strip_prefix('(')?;
    let end = rest.find(')')?;
    Some((&s[1..close], close + 2 + end + 1))
}

/// The inside of `<…>` is an HTML tag or an autolink (not `a < b > c`).
fn is_tag_or_autolink(inner: &str) -> bool {
    let name = inner.strip_prefix('/').unwrap_or(inner);
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && (name.contains(':')
            || name.contains('@')
            || name
                .split([' ', '/'])
                .next()
                .is_some_and(|t| t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Headings as (level, text, range).
    type Heads = Vec<(u8, String, Range<usize>)>;

    fn heads(text: &str) -> Heads {
        outline(text)
            .headings
            .into_iter()
            .map(|h| (h.level, h.text, h.range))
            .collect()
    }

    /// The headings (level, text, range) and title of the full parse.
    fn parsed(text: &str) -> (Heads, Option<String>) {
        let p = crate::parse::parse(text);
        let title = p.title();
        (
            p.headings
                .into_iter()
                .map(|h| (h.level, h.text, h.range))
                .collect(),
            title,
        )
    }

    #[test]
    fn finds_atx_and_setext_headings_outside_code_html_math_and_frontmatter() {
        let text = "---\ntitle: The *title*\n---\n# One `code` **bold** {#id}\n\n\
                    ```sh\n# not a heading\n```\n\nSome *para*\ntext\n===\n\n\
                    <div>\n# inside html\n</div>\n\n$$\n# math\n$$\n\n\
                    > ## Quoted [link](x.md) ##\n\n    # indented code\n\n- item\n---\n\
                    ###### Six \\# <b>tag</b> &amp; ![alt](i.png)\n#7 not\n\n  ## Indented ##  \n";
        let want = vec![
            (1, "One code bold".to_string(), 27..54),
            (1, "Some para text".to_string(), 83..103),
            (2, "Quoted link".to_string(), 149..174),
            (6, "Six # tag & alt".to_string(), 208..252),
            (2, "Indented".to_string(), 261..277),
        ];
        assert_eq!(heads(text), want);
        assert_eq!(outline(text).title.as_deref(), Some("The *title*"));
        // The full parse agrees on every heading, range and the title.
        assert_eq!(parsed(text), (want, Some("The *title*".to_string())));
    }

    #[test]
    fn tildes_are_text_unless_they_pair_as_strikethrough() {
        let text = "# ~\n\n## ~zqx\n\n## Zqx ~\n\n## zqx ~~~\n\n## a ~~gone~~ b\n\n## c ~x~ d\n";
        let want = vec!["~", "~zqx", "Zqx ~", "zqx ~~~", "a gone b", "c x d"];
        let got: Vec<String> = outline(text).headings.into_iter().map(|h| h.text).collect();
        assert_eq!(got, want);
        // As the full parse reads them.
        let full: Vec<String> = crate::parse::parse(text)
            .headings
            .into_iter()
            .map(|h| h.text)
            .collect();
        assert_eq!(full, want);
    }

    #[test]
    fn title_is_the_frontmatter_title_else_the_first_level_one_heading_else_the_file_name() {
        assert_eq!(outline("## Two\n\n# One\n").title.as_deref(), Some("One"));
        // A section heading never titles the note: the file name does.
        assert_eq!(outline("## Two\n").title, None);
        assert_eq!(
            outline("## Two\n").title_for("a/Meeting notes.md", false),
            "Meeting notes"
        );
        assert_eq!(outline("no headings\n").title, None);
        // In a vault the file name comes before an H1, not before the frontmatter.
        assert_eq!(outline("# One\n").title_for("Garden.md", true), "Garden");
        assert_eq!(outline("# One\n").title_for("Garden.md", false), "One");
        let titled = "---\ntitle: Plants\n---\n# One\n";
        assert_eq!(outline(titled).title_for("Garden.md", true), "Plants");
        // The full parse by the same rule.
        for (text, path, vault) in [
            ("## Two\n", "a/Meeting notes.md", false),
            ("# One\n", "Garden.md", true),
            ("# One\n", "Garden.md", false),
            (titled, "Garden.md", true),
            ("---\ntitle: ''\n---\n## Two\n", "x.markdown", false),
            ("# \n\nempty heading\n", "Empty.md", false),
        ] {
            assert_eq!(
                crate::parse::parse(text).title_for(path, vault),
                outline(text).title_for(path, vault),
                "{text:?}"
            );
        }
        // A `---` after a paragraph is a setext underline, not frontmatter.
        assert_eq!(heads("text\n---\n"), vec![(2, "text".into(), 0..8)]);
    }

    #[test]
    fn agrees_with_the_full_parse_on_the_fixture_notes() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures");
        let mut stack = vec![std::path::PathBuf::from(dir)];
        let (mut files, mut same, mut total, mut titles) = (0, 0, 0, 0);
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "md")
                    && let Ok(text) = std::fs::read_to_string(&p)
                {
                    let (full, title) = parsed(&text);
                    let fast = heads(&text);
                    files += 1;
                    total += full.len();
                    same += full.iter().filter(|h| fast.contains(h)).count();
                    titles += usize::from(outline(&text).title == title);
                }
            }
        }
        assert!(files > 50, "{files} fixture notes");
        // Measured: see docs/lsp.md ("Start-up"). A drop here means the scan drifted
        // from the parser.
        assert!(same * 100 >= total * 97, "{same} of {total} headings agree");
        assert!(
            titles * 100 >= files * 97,
            "{titles} of {files} titles agree"
        );
    }
}
