//! `low_confidence` and `min_confidence_ratio`.
//!
//! GrooveSeek's rule (docs/filters.md there): with the returned hits' scores,
//!
//! ```text
//! low_confidence ⇔ n ≥ 2  ∧  mean(scores) > 0  ∧  max(scores) / mean(scores) < min_confidence_ratio
//! ```
//!
//! GrooveSeek's default `min_confidence_ratio` is 1.5; folio's defaults are per mode
//! ([`HYBRID_MIN_CONFIDENCE_RATIO`], [`SEMANTIC_MIN_CONFIDENCE_RATIO`]; lexical judges
//! term coverage instead). `0` turns the check off, and the numerator is the best score,
//! not the first hit's (MMR reorders). The flag says the best hit
//! does not stand out from the rest; it is advisory and says nothing certain about
//! correctness (GrooveSeek measured it firing on correctly answered queries too).
//!
//! folio applies the same "how far does the best stand above the average" test in
//! every mode, on the score each mode ranks by (semantic mode: on the plain cosine, which
//! its ranking corrects for the collection):
//!
//! - **hybrid**: the fused RRF scores — GrooveSeek's rule exactly; when the lexical leg
//!   was weighted down for ranking (`weak_lexical_factor`, `cjk_lexical_factor` in the
//!   pipeline), the scores of the nominal weights, so that the flag keeps saying whether
//!   the two legs agreed (one leg's scores alone never stand 1.5× above their mean);
//! - **lexical**: the BM25 scores (`-bm25`, higher is better), *or* the best hit
//!   matching fewer than half of the query's included terms (folio's lexical rule,
//!   which catches a single weak hit the ratio cannot judge);
//! - **semantic**: cosine similarities crowd near each other (0.62 against a mean of
//!   0.55 is a clear winner yet a ratio of 1.13), so the ratio is taken on cosine
//!   *distances* `d = 1 − cos`, lower is better: `mean(d) / min(d)`, which is ∞ when
//!   the best distance is 0.
//!
//! In every mode an empty result is low confidence; the scores are those of the hits
//! selected (after MMR, before parent collapse).

/// GrooveSeek's threshold, 1.5: what a caller who sets `min_confidence_ratio` usually
/// asks for. folio's defaults are per mode (below), because at kb_search's default limit
/// of 10 hits this one flags nearly every answer, right or wrong.
pub const GROOVESEEK_MIN_CONFIDENCE_RATIO: f64 = 1.5;

/// Default `min_confidence_ratio` in hybrid mode: 0, the ratio check is off. Measured
/// with `folio eval` at the default limit (2026-12-01, built-in model): at 1.5 the flag
/// was set on 26 of 29 right first hits of the GrooveSeek set and 23 of 33 of the
/// development set (benchmarks/tldr-bilingual), and on 64 of its 88 wrong ones: RRF
/// scores of ten hits sit too close together to say anything (at 1.3, 7 of 33 right and
/// 23 of 88 wrong). Hybrid relies on the semantic-only floor instead
/// (`PipelineOptions::semantic_only_floor`).
pub const HYBRID_MIN_CONFIDENCE_RATIO: f64 = 0.0;

/// Default `min_confidence_ratio` in semantic mode: 1.1, on cosine distances. Measured as
/// above: at 1.1 the flag is set on 0 of 23 right first hits and 3 of 7 wrong ones of the
/// GrooveSeek set, and on 16 of 35 right, 63 of 86 wrong and 10 of 12 unanswerable
/// questions of the development set; at 1.5 on every question of the development set and
/// 18 of 23 right GrooveSeek answers; at 1.2 on 6 of 23.
pub const SEMANTIC_MIN_CONFIDENCE_RATIO: f64 = 1.1;

/// Checks a `min_confidence_ratio`: finite and ≥ 0 (0 disables the check).
pub fn validate(ratio: f64) -> Result<(), String> {
    if !ratio.is_finite() || ratio < 0.0 {
        return Err(format!(
            "min_confidence_ratio must be a finite number ≥ 0, got {ratio}"
        ));
    }
    Ok(())
}

/// `max / mean` of scores where higher is better; `None` when fewer than 2 scores
/// or the mean is not positive (the ratio is then meaningless).
pub fn ratio_higher_better(scores: &[f64]) -> Option<f64> {
    if scores.len() < 2 {
        return None;
    }
    let mean = scores.iter().sum::<f64>() / scores.len() as f64;
    if mean <= 0.0 || !mean.is_finite() {
        return None;
    }
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(max / mean)
}

/// Reranker scores on a probability scale for [`ratio_higher_better`]: as they are when
/// all lie in `[0, 1]` (the relevance of the Cohere API, text-embeddings-inference's
/// default), else through the logistic function (raw logits, which llama.cpp's server
/// and others return, are often all negative, where a ratio means nothing). The order
/// is kept either way.
pub fn rerank_probabilities(scores: &[f64]) -> Vec<f64> {
    if scores.iter().all(|s| (0.0..=1.0).contains(s)) {
        scores.to_vec()
    } else {
        scores.iter().map(|s| 1.0 / (1.0 + (-s).exp())).collect()
    }
}

/// `mean / min` of distances (lower is better); ∞ when the best is 0; `None` when fewer
/// than 2 distances or the mean is not positive.
pub fn ratio_distances(distances: &[f64]) -> Option<f64> {
    if distances.len() < 2 {
        return None;
    }
    let mean = distances.iter().sum::<f64>() / distances.len() as f64;
    if mean <= 0.0 || !mean.is_finite() {
        return None;
    }
    let min = distances
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .max(0.0);
    Some(if min == 0.0 {
        f64::INFINITY
    } else {
        mean / min
    })
}

/// True when a ratio (from the functions above) is under the threshold; a missing
/// ratio or a threshold of 0 never flags.
pub fn is_low(ratio: Option<f64>, min_confidence_ratio: f64) -> bool {
    min_confidence_ratio > 0.0 && ratio.is_some_and(|r| r < min_confidence_ratio)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rerank_scores_are_read_as_probabilities() {
        // Already in [0, 1]: as they are.
        assert_eq!(rerank_probabilities(&[0.9, 0.1, 0.0]), [0.9, 0.1, 0.0]);
        // Logits: through the logistic function, so that all-negative scores still give a
        // ratio (their mean is negative, where max/mean means nothing).
        assert_eq!(ratio_higher_better(&[-2.0, -9.0, -9.5]), None);
        let p = rerank_probabilities(&[-2.0, -9.0, -9.5]);
        let expected = [
            0.11920292202211755,
            0.00012339457598623172,
            0.00007484622751061124,
        ];
        for (got, want) in p.iter().zip(expected) {
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
        let ratio = ratio_higher_better(&p).unwrap();
        assert!((ratio - 2.99502).abs() < 1e-5, "{ratio}");
    }

    #[test]
    fn confidence_ratio_hand_computed() {
        // RRF scores of a hit both legs ranked first and three single-leg hits:
        // 2/61, 1/62, 1/63, 1/64 → mean = 0.0201035..., max/mean = 1.63091 ≥ 1.5 → confident.
        let fused = [2.0 / 61.0, 1.0 / 62.0, 1.0 / 63.0, 1.0 / 64.0];
        let r = ratio_higher_better(&fused).unwrap();
        let mean = fused.iter().sum::<f64>() / 4.0;
        assert_eq!(r, (2.0 / 61.0) / mean);
        assert!((r - 1.630_905_7).abs() < 1e-7, "{r}");
        assert!(!is_low(Some(r), 1.5));
        // Flat single-leg list: 1/61 … 1/64 → 1.02426 < 1.5 → low.
        let flat = [1.0 / 61.0, 1.0 / 62.0, 1.0 / 63.0, 1.0 / 64.0];
        assert!(is_low(ratio_higher_better(&flat), 1.5));
        // 0 disables; one hit or a non-positive mean cannot be judged.
        assert!(!is_low(ratio_higher_better(&flat), 0.0));
        assert_eq!(ratio_higher_better(&[3.0]), None);
        assert_eq!(ratio_higher_better(&[-1.0, 0.5]), None);
        // Cosines 0.8, 0.5, 0.5 → distances 0.2, 0.5, 0.5: mean 0.4 / 0.2 = 2.0.
        let d = [1.0 - 0.8, 1.0 - 0.5, 1.0 - 0.5];
        assert!((ratio_distances(&d).unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(ratio_distances(&[0.0, 0.3]), Some(f64::INFINITY));
        assert!(validate(f64::NAN).is_err() && validate(-1.0).is_err() && validate(0.0).is_ok());
    }
}
