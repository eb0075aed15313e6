//! Reciprocal Rank Fusion (RRF) of ranked candidate lists.
//!
//! Each leg (lexical, vector, …) ranks candidate keys (chunk ids) best first.
//! The fused score of a key is
//!
//! ```text
//! score(d) = Σ_legs  w_leg / (k + rank_leg(d))      rank 1-based; a leg that did not return d adds 0
//! ```
//!
//! with `k = 60` by default (Cormack, Clarke and Büttcher, "Reciprocal Rank Fusion
//! outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009; the same
//! constant GrooveSeek uses) and every leg weight 1.0 by default.
//! Only ranks matter, so a BM25 score and a cosine never have to be made comparable.
//!
//! **Ties** are broken deterministically, in this order:
//! 1. the higher fused score;
//! 2. the better (smaller) best rank over all legs;
//! 3. the earlier leg reaching that best rank (legs in the order given, so with
//!    `[lexical, vector]` an exact tie goes to the lexical leg's candidate);
//! 4. the smaller key.
//!
//! A key listed twice in one leg counts once, at its first (best) rank.

use std::collections::HashMap;
use std::hash::Hash;

/// The RRF constant used unless configured otherwise.
pub const DEFAULT_RRF_K: f64 = 60.0;

/// One ranked list to fuse.
#[derive(Debug, Clone, Copy)]
pub struct RrfLeg<'a, K> {
    /// Multiplies this leg's contribution; 1.0 by default. Must be finite and ≥ 0.
    pub weight: f64,
    /// Candidate keys, best first.
    pub ranked: &'a [K],
}

/// A fused candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<K> {
    /// The candidate key.
    pub key: K,
    /// `Σ w / (k + rank)` over the legs that returned it.
    pub score: f64,
    /// The 1-based rank in each leg (same order as the legs given), `None` when absent.
    pub ranks: Vec<Option<usize>>,
}

/// Checks RRF parameters: `k` finite and > 0, every weight finite and ≥ 0; `weights`
/// pairs each weight with the parameter name the error message uses.
pub fn validate(k: f64, weights: &[(&str, f64)]) -> Result<(), String> {
    if !k.is_finite() || k <= 0.0 {
        return Err(format!("rrf_k must be a finite number > 0, got {k}"));
    }
    for &(name, w) in weights {
        if !w.is_finite() || w < 0.0 {
            return Err(format!("{name} must be a finite number ≥ 0, got {w}"));
        }
    }
    Ok(())
}

/// Fuses `legs` with constant `k`; returns every key any leg returned, best first
/// (see the module docs for the tie-break). Parameters are assumed valid ([`validate`]).
pub fn rrf<K: Eq + Hash + Ord + Clone>(legs: &[RrfLeg<'_, K>], k: f64) -> Vec<Fused<K>> {
    let mut index: HashMap<K, usize> = HashMap::new();
    let mut fused: Vec<Fused<K>> = Vec::new();
    for (leg_idx, leg) in legs.iter().enumerate() {
        for (pos, key) in leg.ranked.iter().enumerate() {
            let i = *index.entry(key.clone()).or_insert_with(|| {
                fused.push(Fused {
                    key: key.clone(),
                    score: 0.0,
                    ranks: vec![None; legs.len()],
                });
                fused.len() - 1
            });
            if fused[i].ranks[leg_idx].is_none() {
                let rank = pos + 1;
                fused[i].ranks[leg_idx] = Some(rank);
            }
        }
    }
    // Sum in leg order so equal inputs always give bit-identical scores.
    for f in &mut fused {
        f.score = f
            .ranks
            .iter()
            .zip(legs)
            .filter_map(|(rank, leg)| rank.map(|r| leg.weight / (k + r as f64)))
            .sum();
    }
    fused.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| best_rank(a).cmp(&best_rank(b)))
            .then_with(|| a.key.cmp(&b.key))
    });
    fused
}

/// `(best rank, index of the first leg reaching it)`; absent keys never occur here.
fn best_rank<K>(f: &Fused<K>) -> (usize, usize) {
    f.ranks
        .iter()
        .enumerate()
        .filter_map(|(leg, r)| r.map(|r| (r, leg)))
        .min()
        .unwrap_or((usize::MAX, usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leg(ranked: &[i64]) -> RrfLeg<'_, i64> {
        RrfLeg {
            weight: 1.0,
            ranked,
        }
    }

    #[test]
    fn rrf_two_legs_hand_computed() {
        // lexical: 1, 2, 3   vector: 3, 1, 4
        // 1: 1/61 + 1/62 = 0.0325224749   3: 1/63 + 1/61 = 0.0322664585
        // 2: 1/62 = 0.016129...          4: 1/63 = 0.015873...
        let lexical = [1, 2, 3];
        let vector = [3, 1, 4];
        let fused = rrf(&[leg(&lexical), leg(&vector)], 60.0);
        let keys: Vec<i64> = fused.iter().map(|f| f.key).collect();
        assert_eq!(keys, vec![1, 3, 2, 4]);
        assert_eq!(fused[0].score, 1.0 / 61.0 + 1.0 / 62.0);
        assert_eq!(fused[1].score, 1.0 / 63.0 + 1.0 / 61.0);
        assert_eq!(fused[2].score, 1.0 / 62.0);
        assert_eq!(fused[3].score, 1.0 / 63.0);
        assert!((fused[0].score - 0.032_522_475).abs() < 1e-9);
        assert!((fused[1].score - 0.032_266_458).abs() < 1e-9);
        assert_eq!(fused[0].ranks, vec![Some(1), Some(2)]);
        assert_eq!(fused[1].ranks, vec![Some(3), Some(1)]);
        assert_eq!(fused[2].ranks, vec![Some(2), None]);
        assert_eq!(fused[3].ranks, vec![None, Some(3)]);
    }

    #[test]
    fn rrf_weights_scale_each_leg() {
        // weights 1.0 / 2.0, k = 60: a: 1/61 = 0.016393, b: 2/61 = 0.032787, c: 1/62 + 2/62 = 0.048387
        let lexical = [10, 30];
        let vector = [20, 30];
        let fused = rrf(
            &[
                RrfLeg {
                    weight: 1.0,
                    ranked: &lexical,
                },
                RrfLeg {
                    weight: 2.0,
                    ranked: &vector,
                },
            ],
            60.0,
        );
        let got: Vec<(i64, f64)> = fused.iter().map(|f| (f.key, f.score)).collect();
        assert_eq!(
            got,
            vec![
                (30, 1.0 / 62.0 + 2.0 / 62.0),
                (20, 2.0 / 61.0),
                (10, 1.0 / 61.0)
            ]
        );
    }

    #[test]
    fn rrf_ties_go_to_best_rank_then_earlier_leg_then_key() {
        // 8 and 7 are each rank 1 in one leg: equal scores 1/61 and equal best rank, so
        // the lexical leg (given first) wins; 9 and 6 likewise at rank 2 (1/62).
        let lexical = [8, 9];
        let vector = [7, 6];
        let fused = rrf(&[leg(&lexical), leg(&vector)], 60.0);
        let keys: Vec<i64> = fused.iter().map(|f| f.key).collect();
        assert_eq!(keys, vec![8, 7, 9, 6]);
        // Everything equal but the leg: zero weights give both 0.0 at rank 1; leg order decides.
        let a = [2];
        let b = [1];
        let fused = rrf(
            &[
                RrfLeg {
                    weight: 0.0,
                    ranked: &a,
                },
                RrfLeg {
                    weight: 0.0,
                    ranked: &b,
                },
            ],
            60.0,
        );
        assert_eq!(fused.iter().map(|f| f.key).collect::<Vec<_>>(), vec![2, 1]);
    }

    #[test]
    fn rrf_counts_a_repeated_key_once_and_handles_k() {
        let lexical = [1, 1, 2];
        let fused = rrf(&[leg(&lexical)], 1.0);
        assert_eq!(
            fused.iter().map(|f| (f.key, f.score)).collect::<Vec<_>>(),
            vec![(1, 0.5), (2, 0.25)]
        );
        assert_eq!(
            validate(0.0, &[("w", 1.0)]),
            Err("rrf_k must be a finite number > 0, got 0".into())
        );
        assert_eq!(
            validate(60.0, &[("vector_weight", f64::NAN)]),
            Err("vector_weight must be a finite number ≥ 0, got NaN".into())
        );
        assert_eq!(
            validate(60.0, &[("a", 1.0), ("lexical_weight", -1.0)]),
            Err("lexical_weight must be a finite number ≥ 0, got -1".into())
        );
        assert_eq!(validate(60.0, &[("a", 0.0), ("b", 2.0)]), Ok(()));
    }
}
