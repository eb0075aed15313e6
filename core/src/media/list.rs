//! The order of `kb_list_images` and its cursors.
//!
//! Images are ordered by path compared case-insensitively (Unicode lowercase), ties
//! broken by the path's bytes, so the order is total. A cursor names the last path of a
//! page; the next page starts after that position in the order, so it still works when
//! that file was deleted or renamed meanwhile.

use std::cmp::Ordering;

use base64::Engine;

/// Default page size.
pub const DEFAULT_PAGE_SIZE: usize = 50;
/// Largest page size.
pub const MAX_PAGE_SIZE: usize = 200;

/// The listing order: case-insensitive, then by bytes.
pub fn order(a: &str, b: &str) -> Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| a.cmp(b))
}

/// The opaque cursor for the position after `path`.
pub fn cursor_after(path: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("after:{path}"))
}

/// The path a cursor names; `None` for anything [`cursor_after`] did not make.
pub fn parse_cursor(cursor: &str) -> Option<String> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|s| s.strip_prefix("after:").map(str::to_string))
}

/// One page of `paths` (any order) after the position `after` names, sorted: at most
/// `page_size`, and the cursor of the next page when more follow.
pub fn page(
    mut paths: Vec<String>,
    after: Option<&str>,
    page_size: usize,
) -> (Vec<String>, Option<String>) {
    if let Some(after) = after {
        paths.retain(|p| order(p, after) == Ordering::Greater);
    }
    paths.sort_by(|a, b| order(a, b));
    if paths.len() > page_size {
        paths.truncate(page_size);
        let next = paths.last().map(|last| cursor_after(last));
        (paths, next)
    } else {
        (paths, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_the_order_and_survive_a_deleted_cursor_item() {
        let all: Vec<String> = ["b.png", "A.png", "a.png", "c/Z.gif", "C/a.jpg"]
            .map(String::from)
            .to_vec();
        let (first, next) = page(all.clone(), None, 2);
        assert_eq!(first, ["A.png", "a.png"]);
        let next = next.unwrap();
        assert_eq!(parse_cursor(&next).as_deref(), Some("a.png"));
        // `a.png` is deleted: the next page still starts after its place.
        let rest: Vec<String> = all.into_iter().filter(|p| p != "a.png").collect();
        let (second, next) = page(rest.clone(), Some("a.png"), 2);
        assert_eq!(second, ["b.png", "C/a.jpg"]);
        let (third, last) = page(rest, parse_cursor(&next.unwrap()).as_deref(), 2);
        assert_eq!((third, last), (vec!["c/Z.gif".to_string()], None));
        assert_eq!(parse_cursor("not a cursor"), None);
        assert_eq!(
            parse_cursor(&base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("x")),
            None
        );
    }
}
