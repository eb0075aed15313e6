//! Word and PowerPoint files through `undoc`: each of its sections (a Word document's
//! sections, a presentation's slides) rendered to Markdown (headings by paragraph style,
//! tables as pipe tables, lists as lists), then cut by heading with folio's own
//! Markdown parser. A slide's sections carry `Slide <n>` as the outermost name in their
//! heading path.

use std::collections::HashMap;

use crate::formats::{ExtractError, Extracted, Format, Section};

pub(super) fn extract(format: Format, bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let document = undoc::parse_bytes(bytes).map_err(|e| match e {
        undoc::Error::Encrypted => ExtractError::Encrypted,
        other => ExtractError::Malformed {
            format: format.name(),
            message: other.to_string(),
        },
    })?;
    let options = undoc::render::RenderOptions {
        include_images: false,
        ..undoc::render::RenderOptions::default()
    };
    let no_images = HashMap::new();
    let slides = format == Format::Presentation;
    let parts = document
        .sections
        .iter()
        .enumerate()
        .map(|(i, section)| {
            // Unnamed, so that undoc writes no `## <name>` heading and `---` of its own: a
            // slide is named here, a Word section needs no name.
            let unnamed = undoc::Section {
                name: None,
                ..section.clone()
            };
            let markdown = undoc::render::render_section_to_string(
                &unnamed,
                i,
                document.format,
                &options,
                &no_images,
            );
            let outer = slides.then(|| slide_name(i + 1, section.name.as_deref(), &markdown));
            let sections = markdown_sections(&markdown, outer);
            (markdown, sections)
        })
        .collect();
    let (text, sections) = super::sections::join(parts);
    let title = document
        .metadata
        .title
        .clone()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty());
    Ok(Extracted {
        text,
        title,
        sections,
    })
}

/// A slide's name: `Slide <n>`, with `: <name>` when the slide has a name of its own that
/// its first heading does not already give (the heading follows in the heading path).
fn slide_name(n: usize, name: Option<&str>, markdown: &str) -> String {
    let generic = format!("Slide {n}");
    let first_heading = crate::parse::parse(markdown)
        .headings
        .first()
        .map(|h| h.text.clone());
    match name.map(str::trim) {
        Some(name)
            if !name.is_empty() && name != generic && Some(name) != first_heading.as_deref() =>
        {
            format!("{generic}: {name}")
        }
        _ => generic,
    }
}

/// The sections of a Markdown text: one per chunk folio's Markdown chunker cuts (a
/// heading's section, or part of a long one), `outer` put first in each heading path.
fn markdown_sections(markdown: &str, outer: Option<String>) -> Vec<Section> {
    let parsed = crate::parse::parse(markdown);
    // Cut at the largest unit: the section chunker cuts again under the index's budget.
    crate::chunk::chunks(markdown, &parsed, usize::MAX)
        .into_iter()
        .map(|c| Section {
            heading_path: outer.iter().cloned().chain(c.heading_path).collect(),
            start_line: c.start_line,
            end_line: c.end_line,
            ..Section::default()
        })
        .collect()
}
