//! What a move does to a link that a site generator's lookup resolved and a plain file
//! path does not (a Hugo logical path, a Docusaurus page URL): it gets the target's new
//! address in the generator's terms, since a file path is no link the site reads.

use super::{exact_target, is_markdown_file_link, join_relative};
use crate::config::SiteGenerator;
use crate::parse::Link;
use crate::workspace::Workspace;

/// The destination `link` of page `from` gets when a move takes its target `target` to
/// `target_after` (either may be unchanged), for a link the site's lookup resolved and a
/// plain file path does not: `/methods/site/title/` for Hugo's
/// `content/en/methods/site/Title.md`, `/docs/guide/plain` for Docusaurus's
/// `docs/guide/02-plain.md`. `written` is the destination as written, without fragment or
/// query.
///
/// A root-absolute link whose target stays keeps its text. Otherwise the target's new
/// URL ([`Workspace::page_url_as`]: `url`, `slug` and `id` frontmatter count, so a Hugo
/// page with `url` keeps it), or in Hugo, when the link was not written as the URL, its
/// new logical path ([`crate::site::hugo::hugo_page_url`]); root-absolute, with a trailing
/// `/` when `written` has one, and in Hugo `/path.md` when written with `.md`. `None`
/// outside Hugo and Docusaurus sites, for a link a file path resolves (the caller's file
/// path rewrite keeps it), for a Docusaurus link to a `.md` file, or for a target that
/// leaves the docs or content folders.
pub(crate) fn site_moved_destination(
    ws: &Workspace,
    from: &str,
    link: &Link,
    written: &str,
    target: &str,
    target_after: &str,
) -> Option<String> {
    let hugo = match ws.generator() {
        SiteGenerator::Hugo => true,
        SiteGenerator::Docusaurus => false,
        _ => return None,
    };
    let page_link = if hugo {
        super::is_hugo_page_link(&link.dest)
    } else {
        !is_markdown_file_link(&link.dest) && !link.dest.starts_with("@site/")
    };
    // A link a plain path resolves is rewritten as a path.
    let plain = join_relative(from, &link.dest)
        .and_then(|path| exact_target(ws, &path))
        .is_some_and(|found| found.path() == target);
    if plain || !page_link {
        return None;
    }
    if written.starts_with('/') && target == target_after {
        return Some(written.to_string());
    }
    let new_folder = ws.docs_folder_of(target_after)?;
    let new_url = ws.page_url_as(target, target_after)?;
    let base = if hugo {
        if written.to_ascii_lowercase().ends_with(".md") {
            return Some(format!(
                "/{}",
                crate::path_policy::within_folder(new_folder, target_after)
            ));
        }
        let old_url = ws.page_url_of(target)?;
        let lower = written.to_lowercase();
        let bare = lower.trim_end_matches('/');
        if bare.starts_with('/') && bare == old_url.trim_end_matches('/') {
            new_url
        } else {
            let parsed = ws.parsed(target);
            let front = parsed.as_ref().and_then(|p| p.frontmatter.as_ref());
            let value = |key: &str| front.and_then(|f| f.get(key)?.as_str());
            crate::site::hugo::hugo_page_url(
                new_folder,
                target_after,
                value("slug"),
                value("url"),
                &|_| None,
            )
            .1
        }
    } else {
        new_url
    };
    let base = base.trim_end_matches('/');
    Some(if written.ends_with('/') || base.is_empty() {
        format!("{base}/")
    } else {
        base.to_string()
    })
}
