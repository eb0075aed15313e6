//! How a panic is printed: where it happened and what went wrong, without the parts of
//! the message that may quote document text.
//!
//! The standard library's messages quote the string they were given (a slice at a byte
//! that is not a character boundary prints up to 256 bytes of it), and logs must hold no
//! document text (docs/reliability.md, "Secrets and privacy"). A server catches a
//! request's panic and keeps serving; this hook decides what reaches stderr.

/// Replaces the default panic hook: prints `folio: thread 'NAME' panicked at FILE:LINE:COL:
/// MESSAGE` with the message cut before its first quote ([`withhold_quotes`]), then the
/// backtrace when `RUST_BACKTRACE` asks for one.
pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        let at = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_else(|| "an unknown place".to_owned());
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("unnamed");
        note!(
            "folio: thread '{name}' panicked at {at}: {}",
            withhold_quotes(&message)
        );
        let backtrace = std::backtrace::Backtrace::capture();
        if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
            note!("{backtrace}");
        }
    }));
}

/// `message` up to its first quote character (`` ` ``, `"` or `'`), with a note that the
/// rest is withheld; the whole message when it has none.
pub fn withhold_quotes(message: &str) -> String {
    match message.find(['`', '"', '\'']) {
        Some(i) => format!(
            "{}… (the rest is withheld: it may quote document text)",
            message[..i].trim_end()
        ),
        None => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::withhold_quotes;

    #[test]
    fn quoted_text_is_withheld() {
        // The message of `&"## 日本語"[..4]`, as the standard library words it.
        let message =
            "byte index 4 is not a char boundary; it is inside '日' (bytes 3..6) of `## 日本語`";
        assert_eq!(
            withhold_quotes(message),
            "byte index 4 is not a char boundary; it is inside… (the rest is withheld: it may quote document text)"
        );
        assert_eq!(
            withhold_quotes("called `Option::unwrap()` on a `None` value"),
            "called… (the rest is withheld: it may quote document text)"
        );
        assert_eq!(
            withhold_quotes("index out of bounds"),
            "index out of bounds"
        );
    }
}
