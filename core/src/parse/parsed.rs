//! The result of a parse: [`Parsed`] and the elements, headings, anchors, definitions,
//! links and problems it holds, with the lookups built from them (title, fragment names, lines).

use std::ops::Range;

use crate::document::LineIndex;
use crate::pointer::{ElementKind, Pointer};

use super::slug;

/// One addressable block of a document.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Element {
    /// What kind of block this is.
    pub kind: ElementKind,
    /// Logical address following heading nesting, e.g. `1.2.p3` or `li1`.
    pub logical: Logical,
    /// Bytes of the element itself, trailing line endings excluded.
    pub range: Range<usize>,
    /// Bytes the element owns: a heading's section (up to the next heading of the same
    /// or a higher level), a list item with its nested lists, else `range`.
    pub subtree: Range<usize>,
    /// XxHash64 of the bytes in `range`.
    pub self_hash: u64,
    /// XxHash64 of the bytes in `subtree`.
    pub subtree_hash: u64,
    /// Heading level 1–6; 0 for other kinds.
    pub level: u8,
    /// Index (in [`Parsed::elements`]) of the heading or list item that owns this element.
    pub parent: Option<usize>,
    /// First line of `range`, 1-based.
    pub start_line: u32,
    /// Last line of `range`, 1-based, inclusive.
    pub end_line: u32,
}

impl Element {
    /// The concrete pointer `logical~selfHash~subtreeHash`.
    pub fn pointer(&self) -> Pointer {
        Pointer {
            logical: self.logical.to_string(),
            self_hash: self.self_hash,
            subtree_hash: self.subtree_hash,
        }
    }
}

/// The logical address of an element (`1.2.p3`, `li1`, `frontmatter`): a string that
/// reads like a `&str` ([`std::ops::Deref`]), compares equal to the same text as `&str`
/// or `String`, and prints and serialises as that text.
///
/// An address of up to [`Logical::INLINE`] bytes, which is nearly every one, is stored in
/// the value itself: every element has an address, and a `String` of each took a heap
/// allocation of its own (a third of all the allocations a loaded workspace keeps).
#[derive(Clone)]
pub struct Logical(LogicalRepr);

#[derive(Clone)]
enum LogicalRepr {
    /// The first `len` bytes are the address; the rest are zero.
    Inline {
        len: u8,
        bytes: [u8; Logical::INLINE],
    },
    /// A longer address.
    Heap(Box<str>),
}

impl Logical {
    /// The longest address stored without a heap allocation, in bytes.
    pub const INLINE: usize = 22;

    /// The address as a string slice.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            LogicalRepr::Inline { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)])
                .expect("an inline address holds a whole string"),
            LogicalRepr::Heap(s) => s,
        }
    }
}

impl From<&str> for Logical {
    fn from(s: &str) -> Logical {
        if s.len() <= Logical::INLINE {
            let mut bytes = [0; Logical::INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Logical(LogicalRepr::Inline {
                len: s.len() as u8,
                bytes,
            })
        } else {
            Logical(LogicalRepr::Heap(s.into()))
        }
    }
}

impl From<String> for Logical {
    fn from(s: String) -> Logical {
        Logical::from(s.as_str())
    }
}

impl std::ops::Deref for Logical {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Logical {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::borrow::Borrow<str> for Logical {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Logical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.as_str(), f)
    }
}

impl std::fmt::Debug for Logical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for Logical {
    fn eq(&self, other: &Logical) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Logical {}

impl std::hash::Hash for Logical {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for Logical {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Logical {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Logical {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Logical> for str {
    fn eq(&self, other: &Logical) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Logical> for &str {
    fn eq(&self, other: &Logical) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Logical> for String {
    fn eq(&self, other: &Logical) -> bool {
        self == other.as_str()
    }
}

impl serde::Serialize for Logical {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Logical {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Logical, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(Logical::from(s.as_ref()))
    }
}

/// A heading with its anchor slug.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Heading {
    /// Level 1–6.
    pub level: u8,
    /// Plain text of the heading (inline markup removed, a trailing `{#id}` removed).
    pub text: String,
    /// GitHub-compatible anchor slug, unique in the document (`-1`, `-2` for repeats).
    pub slug: String,
    /// An explicit id from a trailing `{#id}` attribute, if any.
    pub custom_id: Option<String>,
    /// The text without images' alt text, for a heading that holds an image: site
    /// generators leave images out of a heading's id ([`heading_anchors`]). `None` when
    /// the heading holds no image.
    pub site_text: Option<String>,
    /// Bytes of the heading line(s).
    pub range: Range<usize>,
    /// Bytes of the heading's text content.
    pub text_range: Range<usize>,
    /// Index of the heading's element in [`Parsed::elements`]; `None` for a heading
    /// nested in a container (block quote, list item), which has an anchor but is part
    /// of its container's element.
    pub element: Option<usize>,
}

/// An HTML anchor: `<a name="x">` or any tag with `id="x"`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Anchor {
    /// The id or name.
    pub id: String,
    /// Bytes of the HTML that declares it.
    pub range: Range<usize>,
}

/// A tag a document carries: `#name` in its text (Obsidian and Foam inline tags), or an
/// entry of its frontmatter `tags` list. Rule: [`crate::tags`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tag {
    /// The tag without `#`, as written: `project/alpha` (nested tags use `/`).
    pub name: String,
    /// Bytes of `#name` in the text, or of the entry's name in the frontmatter (of the
    /// `tags` key when the entry cannot be located in its source: see `located`).
    pub range: Range<usize>,
    /// True for a frontmatter entry, false for `#name` in the text.
    pub in_frontmatter: bool,
    /// False for a frontmatter entry whose name was not found in the source (a number
    /// YAML rewrote): `range` is then the `tags` key, and the entry cannot be edited.
    pub located: bool,
}

/// A link reference definition `[label]: destination` (CommonMark 4.7).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Definition {
    /// The label as written.
    pub label: String,
    /// The label normalised for matching (CommonMark 4.7: whitespace collapsed, Unicode case fold).
    pub key: String,
    /// Bytes of the whole definition.
    pub range: Range<usize>,
    /// Bytes of the label text between the brackets.
    pub label_range: Range<usize>,
    /// True when the destination is empty or only `#` (`[//]: # (a note)`,
    /// `[comment]: <> (a note)`, Foam's `[//begin]: #`): the idiom for a comment that no
    /// renderer shows, which no link is meant to use and which may repeat its label; also
    /// true inside an Obsidian comment (`%% … %%`), which hides it.
    pub comment: bool,
}

/// How a link is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// `[text](dest)`.
    Inline,
    /// `![alt](dest)`.
    Image,
    /// `<https://…>` or a GFM literal autolink.
    Autolink,
    /// `[text][label]`, `[label][]` or `[label]` with a definition.
    Reference,
    /// `![alt][label]`.
    ImageReference,
    /// The destination of a link reference definition.
    Definition,
    /// The `src` of an `<img>` or the `href` of an `<a>` in raw HTML.
    Html,
    /// `[[target]]` and its variants.
    Wiki,
    /// `![[target]]`.
    WikiEmbed,
    /// `[^label]`.
    Footnote,
    /// `[text][label]`, `[label][]` or `[^label]` whose label has no definition.
    UndefinedReference,
    /// Hugo's `ref` and `relref` shortcodes (`{{< ref "path.md#anchor" >}}`, also with
    /// `%`): the quoted path is the destination. CommonMark reads no link in
    /// `[text]({{< ref "x" >}})` (the destination holds spaces); Hugo expands the shortcode
    /// first.
    Shortcode,
}

/// How a link names what it leads to: the rule that resolves it
/// ([`crate::links::resolve_link`]) and the places that treat link kinds alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkSyntax {
    /// A path or URL as written (`[x](a.md)`, `![x](a.png)`, `<https://…>`, raw HTML, a
    /// link reference definition's destination, Hugo's `ref`).
    Path,
    /// A wiki link (`[[Page#Heading|alias]]`, `![[Page]]`): a note's name, found
    /// anywhere in the vault; a fragment is heading text or a heading path.
    Wiki,
    /// A reference to a link reference definition by label (`[x][label]`, `[label][]`,
    /// `![x][label]`), defined or not.
    Reference,
    /// A footnote reference (`[^label]`).
    Footnote,
}

impl LinkKind {
    /// How this kind names its destination. Every kind is listed (no wildcard), so a
    /// new kind does not compile until it says which rule resolves it.
    pub fn syntax(self) -> LinkSyntax {
        match self {
            LinkKind::Inline
            | LinkKind::Image
            | LinkKind::Autolink
            | LinkKind::Definition
            | LinkKind::Html
            | LinkKind::Shortcode => LinkSyntax::Path,
            LinkKind::Wiki | LinkKind::WikiEmbed => LinkSyntax::Wiki,
            LinkKind::Reference | LinkKind::ImageReference | LinkKind::UndefinedReference => {
                LinkSyntax::Reference
            }
            LinkKind::Footnote => LinkSyntax::Footnote,
        }
    }

    /// True for wiki links and embeds (`[[x]]`, `![[x]]`).
    pub fn is_wiki(self) -> bool {
        self.syntax() == LinkSyntax::Wiki
    }
}

/// One link of a document.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Link {
    /// How it is written.
    pub kind: LinkKind,
    /// Bytes of the whole link.
    pub range: Range<usize>,
    /// Bytes of the destination as written (for wiki links: the target part), if it has one.
    pub dest_range: Option<Range<usize>>,
    /// Destination: percent-decoded path or URL, fragment and query string excluded
    /// (empty for `#frag` links).
    pub dest: String,
    /// Fragment after `#`, percent-decoded, without the `#`.
    pub fragment: Option<String>,
    /// Bytes of the fragment as written (after `#`), if any.
    pub fragment_range: Option<Range<usize>>,
    /// For references and footnotes: the normalised label; for wiki links: the normalised
    /// text between the brackets (`target#heading|alias`).
    pub label: Option<String>,
    /// True when the destination has a URL scheme (`https:`, `mailto:`) or is protocol-relative.
    pub external: bool,
}

/// Problems the parser noticed (never fatal).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Problem {
    /// Bytes concerned.
    pub range: Range<usize>,
    /// What is wrong.
    pub message: String,
}

/// Everything known about one document after parsing.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Parsed {
    /// Block elements in source order; the first is always the `document` element.
    pub elements: Vec<Element>,
    /// Headings in source order.
    pub headings: Vec<Heading>,
    /// HTML anchors.
    pub anchors: Vec<Anchor>,
    /// The terms of definition lists in PHP Markdown Extra's syntax, which goldmark (so
    /// Hugo) and Python-Markdown read: each line of a paragraph before its first line that
    /// starts with `:` and a space (`` `cachedir` ``, then `: (string) …`), as plain text
    /// (inline markup dropped) with its bytes in the source, in source order. CommonMark
    /// reads them as one paragraph; Hugo gives each term an id with
    /// `autoDefinitionTermID` ([`definition_term_ids`]).
    pub definition_terms: Vec<(String, Range<usize>)>,
    /// Link reference definitions in source order.
    pub definitions: Vec<Definition>,
    /// GFM footnote definitions: (normalised label, bytes).
    pub footnote_definitions: Vec<(String, Range<usize>)>,
    /// Obsidian-style block ids (`^id` at the end of a block): (id, bytes).
    pub block_ids: Vec<(String, Range<usize>)>,
    /// Tags: the frontmatter's first, then `#tag`s of the text, in source order.
    pub tags: Vec<Tag>,
    /// Links in source order.
    pub links: Vec<Link>,
    /// Frontmatter parsed as YAML (or TOML), if present and well-formed. Stored as JSON
    /// text by serde (module `json_text`): compact formats cannot hold a self-describing value.
    #[serde(with = "json_text")]
    pub frontmatter: Option<serde_json::Value>,
    /// Problems noticed while parsing.
    pub problems: Vec<Problem>,
    /// Line index of the source. Not serialized: it is made again from the text.
    #[serde(skip)]
    pub lines: Option<LineIndex>,
    /// True when `elements` holds only the headings and the paragraphs that are one link
    /// each ([`Parsed::keep_outline`]): a closed document in a language server.
    pub outline_only: bool,
    /// Fragment names, built on first use by [`Parsed::fragment_names`] (boxed: the six
    /// sets would otherwise take about 300 bytes in every parse, built or not).
    #[serde(skip)]
    fragment_names: std::sync::OnceLock<Box<FragmentNames>>,
}

/// Serde for an optional JSON value as its JSON text, so that formats that are not
/// self-describing (the outline cache's postcard) can hold frontmatter.
mod json_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(
        value: &Option<serde_json::Value>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        value
            .as_ref()
            .map(serde_json::Value::to_string)
            .serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<serde_json::Value>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| serde_json::from_str(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// Every name a link fragment may use for a document, in sets for constant-time lookup.
#[derive(Clone, Debug, Default)]
pub struct FragmentNames {
    /// Heading slugs, HTML/`{#id}` anchor ids and footnote ids ([`footnote_ids`]), as
    /// written.
    pub ids: std::collections::HashSet<String>,
    /// The same, lowercased.
    pub ids_lower: std::collections::HashSet<String>,
    /// Heading texts and their undeduplicated slugs (wiki links name headings by text).
    pub texts: std::collections::HashSet<String>,
    /// The same, lowercased.
    pub texts_lower: std::collections::HashSet<String>,
    /// Block ids (`^id`), without the caret.
    pub blocks: std::collections::HashSet<String>,
    /// The same, lowercased.
    pub blocks_lower: std::collections::HashSet<String>,
}

/// The ids renderers give the footnote definition of `label` (its normalised label):
/// `fn:label` (Python-Markdown, so MkDocs), `fn-label` and `user-content-fn-label`
/// (GitHub, which prefixes ids with `user-content-` and takes links without it).
pub fn footnote_ids(label: &str) -> [String; 3] {
    [
        format!("fn:{label}"),
        format!("fn-{label}"),
        format!("user-content-fn-{label}"),
    ]
}

/// The anchor of each of `headings`, in order: GitHub's slug ([`Heading::slug`]), or on a
/// site published by `generator` the id that generator gives it ([`crate::site::heading_ids`]).
pub fn heading_anchors(
    headings: &[Heading],
    generator: crate::config::SiteGenerator,
) -> Vec<String> {
    let texts = headings.iter().map(|h| {
        (
            h.site_text.as_deref().unwrap_or(&h.text),
            h.custom_id.as_deref(),
        )
    });
    crate::site::heading_ids(generator, texts)
        .unwrap_or_else(|| headings.iter().map(|h| h.slug.clone()).collect())
}

/// The ids goldmark gives headings and definition terms when Hugo's
/// `autoDefinitionTermID` is on: GitHub's slug of each heading and each of
/// `definition_terms`, in source order, made unique together (`-1`, `-2`, …); a heading's
/// attribute-list id is kept (rule: goldmark's `parser.Context` ids shared by
/// `autoHeadingID` and `autoDefinitionTermID`, `autoHeadingIDType = "github"`).
pub fn definition_term_ids(
    headings: &[Heading],
    definition_terms: &[(String, Range<usize>)],
) -> Vec<String> {
    let mut items: Vec<(usize, &str, Option<&str>)> = headings
        .iter()
        .map(|h| (h.range.start, h.text.as_str(), h.custom_id.as_deref()))
        .chain(
            definition_terms
                .iter()
                .map(|(text, range)| (range.start, text.as_str(), None)),
        )
        .collect();
    items.sort_by_key(|(at, ..)| *at);
    let mut slugger = slug::Slugger::default();
    items
        .into_iter()
        .map(|(_, text, id)| match id {
            Some(id) => id.to_string(),
            None => slugger.slug(text),
        })
        .collect()
}

impl Parsed {
    /// True when `other` holds the same parse: every field a consumer reads, without the
    /// line index (a cache built on demand). What incremental parsing must reproduce.
    pub fn same_content(&self, other: &Parsed) -> bool {
        self.elements == other.elements
            && self.headings == other.headings
            && self.anchors == other.anchors
            && self.definition_terms == other.definition_terms
            && self.definitions == other.definitions
            && self.footnote_definitions == other.footnote_definitions
            && self.block_ids == other.block_ids
            && self.tags == other.tags
            && self.links == other.links
            && self.frontmatter == other.frontmatter
            && self.problems == other.problems
    }

    /// The problem of a frontmatter block that is not valid YAML (or TOML): its range is
    /// the block, its message the parser's (`frontmatter is not valid YAML: …`). The
    /// document then has no frontmatter metadata: no title, tags, aliases or date from it.
    pub fn frontmatter_problem(&self) -> Option<&Problem> {
        self.problems
            .iter()
            .find(|p| p.message.starts_with(super::frontmatter::NOT_VALID))
    }

    /// The title the document gives itself: frontmatter `title`, else its first level-1
    /// heading; `None` when it has neither (a lower-level heading names a section, never
    /// the note). [`Parsed::title_for`] adds the file name.
    pub fn title(&self) -> Option<String> {
        if let Some(t) = self.frontmatter_title() {
            return Some(t.to_string());
        }
        self.headings
            .iter()
            .find(|h| h.level == 1)
            .map(|h| h.text.clone())
            .filter(|t| !t.trim().is_empty())
    }

    /// The other names the frontmatter gives the note (`aliases`, or `alias`: a string or a
    /// list of strings or numbers), as written, blanks left out. A wiki link may name the
    /// note by any of them, as Obsidian resolves `[[alias]]`.
    pub fn aliases(&self) -> Vec<String> {
        self.frontmatter
            .as_ref()
            .map(|fm| frontmatter_strings(fm, &["aliases", "alias"]))
            .unwrap_or_default()
    }

    /// The frontmatter `title`, when it is a string that is not blank.
    fn frontmatter_title(&self) -> Option<&str> {
        self.frontmatter
            .as_ref()
            .and_then(|f| f.get("title"))
            .and_then(|v| v.as_str())
            .filter(|t| !t.trim().is_empty())
    }

    /// The title of the document at `path` (KB-relative) as its owner titles it: the
    /// frontmatter `title`; then, in an Obsidian vault (`vault`), the file name, which is
    /// what a vault shows and links by; else the first level-1 heading, else the file
    /// name ([`file_title`]). The one title rule of the index (`kb_list_files`, the
    /// whole-document vector), `kb_outline` and workspace symbols.
    pub fn title_for(&self, path: &str, vault: bool) -> String {
        if let Some(t) = self.frontmatter_title() {
            return t.to_string();
        }
        if vault {
            return file_title(path);
        }
        self.title().unwrap_or_else(|| file_title(path))
    }

    /// The headings that start a section, with their index in [`Parsed::headings`], in
    /// document order: every heading with an element of its own, so not one nested in a
    /// block quote or a list item (part of its container's content). The headings of the
    /// outline ([`crate::features::outline`]) and of the table of contents
    /// ([`crate::edit::toc`]).
    pub fn section_headings(&self) -> impl Iterator<Item = (usize, &Heading)> {
        self.headings
            .iter()
            .enumerate()
            .filter(|(_, h)| h.element.is_some())
    }

    /// The anchor of each heading, in order ([`heading_anchors`]).
    pub fn heading_anchors(&self, generator: crate::config::SiteGenerator) -> Vec<String> {
        heading_anchors(&self.headings, generator)
    }

    /// The names link fragments may use for this document (built once, then cached).
    pub fn fragment_names(&self) -> &FragmentNames {
        self.fragment_names.get_or_init(|| {
            let mut names = Box::<FragmentNames>::default();
            for h in &self.headings {
                names.ids.insert(h.slug.clone());
                names.texts.insert(h.text.clone());
                names.texts.insert(slug::slug(&h.text));
            }
            for a in &self.anchors {
                names.ids.insert(a.id.clone());
            }
            for (id, _) in &self.block_ids {
                names.blocks.insert(id.clone());
            }
            for (label, _) in &self.footnote_definitions {
                names.ids.extend(footnote_ids(label));
            }
            names.ids_lower = names.ids.iter().map(|s| s.to_lowercase()).collect();
            names.texts_lower = names.texts.iter().map(|s| s.to_lowercase()).collect();
            names.blocks_lower = names.blocks.iter().map(|s| s.to_lowercase()).collect();
            names
        })
    }

    /// Releases the unused capacity of every list, which a parse grows by doubling: a
    /// document with one heading would otherwise hold room for four, and a workspace of
    /// many small documents keeps every parse.
    pub fn shrink_to_fit(&mut self) {
        self.elements.shrink_to_fit();
        self.headings.shrink_to_fit();
        self.anchors.shrink_to_fit();
        self.definition_terms.shrink_to_fit();
        self.definitions.shrink_to_fit();
        self.footnote_definitions.shrink_to_fit();
        self.block_ids.shrink_to_fit();
        self.tags.shrink_to_fit();
        self.links.shrink_to_fit();
        self.problems.shrink_to_fit();
    }

    /// Drops every block element but what the links and the outline of a document
    /// nobody edits are read from: the headings (whose elements hold their sections) and
    /// the paragraphs that are one link each (the table-of-contents marker of
    /// [`crate::links`]). Heading and parent indices follow the kept elements; a parent
    /// that is not kept becomes `None`. Also drops the external links ([`Link::external`])
    /// but definitions: link resolution makes them [`crate::links::Target::External`]
    /// before anything else, so no diagnostic, rename or move of a closed document, and
    /// no reference to it, reads them; on k8s-community they are two thirds of its links
    /// (with their URLs, about 4 MiB). A definition stays, as a Foam-style wiki link
    /// resolves through it. Requests about a place in a document or about its own links
    /// (references from a position, document links) read the whole parse
    /// ([`crate::workspace::DocEntry::full_parsed`]). Sets [`Parsed::outline_only`].
    ///
    /// A language server holds every document of its workspace but reads the other
    /// elements (pointers, folding, code blocks) only for a document open in the editor:
    /// on k8s-community they were 11 MiB of its 48 MiB of heap. A caller that needs them
    /// for such a document parses its text again
    /// ([`crate::workspace::DocEntry::full_parsed`]).
    pub fn keep_outline(&mut self) {
        if self.outline_only {
            return;
        }
        let links = &self.links;
        let one_link = |e: &Element| {
            let i = links.partition_point(|l| l.range.start < e.range.start);
            links.get(i).is_some_and(|l| l.range == e.range)
        };
        let mut index = vec![None; self.elements.len()];
        let mut kept = Vec::new();
        for (i, e) in std::mem::take(&mut self.elements).into_iter().enumerate() {
            if e.kind == ElementKind::Heading || (e.kind == ElementKind::Paragraph && one_link(&e))
            {
                index[i] = Some(kept.len());
                kept.push(e);
            }
        }
        for e in &mut kept {
            e.parent = e.parent.and_then(|p| index[p]);
        }
        kept.shrink_to_fit();
        self.elements = kept;
        for h in &mut self.headings {
            h.element = h.element.and_then(|i| index[i]);
        }
        self.links
            .retain(|l| !l.external || l.kind == LinkKind::Definition);
        self.links.shrink_to_fit();
        self.outline_only = true;
    }

    /// 1-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> u32 {
        self.lines
            .as_ref()
            .map_or(1, |l| l.line_of(offset) as u32 + 1)
    }
}

/// The file name of `path` without its extension (`notes/Meeting notes.md` → `Meeting
/// notes`; a name that is all extension, `.md`, stays whole).
pub fn file_title(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => name.to_owned(),
    }
}

/// The strings a frontmatter (as JSON) gives under `keys`, in that order: each value a
/// string or a number, or a list of them; trimmed, blanks left out. [`Parsed::aliases`]
/// reads `aliases` and `alias` with it, the index's document terms `title` too.
pub fn frontmatter_strings(frontmatter: &serde_json::Value, keys: &[&str]) -> Vec<String> {
    let scalar = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.trim().to_owned()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let mut out = Vec::new();
    for key in keys {
        match frontmatter.get(*key) {
            Some(serde_json::Value::Array(items)) => out.extend(items.iter().filter_map(scalar)),
            Some(v) => out.extend(scalar(v)),
            None => {}
        }
    }
    out.retain(|a| !a.is_empty());
    out
}
