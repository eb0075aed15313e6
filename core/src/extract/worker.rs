//! Binary documents (PDF, Office files, workbooks) are extracted in a child process, so
//! that nothing a document makes its parser do can end the process that asked: an
//! allocation the system refuses aborts (a 5 KB workbook naming cell `XFD1048576` asks
//! calamine for 512 GiB; a 5 MB PDF inflates one stream to 5 GiB), a recursion that
//! overflows the stack aborts, and a parser that never returns keeps a core busy. The
//! child runs under an address-space limit ([`memory_limit`]) and a CPU-time limit,
//! and is killed at the time budget; its death is an [`ExtractError`], never the
//! caller's.
//!
//! The child is the running executable itself, started as `<exe> __extract-worker
//! <format> <max_text_size> <max_decompressed_size>` with the document's bytes on stdin;
//! it writes `Result<Extracted, ExtractError>` as JSON on stdout ([`run_worker`]). An
//! executable opts in with [`use_worker`] (the `folio` binary does, for every command);
//! without it (a library user, unit tests) extraction runs on a thread of the calling
//! process ([`super::guard`]).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::formats::{ExtractError, Extracted, Format, Limits};

/// The first argument that makes the `folio` executable a worker ([`run_worker`]).
pub const WORKER_ARG: &str = "__extract-worker";

static WORKER: OnceLock<PathBuf> = OnceLock::new();

/// Extracts binary documents in child processes of `executable` from now on; it must
/// call [`run_worker`] when its first argument is [`WORKER_ARG`]. Later calls are
/// ignored.
pub fn use_worker(executable: PathBuf) {
    let _ = WORKER.set(executable);
}

/// The executable [`use_worker`] set, if any.
pub(super) fn worker() -> Option<&'static PathBuf> {
    WORKER.get()
}

/// The address space a worker may use for a document of `size` bytes: 2 GiB and 32
/// times the document (room for the executable, its libraries and the parser's copies).
pub fn memory_limit(size: u64) -> u64 {
    (2u64 << 30).saturating_add(size.saturating_mul(32))
}

/// The worker's side: reads `<format> <max_text_size> <max_decompressed_size>` from
/// `args` (after [`WORKER_ARG`]) and the document from stdin, extracts it on a thread
/// of its own and writes the result as JSON on stdout. Returns the exit code: 0 when a
/// result was written (an [`ExtractError`] included), 2 for bad arguments.
pub fn run_worker(args: &[String]) -> i32 {
    let parsed = (|| {
        let format = Format::from_name(args.first()?)?;
        let max_text_size = args.get(1)?.parse().ok()?;
        let max_decompressed_size = args.get(2)?.parse().ok()?;
        Some((format, max_text_size, max_decompressed_size))
    })();
    let Some((format, max_text_size, max_decompressed_size)) = parsed else {
        eprintln!(
            "usage: folio {WORKER_ARG} FORMAT MAX_TEXT_SIZE MAX_DECOMPRESSED_SIZE < DOCUMENT"
        );
        return 2;
    };
    let mut bytes = Vec::new();
    if let Err(err) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("folio {WORKER_ARG}: reading the document: {err}");
        return 2;
    }
    let limits = Limits {
        max_text_size,
        max_binary_size: u64::MAX,
        max_decompressed_size,
        // The parent kills the worker at its budget.
        time_budget: Duration::from_secs(u64::from(u32::MAX)),
    };
    let result = super::guard::with_budget(format, limits.time_budget, move || {
        super::extract_now(format, &bytes, &limits)
    });
    let json = serde_json::to_vec(&result).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    if out.write_all(&json).and_then(|()| out.flush()).is_err() {
        return 2;
    }
    0
}

/// Extracts `bytes` of `format` in a child process of `executable` within `limits`.
///
/// Errors: the worker's own [`ExtractError`]; [`ExtractError::TimedOut`] when it ran
/// past the time budget (it is killed); [`ExtractError::Crashed`] when it died another
/// way (out of its memory limit, a stack overflow) or could not be started.
pub(super) fn extract_in_worker(
    executable: &PathBuf,
    format: Format,
    bytes: Vec<u8>,
    limits: &Limits,
) -> Result<Extracted, ExtractError> {
    let memory = memory_limit(bytes.len() as u64);
    let cpu_seconds = limits.time_budget.as_secs().saturating_add(2);
    let mut command = Command::new(executable);
    command
        .arg(WORKER_ARG)
        .arg(format.name())
        .arg(limits.max_text_size.to_string())
        .arg(limits.max_decompressed_size.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    limit_child(&mut command, memory, cpu_seconds);
    let crashed = |why: String| ExtractError::Crashed {
        format: format.name(),
        why,
    };
    let mut child = command
        .spawn()
        .map_err(|e| crashed(format!("the worker could not be started: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let writer = std::thread::spawn(move || {
        // A worker that dies early closes the pipe: the error is its death's, below.
        let _ = stdin.write_all(&bytes);
    });
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + limits.time_budget;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(crashed(format!("waiting for the worker failed: {e}")));
            }
        }
    };
    let _ = writer.join();
    let out = reader.join().unwrap_or_default();
    let Some(status) = status else {
        return Err(ExtractError::TimedOut(limits.time_budget.as_millis()));
    };
    if status.success()
        && let Ok(result) = serde_json::from_slice::<Result<Extracted, ExtractError>>(&out)
    {
        return result;
    }
    Err(crashed(death(status, memory)))
}

/// Why a worker that wrote no result ended.
fn death(status: std::process::ExitStatus, memory: u64) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        match status.signal() {
            Some(libc::SIGABRT) | Some(libc::SIGSEGV) | Some(libc::SIGBUS) => {
                return format!(
                    "the parser ran out of its {} MiB of memory or overflowed its stack",
                    memory >> 20
                );
            }
            Some(libc::SIGXCPU) | Some(libc::SIGKILL) => {
                return "the parser ran out of its CPU time".to_string();
            }
            Some(signal) => return format!("the parser was ended by signal {signal}"),
            None => {}
        }
    }
    let _ = memory;
    format!("the worker ended with {status} and no result")
}

/// Sets the child's address-space and CPU-time limits (Unix; elsewhere none).
#[cfg(unix)]
fn limit_child(command: &mut Command, memory: u64, cpu_seconds: u64) {
    use std::os::unix::process::CommandExt;
    let set = move || {
        let limit = |resource, value: u64| {
            let rlim = libc::rlimit {
                rlim_cur: value as libc::rlim_t,
                rlim_max: value as libc::rlim_t,
            };
            // SAFETY: setrlimit reads the struct it is given and nothing else.
            unsafe { libc::setrlimit(resource, &rlim) }
        };
        // A limit that cannot be set leaves the default; the time budget still holds.
        limit(libc::RLIMIT_AS, memory);
        limit(libc::RLIMIT_CPU, cpu_seconds);
        Ok(())
    };
    // SAFETY: the closure only calls setrlimit, which is async-signal-safe, between fork
    // and exec; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(set);
    }
}

#[cfg(not(unix))]
fn limit_child(_command: &mut Command, _memory: u64, _cpu_seconds: u64) {}
