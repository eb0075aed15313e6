//! How closely the line-scan outline (`folio_core::parse::outline`) matches the full
//! parse on real folders: headings found with the same level, text and range, titles
//! that agree, and the CPU time of each over the same texts.
//!
//! Usage: `outline_agreement [--min PERCENT] DIR...`; exits 1 when a folder's heading or
//! title agreement is under PERCENT (default 0: report only).

use std::time::Instant;

use folio_core::parse::{outline::outline, parse};

fn markdown_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut min = 0.0;
    if let Some(i) = args.iter().position(|a| a == "--min") {
        min = args[i + 1].parse().expect("--min PERCENT");
        args.drain(i..i + 2);
    }
    let mut failed = false;
    for dir in &args {
        let mut files = Vec::new();
        markdown_files(std::path::Path::new(dir), &mut files);
        files.sort();
        let texts: Vec<String> = files
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        let started = Instant::now();
        let fast: Vec<_> = texts.iter().map(|t| outline(t)).collect();
        let fast_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        let full: Vec<_> = texts.iter().map(|t| parse(t)).collect();
        let full_ms = started.elapsed().as_secs_f64() * 1e3;
        let (mut total, mut same, mut extra, mut titles) = (0, 0, 0, 0);
        for (f, p) in fast.iter().zip(&full) {
            let want: Vec<_> = p
                .headings
                .iter()
                .map(|h| (h.level, h.text.as_str(), h.range.clone()))
                .collect();
            let got: Vec<_> = f
                .headings
                .iter()
                .map(|h| (h.level, h.text.as_str(), h.range.clone()))
                .collect();
            total += want.len();
            same += want.iter().filter(|h| got.contains(h)).count();
            extra += got.iter().filter(|h| !want.contains(h)).count();
            titles += usize::from(f.title == p.title());
        }
        let heading_pct = 100.0 * same as f64 / total.max(1) as f64;
        let title_pct = 100.0 * titles as f64 / texts.len().max(1) as f64;
        println!(
            "{dir}: {} files; headings {same} of {total} agree ({heading_pct:.2}%), {extra} found only by the scan; titles {titles} of {} ({title_pct:.2}%); outline {fast_ms:.0} ms, full parse {full_ms:.0} ms (one thread)",
            texts.len(),
            texts.len()
        );
        if heading_pct < min || title_pct < min {
            failed = true;
        }
    }
    if failed {
        eprintln!("outline_agreement: under {min}%");
        std::process::exit(1);
    }
}
