//! The source scanner: Obsidian/Foam wiki links (`[[target#heading|alias]]`, `![[embed]]`),
//! block ids (`^id` at the end of a block), tags (`#tag`, and the frontmatter's `tags`),
//! `[text][label]` references whose label has no definition and `[^label]` footnotes with
//! none. markdown-rs does not report these, so they are found in the source, outside code,
//! HTML, math, frontmatter, Obsidian comments and the links the tree walk already found; in YAML frontmatter
//! only a wiki link that is a property's whole quoted value, as Obsidian reads properties
//! ([`super::frontmatter::property_link_quote`]).

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

use super::link_text::{is_escaped, normalize_label};
use super::parsed::{Link, LinkKind, Parsed, Tag};
use super::tag_syntax;

/// Adds the wiki links, block ids, tags and undefined references of `text` to `parsed`.
///
/// `excluded` are the ranges of code, HTML, math and frontmatter; `covered` those of the
/// links, references and definitions the tree walk found. Returns `excluded` with what
/// the scan adds to it: inline `<code>` elements, Obsidian comments and inline math.
pub(super) fn scan(
    text: &str,
    parsed: &mut Parsed,
    excluded: &[Range<usize>],
    covered: Vec<Range<usize>>,
) -> Vec<Range<usize>> {
    // Text between inline `<code>` and `</code>` tags is code, as in a code span.
    let mut excluded = excluded.to_vec();
    excluded.extend(
        html_code_regex()
            .find_iter(text)
            .map(|m| m.start()..m.end()),
    );
    // Obsidian comments and inline math hide what is in them: no link, tag or definition
    // there is one a reader follows (`opaque_spans.rs`). Most documents have neither
    // delimiter, and pay for nothing more than the search for one.
    if text.contains("%%") || text.contains('$') {
        hide_opaque_spans(text, parsed, &mut excluded, &covered);
    }

    let mut scanner = Scanner {
        text,
        parsed,
        excluded: &excluded,
        covered,
    };
    scanner.scan_text_constructs();
    excluded
}

/// Drops the links inside Obsidian comments and inline math, marks the definitions there
/// as comments, and adds those spans to `excluded`. A delimiter inside code, HTML, a link
/// the walk found (`covered`) or a wiki link is part of it (`[[A$AP Rocky]]`, `?$top=5`).
fn hide_opaque_spans(
    text: &str,
    parsed: &mut Parsed,
    excluded: &mut Vec<Range<usize>>,
    covered: &[Range<usize>],
) {
    let mut not_delimiters = excluded.clone();
    not_delimiters.extend(covered.iter().cloned());
    not_delimiters.extend(wiki_regex().find_iter(text).map(|m| m.range()));
    let not_delimiters = RangeIndex::new(not_delimiters);
    let tables: Vec<Range<usize>> = parsed
        .elements
        .iter()
        .filter(|e| e.kind == crate::pointer::ElementKind::Table)
        .map(|e| e.range.clone())
        .collect();
    let opaque = super::opaque_spans::opaque_spans(
        text,
        &|at| not_delimiters.overlaps(&(at..at + 1)),
        &tables,
    );
    if opaque.is_empty() {
        return;
    }
    let hidden = RangeIndex::new(opaque.clone());
    let inside = |r: &Range<usize>| hidden.overlaps(&(r.start..r.start + 1));
    parsed.links.retain(|l| !inside(&l.range));
    for definition in &mut parsed.definitions {
        definition.comment |= inside(&definition.range);
    }
    excluded.extend(opaque);
}

/// The state of one scan.
struct Scanner<'a> {
    text: &'a str,
    parsed: &'a mut Parsed,
    excluded: &'a [Range<usize>],
    covered: Vec<Range<usize>>,
}

impl Scanner<'_> {
    /// An index of the ranges where nothing else can be a link, leaving out `skip`.
    fn taken(&self, skip: &std::collections::HashSet<(usize, usize)>) -> RangeIndex {
        RangeIndex::new(
            self.excluded
                .iter()
                .chain(&self.covered)
                .filter(|r| !skip.contains(&(r.start, r.end)))
                .cloned()
                .collect(),
        )
    }

    /// Finds wiki links, block ids and undefined references in the source outside code,
    /// HTML, math and links the parser already found.
    fn scan_text_constructs(&mut self) {
        let text = self.text;
        // `[[x]]` where `[x]` has a definition (Foam writes one per wiki link) was parsed as a
        // reference inside brackets: it is the wiki link that was meant.
        let bracketed_refs: std::collections::HashSet<(usize, usize)> = self
            .parsed
            .links
            .iter()
            .filter(|l| {
                l.kind == LinkKind::Reference
                    && l.range.start > 0
                    && text.as_bytes()[l.range.start - 1] == b'['
                    && text.as_bytes().get(l.range.end) == Some(&b']')
            })
            .map(|l| (l.range.start, l.range.end))
            .collect();
        let taken = self.taken(&bracketed_refs);
        let frontmatter = yaml_frontmatter(text, self.parsed);
        let mut replaced: std::collections::HashSet<(usize, usize)> =
            std::collections::HashSet::new();
        let mut wiki_ranges = Vec::new();
        for m in wiki_regex().captures_iter(text) {
            let whole = m.get(0).expect("group 0 always matches");
            let range = whole.start()..whole.end();
            let in_frontmatter = frontmatter
                .as_ref()
                .is_some_and(|fm| fm.start <= range.start && range.end <= fm.end);
            let skip = if in_frontmatter {
                let fm = frontmatter.as_ref().expect("in frontmatter");
                m.get(1).is_some()
                    || super::frontmatter::property_link_quote(text, fm, &range).is_none()
            } else {
                is_escaped(text, range.start) || taken.overlaps(&range)
            };
            if skip {
                continue;
            }
            let bracket_start = if m.get(1).is_some() {
                range.start + 1
            } else {
                range.start
            };
            let inner_ref = (bracket_start + 1, range.end - 1);
            if bracketed_refs.contains(&inner_ref) {
                replaced.insert(inner_ref);
            }
            let embed = m.get(1).is_some();
            let inner = m.get(2).expect("wiki regex has group 2");
            let body = inner.as_str();
            let target_part = body.split('|').next().unwrap_or("");
            // Inside a table `\|` escapes the pipe that starts the alias (Obsidian):
            // `[[Weekly review\|Review]]` links to `Weekly review`.
            let target_part = match target_part.strip_suffix('\\') {
                Some(t) if body.len() > target_part.len() => t,
                _ => target_part,
            };
            let (target, fragment) = match target_part.find('#') {
                Some(i) => (&target_part[..i], Some(target_part[i + 1..].trim())),
                None => (target_part, None),
            };
            let target_trimmed = target.trim();
            let lead = target.len() - target.trim_start().len();
            let dest_range = inner.start() + lead..inner.start() + lead + target_trimmed.len();
            let fragment_range = fragment.map(|f| {
                inner.start() + target.len() + 1..inner.start() + target.len() + 1 + f.len()
            });
            wiki_ranges.push(range.clone());
            self.parsed.links.push(Link {
                kind: if embed {
                    LinkKind::WikiEmbed
                } else {
                    LinkKind::Wiki
                },
                range,
                dest_range: Some(dest_range),
                dest: target_trimmed.to_string(),
                fragment: fragment.map(str::to_string),
                fragment_range,
                label: Some(normalize_label(body)),
                external: false,
            });
        }
        if !replaced.is_empty() {
            self.parsed.links.retain(|l| {
                !(l.kind == LinkKind::Reference && replaced.contains(&(l.range.start, l.range.end)))
            });
            self.covered
                .retain(|r| !replaced.contains(&(r.start, r.end)));
        }
        self.covered.extend(wiki_ranges);
        if text.contains("ref") && text.contains("{{") {
            self.scan_shortcode_refs();
        }
        let taken = self.taken(&std::collections::HashSet::new());
        for m in block_id_regex().captures_iter(text) {
            let id = m.get(1).expect("block id regex has group 1");
            let range = id.start() - 1..id.end();
            if !taken.overlaps(&range) {
                self.parsed.block_ids.push((id.as_str().to_string(), range));
            }
        }
        for m in reference_regex().captures_iter(text) {
            let whole = m.get(0).expect("group 0 always matches");
            let mut range = whole.start()..whole.end();
            if taken.overlaps(&range) || is_escaped(text, range.start) {
                continue;
            }
            // `![alt][label]`: an image reference, the `!` included.
            if text[..range.start].ends_with('!') && !is_escaped(text, range.start - 1) {
                range.start -= 1;
            }
            // `a[0][1]` is code-like text, not a reference: require a non-word character before.
            if text[..range.start]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == ']' || c == '!')
            {
                continue;
            }
            let text_label = m.get(1).expect("group 1").as_str();
            let label = m
                .get(2)
                .map(|g| g.as_str())
                .filter(|l| !l.is_empty())
                .unwrap_or(text_label);
            if label.trim().is_empty() {
                continue;
            }
            self.push_undefined(range, label);
        }
        let taken = self.taken(&std::collections::HashSet::new());
        for m in footnote_regex().find_iter(text) {
            let range = m.start()..m.end();
            if taken.overlaps(&range) || is_escaped(text, range.start) {
                continue;
            }
            let label = &text[range.start + 2..range.end - 1];
            self.push_undefined(range, &format!("^{label}"));
        }
        // The footnotes just added hold no white space, so no tag: the same index serves.
        self.scan_tags(&taken);
    }

    /// Finds Hugo's `ref` and `relref` shortcodes outside code, HTML and math
    /// ([`LinkKind::Shortcode`]): `{{< ref "path" >}}`, `{{% relref "path#id" %}}`, the path
    /// in double quotes or backquotes, or bare.
    fn scan_shortcode_refs(&mut self) {
        static RE: OnceLock<Regex> = OnceLock::new();
        let re = RE.get_or_init(|| {
            Regex::new(
                r#"\{\{([<%])-?\s*(?:rel)?ref\s+(?:"([^"\r\n]*)"|`([^`\r\n]*)`|([^\s"`%>}]+))\s*-?(?:>|%)\}\}"#,
            )
            .expect("valid regex")
        });
        let taken = RangeIndex::new(self.excluded.to_vec());
        let mut found = Vec::new();
        for m in re.captures_iter(self.text) {
            let whole = m.get(0).expect("group 0 always matches");
            let range = whole.start()..whole.end();
            // The opening braces decide: a backquoted path is a code span to CommonMark.
            if taken.overlaps(&(range.start..range.start + 1)) {
                continue;
            }
            let Some(path) = m.get(2).or_else(|| m.get(3)).or_else(|| m.get(4)) else {
                continue;
            };
            found.push((range, path.start()..path.end()));
        }
        for (range, path) in found {
            let url = &self.text[path.clone()];
            let link = super::inline::link(
                self.text,
                LinkKind::Shortcode,
                range.clone(),
                Some(path),
                url,
                None,
            );
            self.parsed.links.push(link);
            self.covered.push(range);
        }
    }

    /// Finds the frontmatter's tags and the `#tag`s of the text outside `taken` (code,
    /// HTML, math, the frontmatter and links; `tag_syntax.rs` has the rule).
    fn scan_tags(&mut self, taken: &RangeIndex) {
        let text = self.text;
        if let (Some(fm), Some(block)) = (
            self.parsed.frontmatter.as_ref(),
            self.parsed
                .elements
                .iter()
                .find(|e| e.kind == crate::pointer::ElementKind::Frontmatter),
        ) {
            self.parsed.tags = tag_syntax::frontmatter_tags(text, fm, block.range.clone());
        }
        for (range, name) in tag_syntax::inline_candidates(text) {
            if !taken.overlaps(&range) {
                self.parsed.tags.push(Tag {
                    name: name.to_string(),
                    range,
                    in_frontmatter: false,
                    located: true,
                });
            }
        }
    }

    fn push_undefined(&mut self, range: Range<usize>, label: &str) {
        self.covered.push(range.clone());
        self.parsed.links.push(Link {
            kind: LinkKind::UndefinedReference,
            range,
            dest_range: None,
            dest: String::new(),
            fragment: None,
            fragment_range: None,
            label: Some(normalize_label(label)),
            external: false,
        });
    }
}

/// Byte ranges sorted by start with a running maximum of their ends, so "does this
/// range overlap any of them" takes a binary search instead of a scan.
struct RangeIndex {
    starts: Vec<usize>,
    max_end: Vec<usize>,
}

impl RangeIndex {
    fn new(mut ranges: Vec<Range<usize>>) -> RangeIndex {
        ranges.sort_by_key(|r| r.start);
        let starts = ranges.iter().map(|r| r.start).collect();
        let mut max_end = Vec::with_capacity(ranges.len());
        let mut running = 0;
        for r in &ranges {
            running = running.max(r.end);
            max_end.push(running);
        }
        RangeIndex { starts, max_end }
    }

    /// True when a range overlaps `range` (shares at least one byte).
    fn overlaps(&self, range: &Range<usize>) -> bool {
        // Ranges starting before `range.end` overlap it iff one of them ends after `range.start`.
        let n = self.starts.partition_point(|&s| s < range.end);
        n > 0 && self.max_end[n - 1] > range.start
    }
}

/// The byte range of the document's YAML frontmatter, when markdown-rs read one
/// ([`super::frontmatter::yaml_range`]).
fn yaml_frontmatter(text: &str, parsed: &Parsed) -> Option<Range<usize>> {
    parsed
        .elements
        .iter()
        .any(|e| e.kind == crate::pointer::ElementKind::Frontmatter)
        .then(|| super::frontmatter::yaml_range(text))
        .flatten()
}

/// An inline `<code>…</code>` on one line.
fn html_code_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?i)<code(?:\s[^>\n]*)?>[^\n]*?</code>").expect("valid regex"))
}

fn wiki_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(!)?\[\[([^\[\]\r\n]+)\]\]").expect("valid regex"))
}

/// `^id` at the end of a paragraph or list item, or alone on the line after a block
/// (a table, a list, a quote), which Obsidian gives to that block.
fn block_id_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?m)(?:[ \t]|^)\^([A-Za-z0-9-]+)[ \t]*\r?$").expect("valid regex")
    })
}

fn reference_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\[([^\[\]\r\n]+)\]\[([^\[\]\r\n]*)\]").expect("valid regex"))
}

fn footnote_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\[\^[^\[\]\s]+\]").expect("valid regex"))
}
