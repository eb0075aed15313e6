//! Where the commands write: standard output and standard error that a closed pipe cannot
//! turn into a panic, an abort or a different exit code.
//!
//! `folio check --root kb | head -1` closes the pipe while folio still writes; so does a
//! shell that ran `folio check 2>&1 >/dev/null | true`. The standard library's `println!`
//! and `eprintln!` panic when a write fails, and a panic whose report cannot be printed
//! either aborts the process (exit 134). Here a closed pipe ends that stream's output
//! quietly, and the exit code stays the one the command's findings decide (`folio check`
//! still exits 1 when it found errors, whoever stopped reading).

use std::io::{self, Write};

/// Writes one line to standard error, like `eprintln!`, and carries on when standard
/// error is closed or failing (there is nowhere left to say so).
macro_rules! note {
    () => {
        $crate::output::to_stderr(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// Writes `args` to standard error, ignoring a failure to (see `note!`).
pub fn to_stderr(args: std::fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// Standard output, locked, for a command's results: once a write fails with a closed pipe
/// (`BrokenPipe`), it and every later write succeed without writing, so the command
/// finishes its work and its exit code; any other error is returned as usual.
pub fn stdout() -> Quiet<io::StdoutLock<'static>> {
    Quiet::new(io::stdout().lock())
}

/// A writer that goes quiet when its reader has gone (see [`stdout`]).
pub struct Quiet<W> {
    inner: W,
    closed: bool,
}

impl<W: Write> Quiet<W> {
    /// Wraps `inner`; nothing is written differently until a write finds the pipe closed.
    pub fn new(inner: W) -> Self {
        Quiet {
            inner,
            closed: false,
        }
    }

    fn quiet<T>(&mut self, result: io::Result<T>, otherwise: T) -> io::Result<T> {
        match result {
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(otherwise)
            }
            other => other,
        }
    }
}

impl<W: Write> Write for Quiet<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.quiet(result, buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        let result = self.inner.flush();
        self.quiet(result, ())
    }
}

#[cfg(test)]
mod tests {
    use super::Quiet;
    use std::io::{self, Write};

    /// Accepts `room` bytes, then fails every write with `kind`.
    struct Pipe {
        written: Vec<u8>,
        room: usize,
        kind: io::ErrorKind,
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.written.len() + buf.len() > self.room {
                return Err(io::Error::from(self.kind));
            }
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_ends_the_output_quietly() {
        let pipe = Pipe {
            written: Vec::new(),
            room: 6,
            kind: io::ErrorKind::BrokenPipe,
        };
        let mut out = Quiet::new(pipe);
        writeln!(out, "one").unwrap();
        writeln!(out, "two").unwrap();
        writeln!(out, "three").unwrap();
        out.flush().unwrap();
        assert_eq!(out.inner.written, b"one\n");
        assert!(out.closed);
    }

    #[test]
    fn other_errors_are_returned() {
        let pipe = Pipe {
            written: Vec::new(),
            room: 0,
            kind: io::ErrorKind::StorageFull,
        };
        let mut out = Quiet::new(pipe);
        let err = writeln!(out, "one").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::StorageFull);
        assert!(!out.closed);
    }
}
