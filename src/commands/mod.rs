//! The commands of `folio`, one file each, and the dispatch from the parsed command line.
//!
//! `root.rs` finds the workspace root, its configuration and its index; `embedding.rs`
//! decides what a command does about embeddings. Both are shared by the commands.

mod bench;
mod bench_lsp;
mod check;
mod doctor;
mod embedding;
mod eval;
mod index;
mod lsp;
mod mcp;
mod model;
mod orphans;
mod outline;
mod progress;
mod rerank;
mod root;
mod search;
mod status;
mod token;

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::Command;

/// Runs one command; the exit code says how it went (see the crate docs).
pub fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Index(args) => index::run(&args),
        Command::Search(args) => search::run(&args),
        Command::Eval(args) => eval::run(&args),
        Command::Outline(args) => outline::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Status(args) => status::run(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Orphans(args) => orphans::run(&args),
        Command::Bench(args) => bench::run(
            &args.roots,
            usize::from(args.repeat),
            args.semantic,
            args.json,
            args.db.as_deref(),
        ),
        Command::BenchLsp(args) => bench_lsp::run(
            &args.symbols_root,
            &args.query,
            &args.edit_root,
            &args.edit_file,
            args.edits,
            args.repeat,
        ),
        Command::Lsp { stdio: _ } => lsp::run(),
        Command::Mcp(args) => mcp::run(&args),
        Command::Token(args) => token::run(&args),
        Command::Model(args) => model::run(&args),
    }
}

/// `n` with the noun in the number it takes in English: `1 file`, `0 files`, `2 files`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Says on stderr which notes are not valid UTF-8 and were read with U+FFFD replacements
/// (`folio check` and `folio index`; not `search`, which would repeat it on every query).
fn report_replaced(replaced: &[(String, usize)]) {
    for (path, at) in replaced {
        note!(
            "folio: note: {path} is not valid UTF-8 (first invalid byte at offset {at}); read with U+FFFD replacements, and folio will not write to it"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::counted;

    #[test]
    fn counts_take_the_noun_in_its_number() {
        assert_eq!(counted(0, "file", "files"), "0 files");
        assert_eq!(counted(1, "file", "files"), "1 file");
        assert_eq!(counted(2, "chunk", "chunks"), "2 chunks");
    }
}
