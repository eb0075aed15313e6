//! Evaluation tests: metrics worked out by hand, golden-file validation, groups and tags,
//! the diff between two runs, the text report and the JSON round trip.

use std::collections::BTreeMap;

use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn eval_metrics_hand_computed() {
    let ranked = s(&["a", "x", "b", "y", "c"]);
    let e = s(&["b", "a"]);
    assert_eq!(recall_at_k(&e, &ranked, 1), 0.5);
    assert_eq!(recall_at_k(&e, &ranked, 3), 1.0);
    assert_eq!(recall_at_k(&e, &ranked, 10), 1.0);
    assert_eq!(reciprocal_rank(&e, &ranked), 1.0);
    assert_eq!(reciprocal_rank(&s(&["c"]), &ranked), 0.2);
    assert_eq!(reciprocal_rank(&s(&["z"]), &ranked), 0.0);
    // DCG = 1/log2(2) + 1/log2(4) = 1 + 0.5 = 1.5; IDCG = 1 + 1/log2(3) = 1.6309297535714575.
    let want = 1.5 / (1.0 + 1.0 / 3f64.log2());
    assert!(close(ndcg_at_k(&e, &ranked, 10), want));
    assert!((want - 0.919_720_8).abs() < 1e-6);
    // Only 'c' at rank 5, k = 10: (1/log2(6)) / 1 = 0.3868528072.
    assert!(close(ndcg_at_k(&s(&["c"]), &ranked, 10), 1.0 / 6f64.log2()));
    assert_eq!(ndcg_at_k(&s(&["c"]), &ranked, 4), 0.0);
    // Perfect ranking is 1.
    assert_eq!(ndcg_at_k(&s(&["a", "x"]), &ranked, 10), 1.0);
    // Three expected, k = 2: IDCG counts min(3, 2) = 2 positions.
    assert!(close(ndcg_at_k(&s(&["a", "x", "q"]), &ranked, 2), 1.0));
}

#[test]
fn eval_ranks_documents_at_first_occurrence() {
    let hits = ["a.md", "a.md", "b.md", "a.md", "c.md"];
    assert_eq!(rank_documents(hits), s(&["a.md", "b.md", "c.md"]));
    let q = GoldenQuery {
        id: "q".into(),
        query: "x".into(),
        expected: s(&["c.md"]),
        tags: Vec::new(),
    };
    let out = score_query(&q, &rank_documents(hits), &[1, 5, 10]);
    assert_eq!(out.first_rank, Some(3));
    assert_eq!(out.metrics["recall@1"], 0.0);
    assert_eq!(out.metrics["recall@5"], 1.0);
    assert!(close(out.metrics["mrr"], 1.0 / 3.0));
    assert!(close(out.metrics["ndcg@10"], 0.5));
}

#[test]
fn eval_groups_and_diff() {
    let golden = parse_golden(
        "queries:\n  - id: one\n    query: alpha\n    expected: [{path: a.md}]\n  - id: two\n    query: beta\n    expected:\n      - path: b.md\n      - path: c.md\n",
    )
    .unwrap();
    let mut results: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    results.insert("alpha", s(&["x.md", "a.md"]));
    results.insert("beta", s(&["c.md", "c.md", "y.md", "b.md"]));
    let mut search = |q: &str| -> Result<SearchOutcome, String> {
        Ok(SearchOutcome {
            paths: results[q].clone(),
            low_confidence: q == "beta",
        })
    };
    let report = run_eval(
        &golden,
        "g.yml",
        "lexical",
        &[10, 1, 5, 5],
        &|p| p != "c.md",
        &mut search,
    )
    .unwrap();
    assert_eq!(report.k, vec![1, 5, 10]);
    assert_eq!(
        (
            report.single.queries,
            report.multi.queries,
            report.all.queries
        ),
        (1, 1, 2)
    );
    assert_eq!(report.single.metrics["recall@1"], 0.0);
    assert_eq!(report.single.metrics["mrr"], 0.5);
    // beta: documents c, y, b → recall@1 = 0.5, recall@5 = 1, RR = 1,
    // nDCG = (1 + 1/log2(4)) / (1 + 1/log2(3)) = 1.5 / 1.6309297535714575.
    assert_eq!(report.multi.metrics["recall@1"], 0.5);
    assert_eq!(report.multi.metrics["recall@5"], 1.0);
    assert!(close(
        report.multi.metrics["ndcg@10"],
        1.5 / (1.0 + 1.0 / 3f64.log2())
    ));
    assert_eq!(report.all.metrics["mrr"], 0.75);
    assert_eq!(report.missing_expected, s(&["c.md"]));
    assert_eq!(report.queries[1].ranks, vec![Some(3), Some(1)]);
    assert!(!report.queries[0].low_confidence && report.queries[1].low_confidence);
    // beta's first document is right and flagged; alpha's is wrong and not.
    let text = format_text(&report, None);
    assert!(
        text.lines()
            .any(|l| l
                == "low_confidence on 1 of 2 queries: 1 of 1 right first hits, 0 of 1 wrong ones"),
        "{text}"
    );

    // A second run where alpha finds a.md first.
    results.insert("alpha", s(&["a.md"]));
    let mut search = |q: &str| -> Result<SearchOutcome, String> {
        Ok(SearchOutcome {
            paths: results[q].clone(),
            low_confidence: q == "beta",
        })
    };
    let now = run_eval(
        &golden,
        "g.yml",
        "lexical",
        &[1, 5, 10],
        &|_| true,
        &mut search,
    )
    .unwrap();
    let d = diff(&report, &now);
    assert!(!d.golden_changed);
    let single_r1 = d
        .metrics
        .iter()
        .find(|m| m.group == "single" && m.metric == "recall@1")
        .unwrap();
    assert_eq!(
        (single_r1.before, single_r1.after, single_r1.delta),
        (0.0, 1.0, 1.0)
    );
    assert_eq!(d.queries.len(), 1);
    assert_eq!(
        (
            d.queries[0].id.as_str(),
            d.queries[0].before,
            d.queries[0].after
        ),
        ("one", Some(2), Some(1))
    );
    let text = format_text(&now, Some(&d));
    assert!(text.contains("(+1.000)"), "{text}");
    assert!(text.contains("one") && text.contains("2 → 1"), "{text}");
    // JSON round trip.
    let back: EvalReport = serde_json::from_str(&serde_json::to_string(&now).unwrap()).unwrap();
    assert_eq!(back, now);
}

#[test]
fn eval_rejects_invalid_golden_files() {
    for (text, needle) in [
        ("", "queries"),
        ("queries: []", "empty"),
        ("queries:\n  - query: x\n", "expected"),
        (
            "queries:\n  - query: ''\n    expected: [{path: a.md}]\n",
            "query",
        ),
        (
            "queries:\n  - query: x\n    expected: [{path: /etc/passwd}]\n",
            "root-relative",
        ),
        (
            "queries:\n  - query: x\n    expected: [{path: ../a.md}]\n",
            "root-relative",
        ),
        (
            "queries:\n  - query: x\n    expected: [{path: a.md, heading: H}]\n",
            "heading",
        ),
        (
            "queries:\n  - {id: a, query: x, expected: [{path: a.md}]}\n  - {id: a, query: y, expected: [{path: b.md}]}\n",
            "duplicate",
        ),
        (
            "queries:\n  - query: x\n    expected: [{path: a.md}]\n    bogus: 1\n",
            "bogus",
        ),
        (
            "queries:\n  - query: x\n    tags: ['']\n    expected: [{path: a.md}]\n",
            "a tag is empty",
        ),
        ("queries: [", ""),
    ] {
        let err = parse_golden(text).unwrap_err().to_string();
        assert!(
            err.starts_with("invalid golden file") && err.contains(needle),
            "{text:?}: {err}"
        );
    }
    let g = parse_golden("defaults: {limit: 3}\nqueries:\n  - query: a long query that goes beyond thirty-two characters\n    tags: [x]\n    expected: [{path: ./a.md}, {path: a.md}]\n").unwrap();
    assert_eq!(g.queries[0].id, "a long query that goes beyond th");
    assert_eq!(g.queries[0].tags, s(&["x"]));
    assert_eq!(g.queries[0].expected, s(&["a.md"]));
}
#[test]
fn eval_averages_per_tag() {
    let golden = parse_golden(
        "queries:
  - {id: en-a, tags: [en], query: alpha, expected: [{path: a.md}]}
  - {id: ja-b, tags: [ja, ' ja'], query: beta, expected: [{path: b.md}]}
  - {id: x-c, tags: [cross], query: gamma, expected: [{path: c.md}, {path: d.md}]}
  - {id: en-d, tags: [en], query: delta, expected: [{path: e.md}]}
  - {id: plain, query: eps, expected: [{path: f.md}]}
",
    )
    .unwrap();
    assert_eq!(golden.queries[1].tags, s(&["ja"]));
    assert!(golden.queries[4].tags.is_empty());
    let mut results: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    results.insert("alpha", s(&["a.md"]));
    results.insert("beta", s(&["x.md", "y.md", "b.md"]));
    results.insert("gamma", s(&["d.md", "z.md", "c.md"]));
    results.insert("delta", s(&[]));
    results.insert("eps", s(&["f.md"]));
    let run = |results: &BTreeMap<&str, Vec<String>>| {
        let mut search = |q: &str| -> Result<SearchOutcome, String> {
            Ok(SearchOutcome {
                paths: results[q].clone(),
                low_confidence: false,
            })
        };
        run_eval(&golden, "g.yml", "hybrid", &[1, 5], &|_| true, &mut search).unwrap()
    };
    let report = run(&results);
    assert_eq!(
        report.by_tag.keys().collect::<Vec<_>>(),
        vec!["cross", "en", "ja"]
    );
    let en = &report.by_tag["en"];
    assert_eq!(
        (en.all.queries, en.single.queries, en.multi.queries),
        (2, 2, 0)
    );
    // alpha first (1, 1, 1, 1), delta not found (0, 0, 0, 0).
    assert_eq!(en.all.metrics["recall@1"], 0.5);
    assert_eq!(en.all.metrics["recall@5"], 0.5);
    assert_eq!(en.all.metrics["mrr"], 0.5);
    assert_eq!(en.all.metrics["ndcg@5"], 0.5);
    // beta third: recall@1 0, recall@5 1, RR 1/3, nDCG 1/log2(4) = 0.5.
    let ja = &report.by_tag["ja"].all;
    assert_eq!(ja.queries, 1);
    assert_eq!(ja.metrics["recall@1"], 0.0);
    assert_eq!(ja.metrics["recall@5"], 1.0);
    assert!(close(ja.metrics["mrr"], 1.0 / 3.0));
    assert_eq!(ja.metrics["ndcg@5"], 0.5);
    // gamma: d first, c third; the tag's one query is multi-answer.
    let cross = &report.by_tag["cross"];
    assert_eq!((cross.single.queries, cross.multi.queries), (0, 1));
    assert_eq!(cross.multi.metrics["recall@1"], 0.5);
    assert_eq!(cross.all.metrics["mrr"], 1.0);
    assert!(close(
        cross.all.metrics["ndcg@5"],
        1.5 / (1.0 + 1.0 / 3f64.log2())
    ));
    // The untagged query counts in the whole file only.
    assert_eq!(report.all.queries, 5);
    assert_eq!(report.queries[3].tags, s(&["en"]));

    let text = format_text(&report, None);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("by tag"))
        .take(5)
        .collect();
    assert_eq!(
        table,
        vec![
            "by tag         cross (1: 0+1)       en (2: 2+0)       ja (1: 1+0)",
            "recall@1                0.500             0.500             0.000",
            "recall@5                1.000             0.500             1.000",
            "mrr                     1.000             0.500             0.333",
            "ndcg@5                  0.920             0.500             0.500",
        ],
        "{text}"
    );

    // Against an identical run nothing moved: the table is the same, without padding.
    let same = format_text(&report, Some(&diff(&report, &report)));
    let same_table: Vec<&str> = same
        .lines()
        .skip_while(|l| !l.starts_with("by tag"))
        .take(5)
        .collect();
    assert_eq!(same_table, table, "{same}");

    // delta now finds e.md first: only the en tag (and the totals) move.
    results.insert("delta", s(&["e.md"]));
    let now = run(&results);
    let d = diff(&report, &now);
    let en_r1 = d
        .metrics
        .iter()
        .find(|m| m.group == "tag:en" && m.metric == "recall@1")
        .unwrap();
    assert_eq!((en_r1.before, en_r1.after, en_r1.delta), (0.5, 1.0, 0.5));
    let ja_r1 = d
        .metrics
        .iter()
        .find(|m| m.group == "tag:ja" && m.metric == "recall@1")
        .unwrap();
    assert_eq!(ja_r1.delta, 0.0);
    let text = format_text(&now, Some(&d));
    let row = text
        .lines()
        .skip_while(|l| !l.starts_with("by tag"))
        .nth(1)
        .unwrap();
    assert_eq!(
        row,
        "recall@1       0.500             1.000 (+0.500)    0.000"
    );

    // The tags survive a JSON round trip, and a report written before tags existed
    // (no `by_tag`, no `tags`) still loads.
    let json = serde_json::to_value(&now).unwrap();
    assert_eq!(json["by_tag"]["en"]["all"]["queries"], 2);
    assert_eq!(json["queries"][0]["tags"], serde_json::json!(["en"]));
    assert!(json["queries"][4].get("tags").is_none());
    let back: EvalReport = serde_json::from_value(json.clone()).unwrap();
    assert_eq!(back, now);
    let mut old = json;
    old.as_object_mut().unwrap().remove("by_tag");
    let old: EvalReport = serde_json::from_value(old).unwrap();
    assert!(old.by_tag.is_empty());
}

#[test]
fn eval_counts_unanswerable_queries_apart() {
    let golden = parse_golden(
        "queries:
  - {id: en-a, tags: [en], query: alpha, expected: [{path: a.md}]}
  - {id: en-none, tags: [en], query: bread, expected: []}
  - {id: ja-none, tags: [ja], query: パン, expected: []}
  - {id: ja-b, tags: [ja], query: beta, expected: [{path: b.md}]}
",
    )
    .unwrap();
    assert!(golden.queries[1].unanswerable() && !golden.queries[0].unanswerable());
    // alpha right and unflagged, beta wrong first and flagged; of the two unanswerable
    // queries only the Japanese one is flagged.
    let mut search = |q: &str| -> Result<SearchOutcome, String> {
        let (paths, low_confidence) = match q {
            "alpha" => (s(&["a.md", "x.md"]), false),
            "beta" => (s(&["x.md", "b.md"]), true),
            "bread" => (s(&["a.md"]), false),
            _ => (s(&["b.md"]), true),
        };
        Ok(SearchOutcome {
            paths,
            low_confidence,
        })
    };
    let report = run_eval(&golden, "g.yml", "hybrid", &[1, 5], &|_| true, &mut search).unwrap();
    assert_eq!(
        report.unanswerable,
        Unanswerable {
            queries: 2,
            low_confidence: 1
        }
    );
    assert_eq!(report.queries[1].group, "none");
    assert_eq!(report.queries[1].ranks, Vec::<Option<usize>>::new());
    // Averages cover the two answerable queries only: recall@1 (1 + 0) / 2, MRR (1 + 1/2) / 2.
    assert_eq!(report.all.queries, 2);
    assert_eq!(report.all.metrics["recall@1"], 0.5);
    assert_eq!(report.all.metrics["mrr"], 0.75);
    assert_eq!((report.single.queries, report.multi.queries), (2, 0));
    assert_eq!(report.by_tag["ja"].all.queries, 1);
    assert_eq!(report.by_tag["ja"].all.metrics["recall@1"], 0.0);
    let text = format_text(&report, None);
    assert!(
        text.contains(
            "low_confidence on 2 of 4 queries: 0 of 1 right first hits, 1 of 1 wrong ones, 1 of 2 unanswerable queries\n"
        ),
        "{text}"
    );
    assert!(!text.contains("en-none"), "{text}");
    // The JSON round trip keeps the count; a report without it loads as zero.
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["unanswerable"]["low_confidence"], 1);
    assert_eq!(
        serde_json::from_value::<EvalReport>(json.clone()).unwrap(),
        report
    );
    let mut old = json;
    old.as_object_mut().unwrap().remove("unanswerable");
    let old: EvalReport = serde_json::from_value(old).unwrap();
    assert_eq!(old.unanswerable, Unanswerable::default());
}
