//! In-process end-to-end tests of every feature, through the real server loop, with
//! exact ranges and edits in UTF-16 and UTF-8. Line 4 of `a.md` has an emoji (two
//! UTF-16 code units, four UTF-8 bytes) before its links, so the two encodings differ.
//!
//! One file per feature, named as its handler in `lsp/src/handlers/`; this file holds the
//! two documents they share, how a test starts the server, and the macro that runs a
//! check once per encoding. All of them build into one test binary (one link instead of
//! ten).

#[path = "../common/mod.rs"]
mod common;

/// Runs an async check once per encoding.
macro_rules! both_encodings {
    ($($name:ident),* $(,)?) => {
        mod utf16 {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Enc::Utf16).await; })*
        }
        mod utf8 {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() { super::$name(super::Enc::Utf8).await; })*
        }
    };
}

mod actions;
mod agreement;
mod completion;
mod configuration;
mod diagnostics;
mod folding;
mod links;
mod navigation;
mod rename;
mod symbols;
mod tags;
mod watched_files;

use common::{Client, Enc, pos};
use serde_json::{Value, json};

const A: &str = "# Alpha

## Set Up

Emoji 😀 then [b](b.md#beta-two) and [self](#set-up).
Bad [x](missing.md) and [h](b.md#beta-tow).
Ref [r][lbl] and [[b]] and [[b#Beta Two]].

[lbl]: b.md
";

const B: &str = "# Beta

## Beta Two

Back to [a](a.md#set-up).
";

/// The server on `a.md` and `b.md`, with `a.md` open.
async fn start(enc: Enc) -> Client {
    let mut c = Client::start(&[("a.md", A), ("b.md", B)], enc, json!({})).await;
    c.open("a.md").await;
    c
}

/// Parameters naming a position in `rel`.
fn at(c: &Client, rel: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": c.uri(rel)}, "position": pos(line, character)})
}
