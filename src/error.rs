//! How an error reaches the user: its causes joined into one line, and a closed pipe told
//! apart from a failure.

/// True when the error comes from writing to a pipe whose reader has gone.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes joined with `: `, leaving out a cause whose text the message
/// already contains (library errors often repeat their source).
pub fn error_chain(err: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if message.contains(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}
