//! Measures the built-in embedding model on a golden query set: semantic-only
//! retrieval quality, embedding throughput, load time and peak memory.
//!
//! ```sh
//! cargo run --release -p folio-md-core --example embed_eval -- ../shared/eval/grooveseek-kb-eval [CHUNK_BYTES]
//! cargo run --release -p folio-md-core --example embed_eval -- --bench ../shared/corpora/k8s-community [CHUNKS] [--dump FILE]
//! ```
//!
//! `--bench` embeds the first CHUNKS (default 512) chunks of a corpus (its Markdown
//! files in path order), in batches of 64, and reports chunks/s and tokens/s, the
//! kernel path (`FOLIO_EMBED_KERNEL` forces one) and the load average before and
//! after. `--dump FILE` also writes one JSON line per chunk with its token ids (`ids`,
//! the `passage: ` prefix included) and folio's vector (`vector`), for
//! `scripts/onnx-reference.py`.
//!
//! Every Markdown file under `<EVAL>/kb` is cut into folio's chunks
//! (`chunk::chunks`, default budget 1500 bytes), each chunk's text is embedded
//! as a passage, and documents are ranked by their best chunk's cosine with the
//! query. Also reported: the same with whole documents as the unit
//! (truncated to the model's 512 tokens). Single-answer queries give
//! recall@1 and MRR, multi-answer queries recall@5 (the golden's two groups).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use folio_core::embed::Embedder;
use folio_core::embed::builtin::{BuiltinEmbedder, default_model_dir};

#[derive(serde::Deserialize)]
struct Golden {
    queries: Vec<Query>,
}

#[derive(serde::Deserialize)]
struct Query {
    id: String,
    query: String,
    expected: Vec<Expected>,
}

#[derive(serde::Deserialize)]
struct Expected {
    path: String,
}

fn markdown_files(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown_files(&p, root, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if let Ok(text) = std::fs::read_to_string(&p) {
                out.push((rel, text));
            }
        }
    }
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn evaluate(label: &str, model: &BuiltinEmbedder, golden: &Golden, units: &[(String, String)]) {
    let texts: Vec<&str> = units.iter().map(|(_, t)| t.as_str()).collect();
    let tokens: usize = texts
        .iter()
        .map(|t| model.token_ids(&format!("passage: {t}")).len())
        .sum();
    let started = Instant::now();
    let mut vectors = Vec::with_capacity(texts.len());
    for batch in texts.chunks(32) {
        vectors.extend(model.embed_passages(batch).unwrap());
    }
    let secs = started.elapsed().as_secs_f64();
    let (mut r1, mut mrr, mut n1, mut r5, mut n5) = (0.0, 0.0, 0, 0.0, 0);
    let mut query_secs = 0.0;
    for q in &golden.queries {
        let t = Instant::now();
        let qv = model.embed_query(&q.query).unwrap();
        query_secs += t.elapsed().as_secs_f64();
        let mut best: BTreeMap<&str, f32> = BTreeMap::new();
        for ((path, _), v) in units.iter().zip(&vectors) {
            let s: f32 = qv.iter().zip(v).map(|(a, b)| a * b).sum();
            let e = best.entry(path.as_str()).or_insert(f32::MIN);
            *e = e.max(s);
        }
        let mut ranked: Vec<(&str, f32)> = best.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        let rank = |p: &str| ranked.iter().position(|(r, _)| *r == p).map(|i| i + 1);
        if q.expected.len() == 1 {
            let r = rank(&q.expected[0].path).unwrap_or_else(|| panic!("{}: unknown path", q.id));
            n1 += 1;
            r1 += f64::from(r == 1);
            mrr += 1.0 / r as f64;
            if r != 1 {
                eprintln!(
                    "  {label} miss {}: expected {} at rank {r}, top {}",
                    q.id, q.expected[0].path, ranked[0].0
                );
            }
        } else {
            n5 += 1;
            let found = q
                .expected
                .iter()
                .filter(|e| rank(&e.path).is_some_and(|r| r <= 5))
                .count();
            r5 += found as f64 / q.expected.len() as f64;
        }
    }
    let tokens_note = if label != "docs" {
        ""
    } else {
        " (whole documents, truncated)"
    };
    println!(
        "{label:6}: {} units{tokens_note}, {tokens} tokens; single R@1 {:.3}  MRR {:.3}  (n={n1})  multi R@5 {:.3} (n={n5});  passages {:.1}/s, {:.0} tokens/s ({:.2} s); query mean {:.1} ms",
        units.len(),
        r1 / f64::from(n1),
        mrr / f64::from(n1),
        r5 / f64::from(n5.max(1)),
        units.len() as f64 / secs,
        tokens as f64 / secs,
        secs,
        1000.0 * query_secs / golden.queries.len() as f64,
    );
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn bench(corpus: &Path, limit: usize, dump: Option<&Path>) {
    let mut docs = Vec::new();
    markdown_files(corpus, corpus, &mut docs);
    let mut chunks = Vec::new();
    for (_, text) in &docs {
        let parsed = folio_core::parse::parse(text);
        chunks.extend(
            folio_core::chunk::chunks(text, &parsed, 1500)
                .into_iter()
                .map(|c| c.text),
        );
        if chunks.len() >= limit {
            break;
        }
    }
    chunks.truncate(limit);
    let t = Instant::now();
    let model = BuiltinEmbedder::load(&default_model_dir().expect("no model folder"))
        .unwrap_or_else(|e| panic!("{e}"));
    let load_ms = t.elapsed().as_secs_f64() * 1000.0;
    let ids: Vec<Vec<u32>> = chunks
        .iter()
        .map(|c| model.token_ids(&format!("passage: {c}")))
        .collect();
    let tokens: usize = ids.iter().map(Vec::len).sum();
    let load_before = loadavg();
    let t = Instant::now();
    let mut vectors = Vec::with_capacity(chunks.len());
    for batch in chunks.chunks(64) {
        let texts: Vec<&str> = batch.iter().map(String::as_str).collect();
        vectors.extend(model.embed_passages(&texts).unwrap());
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "bench {} (kernel path {}): load {load_ms:.0} ms; {} chunks, {tokens} tokens in {secs:.1} s: {:.1} chunks/s, {:.0} tokens/s; peak RSS {:.0} MB; load average {load_before} before, {} after",
        corpus.display(),
        model.kernel_path(),
        chunks.len(),
        chunks.len() as f64 / secs,
        tokens as f64 / secs,
        peak_rss_mb(),
        loadavg()
    );
    if let Some(dump) = dump {
        let mut out = String::new();
        for (ids, vector) in ids.iter().zip(&vectors) {
            out.push_str(&serde_json::json!({ "ids": ids, "vector": vector }).to_string());
            out.push('\n');
        }
        std::fs::write(dump, out).unwrap_or_else(|e| panic!("{}: {e}", dump.display()));
    }
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "--bench") {
        args.next();
        let usage = "usage: embed_eval --bench DIR [CHUNKS] [--dump FILE]";
        let corpus = PathBuf::from(args.next().expect(usage));
        let mut limit = 512;
        let mut dump = None;
        while let Some(arg) = args.next() {
            if arg == "--dump" {
                dump = Some(PathBuf::from(args.next().expect(usage)));
            } else {
                limit = arg.parse().expect(usage);
            }
        }
        bench(&corpus, limit, dump.as_deref());
        return;
    }
    let eval = PathBuf::from(
        args.next()
            .expect("usage: embed_eval EVAL_DIR [CHUNK_BYTES]"),
    );
    let budget: usize = args
        .next()
        .map_or(1500, |b| b.parse().expect("CHUNK_BYTES"));
    let golden: Golden =
        serde_norway::from_str(&std::fs::read_to_string(eval.join("golden.yml")).unwrap()).unwrap();
    let mut docs = Vec::new();
    markdown_files(&eval.join("kb"), &eval.join("kb"), &mut docs);

    let dir = default_model_dir().expect("no model folder");
    let rss_before = peak_rss_mb();
    let t = Instant::now();
    let model = BuiltinEmbedder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "load: {:.0} ms; peak RSS {:.0} MB before load, {:.0} MB after",
        t.elapsed().as_secs_f64() * 1000.0,
        rss_before,
        peak_rss_mb()
    );

    let mut chunks = Vec::new();
    let mut with_headings = Vec::new();
    for (path, text) in &docs {
        let parsed = folio_core::parse::parse(text);
        for c in folio_core::chunk::chunks(text, &parsed, budget) {
            with_headings.push((
                path.clone(),
                format!("{}\n{}", c.heading_path.join(" > "), c.text),
            ));
            chunks.push((path.clone(), c.text));
        }
    }
    evaluate("chunks", &model, &golden, &chunks);
    evaluate("docs", &model, &golden, &docs);
    // Variants an indexer might choose: the heading path in front of each
    // chunk's text, and whole-document vectors added to the chunk vectors.
    evaluate("chunks+headings", &model, &golden, &with_headings);
    let both: Vec<(String, String)> = chunks.iter().chain(&docs).cloned().collect();
    evaluate("chunks+docs", &model, &golden, &both);
    println!("peak RSS after embedding: {:.0} MB", peak_rss_mb());
}
