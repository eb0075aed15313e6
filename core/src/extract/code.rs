//! Source code through tree-sitter: one section per definition (function, method,
//! class, struct, impl, module...), with the comments and attributes right above it, its
//! kind as the grammar names it and its name; a container (a class, an `impl`, a module)
//! gets a section for its own lines before its first member, and its members carry its
//! name in their heading path. Lines outside every definition (imports, statements) are
//! sections of their own, with no symbol.

use tree_sitter::{Node, Parser};

use crate::formats::{Extracted, Language, Section};

/// The tree-sitter grammar of `language`.
fn grammar(language: Language) -> tree_sitter::Language {
    match language {
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Language::Go => tree_sitter_go::LANGUAGE.into(),
        Language::Java => tree_sitter_java::LANGUAGE.into(),
        Language::C => tree_sitter_c::LANGUAGE.into(),
        Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
    }
}

/// What a node of kind `kind` is in `language`'s grammar.
fn role(language: Language, kind: &str) -> Role {
    use Language::*;
    match (language, kind) {
        (Rust, "impl_item" | "trait_item" | "mod_item") => Role::Container("body"),
        (
            Rust,
            "function_item"
            | "function_signature_item"
            | "struct_item"
            | "enum_item"
            | "union_item"
            | "macro_definition"
            | "type_item"
            | "const_item"
            | "static_item",
        ) => Role::Definition,
        (Python, "class_definition") => Role::Container("body"),
        (Python, "function_definition") => Role::Definition,
        (Python, "decorated_definition") => Role::Wrapper("definition"),
        (
            TypeScript | Tsx | JavaScript,
            "class_declaration" | "abstract_class_declaration" | "class",
        ) => Role::Container("body"),
        (TypeScript | Tsx, "interface_declaration") => Role::Container("body"),
        (TypeScript | Tsx, "internal_module" | "module") => Role::Container("body"),
        (
            TypeScript | Tsx | JavaScript,
            "function_declaration" | "generator_function_declaration" | "method_definition",
        ) => Role::Definition,
        (
            TypeScript | Tsx,
            "type_alias_declaration"
            | "enum_declaration"
            | "function_signature"
            | "abstract_method_signature"
            | "method_signature",
        ) => Role::Definition,
        (TypeScript | Tsx | JavaScript, "lexical_declaration" | "variable_declaration") => {
            Role::Variable
        }
        (TypeScript | Tsx | JavaScript, "export_statement") => Role::Wrapper("declaration"),
        (Go, "function_declaration" | "method_declaration" | "type_declaration") => {
            Role::Definition
        }
        (
            Java,
            "class_declaration"
            | "interface_declaration"
            | "enum_declaration"
            | "record_declaration",
        ) => Role::Container("body"),
        (
            Java,
            "method_declaration" | "constructor_declaration" | "annotation_type_declaration",
        ) => Role::Definition,
        (Cpp, "class_specifier" | "struct_specifier" | "namespace_definition") => {
            Role::Container("body")
        }
        (Cpp, "template_declaration") => Role::Template,
        (C | Cpp, "function_definition" | "type_definition" | "enum_specifier") => Role::Definition,
        (C, "struct_specifier" | "union_specifier") => Role::Definition,
        _ => Role::Other,
    }
}

/// What a node is to the chunker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A definition read as one unit.
    Definition,
    /// A definition whose body (the named field) holds definitions of its own.
    Container(&'static str),
    /// A node around a definition (the named field): `export`, decorators.
    Wrapper(&'static str),
    /// A C++ template: the definition is its last named child.
    Template,
    /// `const f = () => ...`: a definition when it binds a function.
    Variable,
    /// Anything else.
    Other,
}

/// Reads `text` as `language`: its definitions as sections (see the module's notes).
/// Text the grammar cannot parse still gives sections: what it parsed as definitions and
/// the lines around them.
pub(super) fn extract(language: Language, text: &str) -> Extracted {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text).to_string();
    let mut parser = Parser::new();
    let mut sections = Vec::new();
    if parser.set_language(&grammar(language)).is_ok()
        && let Some(tree) = parser.parse(&text, None)
    {
        let reader = Reader {
            language,
            text: &text,
        };
        reader.visit(tree.root_node(), &[], &mut sections);
    }
    sections.sort_by_key(|s| s.start_line);
    let total = text.lines().count() as u32;
    let sections = with_gaps(&text, sections, total);
    Extracted {
        text,
        title: None,
        sections,
    }
}

struct Reader<'a> {
    language: Language,
    text: &'a str,
}

impl Reader<'_> {
    /// Adds the definitions among `node`'s children to `out`, under `path`.
    fn visit(&self, node: Node<'_>, path: &[String], out: &mut Vec<Section>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for (i, child) in children.iter().enumerate() {
            let start = self.leading_start(&children[..i], *child);
            self.definition(*child, start, path, out);
        }
    }

    /// Adds `node` as a definition starting at row `start` (its comments included), when
    /// it is one; else looks inside it for none.
    fn definition(&self, node: Node<'_>, start: usize, path: &[String], out: &mut Vec<Section>) {
        match role(self.language, node.kind()) {
            Role::Definition => out.push(self.section(node, node, start, path)),
            Role::Variable => {
                let mut cursor = node.walk();
                let declarator = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == "variable_declarator");
                if let Some(value) = declarator.and_then(|d| d.child_by_field_name("value"))
                    && matches!(
                        value.kind(),
                        "arrow_function" | "function_expression" | "function" | "class"
                    )
                {
                    let mut section = self.section(node, value, start, path);
                    section.symbol = declarator
                        .and_then(|d| d.child_by_field_name("name"))
                        .map(|n| self.node_text(n).to_string());
                    out.push(section);
                }
            }
            Role::Wrapper(field) => {
                if let Some(inner) = node.child_by_field_name(field) {
                    let before = out.len();
                    self.definition(inner, start, path, out);
                    // The wrapper's own lines (an `export`, the decorators) are the
                    // definition's.
                    if let Some(first) = out.get_mut(before) {
                        first.start_line = first.start_line.min(start as u32 + 1);
                    }
                }
            }
            Role::Template => {
                let mut cursor = node.walk();
                if let Some(inner) = node.named_children(&mut cursor).last() {
                    let before = out.len();
                    self.definition(inner, start, path, out);
                    if let Some(first) = out.get_mut(before) {
                        first.start_line = first.start_line.min(start as u32 + 1);
                    }
                }
            }
            Role::Container(field) => {
                let body = node.child_by_field_name(field);
                let mut members = Vec::new();
                let name = self.name_of(node);
                if let Some(body) = body {
                    let mut inner = path.to_vec();
                    inner.push(name.clone().unwrap_or_else(|| node.kind().to_string()));
                    self.visit(body, &inner, &mut members);
                }
                let mut own = self.section(node, node, start, path);
                if let Some(first) = members.iter().map(|m| m.start_line).min() {
                    // The container's own lines: up to its first member.
                    own.end_line = (first - 1).max(own.start_line);
                    own.whole = false;
                }
                out.push(own);
                out.extend(members);
            }
            Role::Other => {}
        }
    }

    /// The section of `node` (its kind from `kind_node`), from row `start`.
    fn section(
        &self,
        node: Node<'_>,
        kind_node: Node<'_>,
        start: usize,
        path: &[String],
    ) -> Section {
        Section {
            heading_path: path.to_vec(),
            start_line: start as u32 + 1,
            end_line: node.end_position().row as u32 + 1,
            page: None,
            symbol_kind: Some(kind_node.kind().to_string()),
            symbol: self.name_of(node),
            whole: true,
        }
    }

    /// The row where `node`'s leading comments and attributes begin: the comment,
    /// attribute and decorator siblings right above it, with no blank line between.
    fn leading_start(&self, before: &[Node<'_>], node: Node<'_>) -> usize {
        let mut start = node.start_position().row;
        for prev in before.iter().rev() {
            let leading = prev.kind().contains("comment")
                || matches!(prev.kind(), "attribute_item" | "decorator" | "annotation");
            if !leading || prev.end_position().row + 1 < start {
                break;
            }
            start = prev.start_position().row;
        }
        start
    }

    /// A definition's name: its `name` field; an `impl`'s type (and trait); a C
    /// function's innermost declarator; a Go type declaration's first type.
    fn name_of(&self, node: Node<'_>) -> Option<String> {
        if let Some(name) = node.child_by_field_name("name") {
            return Some(self.node_text(name).to_string());
        }
        match node.kind() {
            "impl_item" => {
                let ty = self.node_text(node.child_by_field_name("type")?);
                Some(match node.child_by_field_name("trait") {
                    Some(tr) => format!("{} for {ty}", self.node_text(tr)),
                    None => ty.to_string(),
                })
            }
            "type_declaration" => {
                let mut cursor = node.walk();
                let spec = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind().ends_with("type_spec") || c.kind() == "type_alias")?;
                Some(
                    self.node_text(spec.child_by_field_name("name")?)
                        .to_string(),
                )
            }
            _ => {
                let mut declarator = node.child_by_field_name("declarator")?;
                while let Some(inner) = declarator.child_by_field_name("declarator") {
                    declarator = inner;
                }
                Some(self.node_text(declarator).to_string())
            }
        }
    }

    fn node_text(&self, node: Node<'_>) -> &str {
        self.text.get(node.byte_range()).unwrap_or("")
    }
}

/// `sections` (sorted by start, none overlapping) with the runs of lines between them
/// that hold a letter or digit added as sections with no symbol.
fn with_gaps(text: &str, sections: Vec<Section>, total: u32) -> Vec<Section> {
    let lines: Vec<&str> = text.lines().collect();
    // A line with no letter or digit (a container's closing `}`) is no content of its own.
    let blank = |line: u32| {
        lines
            .get(line as usize - 1)
            .is_none_or(|l| !l.chars().any(char::is_alphanumeric))
    };
    let mut out = Vec::with_capacity(sections.len() * 2);
    let mut next = 1u32;
    let gap = |from: u32, to: u32, out: &mut Vec<Section>| {
        let (mut from, mut to) = (from, to);
        while from <= to && blank(from) {
            from += 1;
        }
        while to >= from && blank(to) {
            to -= 1;
        }
        if from <= to {
            out.push(Section {
                start_line: from,
                end_line: to,
                ..Section::default()
            });
        }
    };
    for section in sections {
        if section.start_line > next {
            gap(next, section.start_line - 1, &mut out);
        }
        next = next.max(section.end_line + 1);
        out.push(section);
    }
    if next <= total {
        gap(next, total, &mut out);
    }
    out
}
