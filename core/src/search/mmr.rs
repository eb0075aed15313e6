//! Maximal Marginal Relevance (MMR): diversity re-ranking of a candidate pool.
//!
//! Carbonell and Goldstein, "The Use of MMR, Diversity-Based Reranking for Reordering
//! Documents and Producing Summaries", SIGIR 1998, with the same-document term
//! GrooveSeek adds. Picks are greedy: at each step the candidate `c` maximising
//!
//! ```text
//! mmr(c) = λ · rel(c) − (1 − λ) · max_{s ∈ picked} sim(c, s) − same_doc_penalty · 1[doc(c) ∈ docs(picked)]
//! ```
//!
//! is taken (for the first pick the two subtracted terms are 0, so it is the most
//! relevant candidate). Ties go to the candidate given first (the more relevant one,
//! since the pool arrives best first).
//!
//! - `rel(c)` is the candidate's score min-max normalised over the pool to `[0, 1]`:
//!   `(s − min) / (max − min)`, and 1.0 for every candidate when all scores are equal.
//!   That makes `λ` mean the same for an RRF score (≈ 0.03), a BM25 score or a cosine.
//! - `sim(c, s)` is the cosine of the two chunk vectors when both have one, else the
//!   Jaccard index `|A ∩ B| / |A ∪ B|` of their token sets ([`token_set`]), so MMR
//!   works in lexical mode and while embeddings are still being computed.
//!
//! Defaults (GrooveSeek's): `λ = 0.7`, `same_doc_penalty = 0.0`. `λ = 1` is plain
//! relevance order.

use std::collections::HashSet;

use crate::store::cjk::is_cjk;

/// The relevance/diversity balance used unless configured otherwise.
pub const DEFAULT_MMR_LAMBDA: f64 = 0.7;
/// The same-document penalty used unless configured otherwise.
pub const DEFAULT_MMR_SAME_DOC_PENALTY: f64 = 0.0;

/// One candidate of the pool.
#[derive(Debug, Clone)]
pub struct MmrCandidate<'a> {
    /// Its relevance score (any scale, higher is better); normalised inside.
    pub score: f64,
    /// Its document (the path), for the same-document penalty.
    pub doc: &'a str,
    /// Its embedding, when known.
    pub vector: Option<&'a [f32]>,
    /// Its tokens ([`token_set`]), for the lexical similarity fallback.
    pub tokens: &'a HashSet<String>,
}

/// One pick, in pick order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MmrPick {
    /// Index of the candidate in the pool.
    pub index: usize,
    /// Its `mmr(c)` value when picked.
    pub mmr_score: f64,
}

/// Checks `λ ∈ [0, 1]` and a finite penalty ≥ 0.
pub fn validate(lambda: f64, same_doc_penalty: f64) -> Result<(), String> {
    if !(0.0..=1.0).contains(&lambda) {
        return Err(format!("mmr_lambda must be between 0 and 1, got {lambda}"));
    }
    if !same_doc_penalty.is_finite() || same_doc_penalty < 0.0 {
        return Err(format!(
            "mmr_same_doc_penalty must be a finite number ≥ 0, got {same_doc_penalty}"
        ));
    }
    Ok(())
}

/// Min-max normalises `scores` to `[0, 1]`; all equal (or one) gives all 1.0.
pub fn normalize(scores: &[f64]) -> Vec<f64> {
    let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = max - min;
    scores
        .iter()
        .map(|s| {
            if span > 0.0 && span.is_finite() {
                (s - min) / span
            } else {
                1.0
            }
        })
        .collect()
}

/// Cosine similarity; 0.0 when either vector is zero or the lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Jaccard index of two sets; 0.0 when both are empty.
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    if union == 0 {
        0.0
    } else {
        inter as f64 / union as f64
    }
}

/// The tokens of `text` for the lexical similarity: lowercased runs of letters and
/// digits, with every CJK run (Han, Kana, Hangul) replaced by its overlapping
/// bigrams — the same units the full-text index uses — so Japanese text compares too.
pub fn token_set(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_cjk = |cjk: &mut Vec<char>, out: &mut HashSet<String>| {
        if cjk.len() == 1 {
            out.insert(cjk[0].to_string());
        }
        for pair in cjk.windows(2) {
            out.insert(pair.iter().collect());
        }
        cjk.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            if !word.is_empty() {
                out.insert(std::mem::take(&mut word));
            }
            cjk.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk, &mut out);
            word.extend(c.to_lowercase());
        } else {
            flush_cjk(&mut cjk, &mut out);
            if !word.is_empty() {
                out.insert(std::mem::take(&mut word));
            }
        }
    }
    flush_cjk(&mut cjk, &mut out);
    if !word.is_empty() {
        out.insert(word);
    }
    out
}

/// The similarity MMR uses: cosine when both have vectors, else Jaccard of tokens.
pub fn similarity(a: &MmrCandidate<'_>, b: &MmrCandidate<'_>) -> f64 {
    match (a.vector, b.vector) {
        (Some(x), Some(y)) => cosine(x, y),
        _ => jaccard(a.tokens, b.tokens),
    }
}

/// Greedily picks up to `n` candidates of `pool` (see the module docs for the
/// formula); parameters are assumed valid ([`validate`]).
pub fn select(
    pool: &[MmrCandidate<'_>],
    n: usize,
    lambda: f64,
    same_doc_penalty: f64,
) -> Vec<MmrPick> {
    let rel = normalize(&pool.iter().map(|c| c.score).collect::<Vec<_>>());
    let mut picked = vec![false; pool.len()];
    let mut max_sim = vec![f64::NEG_INFINITY; pool.len()];
    let mut picked_docs: HashSet<&str> = HashSet::new();
    let mut picks = Vec::new();
    while picks.len() < n.min(pool.len()) {
        let mut best: Option<(usize, f64)> = None;
        for (i, c) in pool.iter().enumerate() {
            if picked[i] {
                continue;
            }
            let mut value = lambda * rel[i];
            if !picks.is_empty() {
                value -= (1.0 - lambda) * max_sim[i];
                if picked_docs.contains(c.doc) {
                    value -= same_doc_penalty;
                }
            }
            if best.is_none_or(|(_, b)| value > b) {
                best = Some((i, value));
            }
        }
        let Some((i, value)) = best else { break };
        picked[i] = true;
        picked_docs.insert(pool[i].doc);
        picks.push(MmrPick {
            index: i,
            mmr_score: value,
        });
        for (j, c) in pool.iter().enumerate() {
            if !picked[j] {
                max_sim[j] = max_sim[j].max(similarity(c, &pool[i]));
            }
        }
    }
    picks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    /// Pool (best first): A and B are near-duplicates in one document, C is orthogonal,
    /// D = (3, 4) sits between them (cosine 0.6 with A and B, 0.8 with C). Raw scores 0.04 / 0.035 / 0.03 / 0.02 normalise to
    /// rel = 1 / 0.75 / 0.5 / 0.
    fn pool_vectors() -> (Vec<[f32; 2]>, Vec<&'static str>, Vec<f64>) {
        (
            vec![[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, 4.0]],
            vec!["x.md", "x.md", "y.md", "z.md"],
            vec![0.04, 0.035, 0.03, 0.02],
        )
    }

    #[test]
    fn mmr_hand_computed_with_vectors() {
        let (vecs, docs, scores) = pool_vectors();
        let empty = HashSet::new();
        let pool: Vec<MmrCandidate> = (0..4)
            .map(|i| MmrCandidate {
                score: scores[i],
                doc: docs[i],
                vector: Some(&vecs[i][..]),
                tokens: &empty,
            })
            .collect();
        // λ = 0.7, penalty 0.
        // 1: A = 0.7·1 = 0.7.
        // 2: B = 0.7·0.75 − 0.3·1 = 0.225; C = 0.7·0.5 − 0.3·0 = 0.35; D = 0 − 0.3·0.6 = −0.18 → C.
        // 3: B = 0.525 − 0.3·max(1, 0) = 0.225; D = 0 − 0.3·max(0.6, 0.8) = −0.24 → B.
        // 4: D = −0.24.
        let picks = select(&pool, 4, 0.7, 0.0);
        assert_eq!(
            picks.iter().map(|p| p.index).collect::<Vec<_>>(),
            vec![0, 2, 1, 3]
        );
        for (p, want) in picks.iter().zip([0.7, 0.35, 0.225, -0.24]) {
            assert!(close(p.mmr_score, want), "{} vs {want}", p.mmr_score);
        }
        // Same-document penalty 0.5: at step 3, B = 0.225 − 0.5 = −0.275 < D = −0.24 → D first.
        let picks = select(&pool, 3, 0.7, 0.5);
        assert_eq!(
            picks.iter().map(|p| p.index).collect::<Vec<_>>(),
            vec![0, 2, 3]
        );
        assert!(close(picks[2].mmr_score, -0.24));
        // λ = 1 is relevance order.
        let picks = select(&pool, 4, 1.0, 0.0);
        assert_eq!(
            picks.iter().map(|p| p.index).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        // n larger than the pool stops at the pool.
        assert_eq!(select(&pool, 10, 0.7, 0.0).len(), 4);
    }

    #[test]
    fn mmr_hand_computed_with_jaccard_fallback() {
        // Tokens: A {a b c d}, B {a b c e} (J(A,B) = 3/5 = 0.6), C {x y} (J = 0 with both).
        // Scores 3 / 2 / 1 → rel 1 / 0.5 / 0. λ = 0.5.
        // 1: A = 0.5.  2: B = 0.25 − 0.5·0.6 = −0.05; C = 0 − 0 = 0 → C (0.0).
        // 3: B = −0.05.
        let texts = ["a b c d", "A, b. c e", "x y"];
        let sets: Vec<HashSet<String>> = texts.iter().map(|t| token_set(t)).collect();
        assert!(close(jaccard(&sets[0], &sets[1]), 0.6));
        let pool: Vec<MmrCandidate> = (0..3)
            .map(|i| MmrCandidate {
                score: [3.0, 2.0, 1.0][i],
                doc: ["p", "q", "r"][i],
                vector: None,
                tokens: &sets[i],
            })
            .collect();
        let picks = select(&pool, 3, 0.5, 0.0);
        assert_eq!(
            picks.iter().map(|p| p.index).collect::<Vec<_>>(),
            vec![0, 2, 1]
        );
        for (p, want) in picks.iter().zip([0.5, 0.0, -0.05]) {
            assert!(close(p.mmr_score, want), "{} vs {want}", p.mmr_score);
        }
    }

    #[test]
    fn mmr_ties_go_to_the_earlier_candidate_and_equal_scores_normalise_to_one() {
        assert_eq!(normalize(&[2.0, 2.0]), vec![1.0, 1.0]);
        assert_eq!(normalize(&[3.0, 1.0, 2.0]), vec![1.0, 0.0, 0.5]);
        let empty = HashSet::new();
        let pool: Vec<MmrCandidate> = (0..2)
            .map(|i| MmrCandidate {
                score: 1.0,
                doc: ["a", "b"][i],
                vector: None,
                tokens: &empty,
            })
            .collect();
        assert_eq!(
            select(&pool, 2, 0.7, 0.0)
                .iter()
                .map(|p| p.index)
                .collect::<Vec<_>>(),
            vec![0, 1]
        );
    }

    #[test]
    fn token_sets_use_cjk_bigrams_and_cosine_edge_cases() {
        let t = token_set("本番の変更 Deploy-2");
        let want: HashSet<String> = ["本番", "番の", "の変", "変更", "deploy", "2"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(t, want);
        assert_eq!(cosine(&[1.0, 0.0], &[3.0, 4.0]), 3.0 / 5.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
        assert!(validate(1.5, 0.0).is_err());
        assert!(validate(0.7, -0.1).is_err());
        assert!(validate(0.7, 0.0).is_ok());
    }
}
