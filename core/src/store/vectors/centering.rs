//! Centring the vector leg's similarities on the collection (docs/search.md, "Centring").
//!
//! Cosine similarity with a small multilingual model has two biases that depend on the
//! collection rather than on the query:
//! - **Hubs.** Embeddings share a common direction (the mean of the collection, `μ`), and
//!   the texts nearest it (alias pages, short generic lists) are near every query. A
//!   vector `v` loses `b · (v · μ)`: the query is moved away from the collection's mean
//!   (`v · (q − b μ)`), the mean-centring of Mu and Viswanath ("All-but-the-Top", ICLR
//!   2018) applied to the query, which leaves the stored vectors as they are.
//! - **Language.** A query is nearer every text written like itself: an English question
//!   is nearer any English page than the Japanese page that answers it. Each writing
//!   system `w` ([`WritingSystem`]) has its own mean `μ_w`; a vector of `w` loses
//!   `a · (q · (μ_w − μ))`, which moves every group's mean onto the collection's as far
//!   as the query can see it (language-mean centring, Libovický, Rosa and Fraser, "On
//!   the Language Neutrality of Pre-trained Multilingual Representations", 2020).
//!
//! So the score of a unit vector `v` of writing system `w` for a unit query `q` is
//!
//! ```text
//! score = q · v − a · q · (μ_w − μ) − b · v · μ
//! ```
//!
//! `μ` is the mean of every unit chunk vector of the model, `μ_w` the mean of those of
//! `w`; a writing system with fewer than [`MIN_GROUP_VECTORS`] vectors takes `μ` (no
//! correction). With `a = b = 0` the score is the cosine.

use std::collections::HashMap;

use unicode_script::Script;

use crate::store::writing_system::{ScriptProfile, WritingSystem, tally};

/// A writing system needs at least this many vectors for a mean of its own; fewer say
/// too little about where the model puts the language, and take the collection's mean.
pub const MIN_GROUP_VECTORS: usize = 20;

/// The weights of the two corrections (module documentation); `NONE` is plain cosine.
///
/// The weights are not checked here: `PipelineOptions::validate` refuses any outside
/// `[0, 1]` (NaN included) before a search runs. A NaN weight given directly to
/// `Store::vector_search_centred` would make every score NaN.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Centering {
    /// `b`: how far the query is moved away from the collection's mean, in `[0, 1]`.
    pub corpus: f32,
    /// `a`: how much of each writing system's offset from the collection's mean is taken
    /// off its vectors' scores, in `[0, 1]`.
    pub writing_system: f32,
}

impl Centering {
    /// No correction: scores are cosine similarities.
    pub const NONE: Centering = Centering {
        corpus: 0.0,
        writing_system: 0.0,
    };

    /// True when both weights are zero.
    pub fn is_none(&self) -> bool {
        self.corpus == 0.0 && self.writing_system == 0.0
    }
}

/// Rounds of reassigning vectors to the nearest group mean ([`CorpusStatistics::new`]).
const REFINE_ROUNDS: usize = 5;

/// What centring needs to know of the collection: its mean, each language group's offset
/// from it, and every vector's group and similarity to the mean.
#[derive(Debug, Default)]
pub(crate) struct CorpusStatistics {
    dims: usize,
    /// `μ`, `dims` values (all zeros for an empty collection).
    mean: Vec<f32>,
    /// Per group, `dims` values of `μ_w − μ`; group 0 (zeros) is the collection itself,
    /// every vector's group when the collection has fewer than two language groups.
    offsets: Vec<f32>,
    /// Per vector (in the copy's order), its group.
    group: Vec<u16>,
    /// Per vector, `v · μ`.
    hub: Vec<f32>,
    /// The group of each vector key (`vector_keys.id`).
    group_of_id: HashMap<i64, u16>,
}

impl CorpusStatistics {
    /// Statistics of `unit` (`ids.len() × dims` values, row `i` the unit vector of key
    /// `ids[i]`, whose text has the writing systems `profiles[i]`).
    ///
    /// Language groups: every writing system (not `Common`: a text without letters is in
    /// no language) that is the main one of at least [`MIN_GROUP_VECTORS`] vectors seeds
    /// one; with fewer than two such, there are none (the `a` term is zero). Then, for up
    /// to [`REFINE_ROUNDS`] rounds, each vector joins the nearest group mean (Euclidean)
    /// among the groups of writing systems its text has a letter of, and the means are
    /// taken again; a group left with fewer than [`MIN_GROUP_VECTORS`] vectors is
    /// dropped. The main writing system of a text is not always where the model put it:
    /// a Chinese page of shell examples counts more Latin letters than Han ones, and with
    /// the English correction it would rise above every page of its own language. A
    /// text with no letter of a group's writing system never joins that group, so the
    /// groups stay languages (an English chunk cannot drift into the group of a few
    /// Japanese pages, as a free k-means lets topics do).
    pub(crate) fn new(
        unit: &[f32],
        dims: usize,
        ids: &[i64],
        profiles: &[ScriptProfile],
    ) -> CorpusStatistics {
        debug_assert_eq!(ids.len(), profiles.len());
        let n = ids.len();
        if dims == 0 || n == 0 {
            return CorpusStatistics {
                dims,
                mean: vec![0.0; dims],
                offsets: vec![0.0; dims],
                ..Default::default()
            };
        }
        let rows: Vec<&[f32]> = unit.chunks_exact(dims).collect();
        // Sums in f64: 10⁵ vectors of unit length lose nothing that matters.
        let mean64 = mean_of(&rows, (0..n).collect::<Vec<_>>().as_slice(), dims);
        let mean: Vec<f32> = mean64.iter().map(|&m| m as f32).collect();

        // Seeds: the main writing systems of enough vectors, in the order first met.
        let common = WritingSystem::Script(Script::Common);
        let mut seeds: Vec<WritingSystem> = tally(profiles.iter().map(|p| p.main))
            .iter()
            .filter(|(main, count)| *main != common && *count >= MIN_GROUP_VECTORS)
            .map(|(s, _)| *s)
            .collect();
        let mut assignment: Vec<Option<usize>> = profiles
            .iter()
            .map(|p| seeds.iter().position(|seed| *seed == p.main))
            .collect();
        let mut means = group_means(&rows, &assignment, seeds.len(), dims);
        if seeds.len() >= 2 {
            for _ in 0..REFINE_ROUNDS {
                let next = nearest_means(&rows, &means, &candidates(profiles, &seeds));
                let changed = next != assignment;
                assignment = next;
                means = group_means(&rows, &assignment, means.len(), dims);
                // Drop groups that became too small; their vectors go elsewhere next round.
                let counts = counts_of(&assignment, means.len());
                if counts.iter().any(|&c| c < MIN_GROUP_VECTORS) {
                    let kept: Vec<usize> = (0..means.len())
                        .filter(|&g| counts[g] >= MIN_GROUP_VECTORS)
                        .collect();
                    means = kept.iter().map(|&g| means[g].clone()).collect();
                    seeds = kept.iter().map(|&g| seeds[g]).collect();
                    assignment = nearest_means(&rows, &means, &candidates(profiles, &seeds));
                    means = group_means(&rows, &assignment, means.len(), dims);
                    if means.len() < 2 {
                        break;
                    }
                    continue;
                }
                if !changed {
                    break;
                }
            }
        }
        let grouped = means.len() >= 2;
        let mut offsets = vec![0f32; dims];
        if grouped {
            for m in &means {
                offsets.extend(m.iter().zip(&mean64).map(|(g, t)| (g - t) as f32));
            }
        }
        let group: Vec<u16> = assignment
            .iter()
            .map(|a| match a {
                Some(g) if grouped => u16::try_from(g + 1).unwrap_or(0),
                _ => 0,
            })
            .collect();
        let hub = rows
            .iter()
            .map(|row| super::scan::dot(row, &mean))
            .collect();
        let group_of_id = ids.iter().copied().zip(group.iter().copied()).collect();
        CorpusStatistics {
            dims,
            mean,
            offsets,
            group,
            hub,
            group_of_id,
        }
    }

    /// `μ`, the mean of the collection's unit vectors.
    pub(crate) fn mean(&self) -> &[f32] {
        &self.mean
    }

    /// `q · (μ_w − μ)` for each group, for a unit query `q` (index by group).
    pub(crate) fn offset_terms(&self, q: &[f32]) -> Vec<f32> {
        if self.dims == 0 {
            return vec![0.0];
        }
        self.offsets
            .chunks_exact(self.dims)
            .map(|offset| super::scan::dot(q, offset))
            .collect()
    }

    /// The score of the copy's vector `i` whose cosine with the query is `cosine`;
    /// `terms` is [`CorpusStatistics::offset_terms`] of the query.
    pub(crate) fn score(&self, i: usize, cosine: f32, terms: &[f32], centering: Centering) -> f32 {
        let group = usize::from(self.group.get(i).copied().unwrap_or(0));
        cosine
            - centering.writing_system * terms.get(group).copied().unwrap_or(0.0)
            - centering.corpus * self.hub.get(i).copied().unwrap_or(0.0)
    }

    /// The group of the vector with key `id` (`None` for a key the copy does not hold).
    pub(crate) fn group_of(&self, id: i64) -> Option<u16> {
        self.group_of_id.get(&id).copied()
    }
}

/// The mean of the rows `members` of `rows`, in `f64` (zeros for no members).
fn mean_of(rows: &[&[f32]], members: &[usize], dims: usize) -> Vec<f64> {
    let mut sum = vec![0f64; dims];
    for &i in members {
        for (s, &x) in sum.iter_mut().zip(rows[i]) {
            *s += f64::from(x);
        }
    }
    if !members.is_empty() {
        sum.iter_mut().for_each(|s| *s /= members.len() as f64);
    }
    sum
}

/// The mean of each of `groups` groups of `rows` under `assignment`.
fn group_means(
    rows: &[&[f32]],
    assignment: &[Option<usize>],
    groups: usize,
    dims: usize,
) -> Vec<Vec<f64>> {
    (0..groups)
        .map(|g| {
            let members: Vec<usize> = assignment
                .iter()
                .enumerate()
                .filter(|(_, a)| **a == Some(g))
                .map(|(i, _)| i)
                .collect();
            mean_of(rows, &members, dims)
        })
        .collect()
}

/// How many vectors each of `groups` groups holds under `assignment`.
fn counts_of(assignment: &[Option<usize>], groups: usize) -> Vec<usize> {
    let mut counts = vec![0; groups];
    for g in assignment.iter().flatten() {
        counts[*g] += 1;
    }
    counts
}

/// For each profile, the groups (indices into `seeds`) whose writing system its text has
/// a letter of.
fn candidates(profiles: &[ScriptProfile], seeds: &[WritingSystem]) -> Vec<Vec<usize>> {
    profiles
        .iter()
        .map(|p| {
            (0..seeds.len())
                .filter(|&g| p.present.contains(&seeds[g]))
                .collect()
        })
        .collect()
}

/// For each row, the index of the nearest of `means` among its `candidates` (Euclidean:
/// the largest `2 v·m − |m|²`; the first of equals); `None` when it has no candidate.
/// A row with one candidate takes it without a distance.
fn nearest_means(
    rows: &[&[f32]],
    means: &[Vec<f64>],
    candidates: &[Vec<usize>],
) -> Vec<Option<usize>> {
    let norms: Vec<f64> = means
        .iter()
        .map(|m| m.iter().map(|y| y * y).sum())
        .collect();
    rows.iter()
        .zip(candidates)
        .map(|(row, groups)| {
            if groups.len() <= 1 {
                return groups.first().copied();
            }
            let mut best: Option<(usize, f64)> = None;
            for &g in groups {
                let dot: f64 = row
                    .iter()
                    .zip(&means[g])
                    .map(|(&x, &y)| f64::from(x) * y)
                    .sum();
                let closeness = 2.0 * dot - norms[g];
                if best.is_none_or(|(_, b)| closeness > b) {
                    best = Some((g, closeness));
                }
            }
            best.map(|(g, _)| g)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use unicode_script::Script;

    use super::*;

    const LATIN: WritingSystem = WritingSystem::Script(Script::Latin);

    /// The profile of a text written in `main` with letters of `present`.
    fn profile(main: WritingSystem, present: &[WritingSystem]) -> ScriptProfile {
        ScriptProfile {
            main,
            present: present.to_vec(),
        }
    }

    /// Profiles of texts each with letters of its main writing system only.
    fn plain(systems: &[WritingSystem]) -> Vec<ScriptProfile> {
        systems.iter().map(|s| profile(*s, &[*s])).collect()
    }

    /// `count` copies of the unit vector `v` (2 dimensions).
    fn rows(v: [f32; 2], count: usize) -> Vec<f32> {
        v.iter().copied().cycle().take(2 * count).collect()
    }

    #[test]
    fn means_offsets_and_scores_by_hand() {
        // 20 Japanese vectors (1, 0) and 20 Latin ones (0, 1): μ = (0.5, 0.5),
        // μ_ja − μ = (0.5, −0.5), μ_latin − μ = (−0.5, 0.5); every v · μ = 0.5.
        let mut unit = rows([1.0, 0.0], 20);
        unit.extend(rows([0.0, 1.0], 20));
        let ids: Vec<i64> = (1..=40).collect();
        let mut systems = vec![WritingSystem::Japanese; 20];
        systems.extend([LATIN; 20]);
        let stats = CorpusStatistics::new(&unit, 2, &ids, &plain(&systems));
        assert_eq!(stats.mean(), &[0.5, 0.5]);
        assert_eq!(stats.offsets, vec![0.0, 0.0, 0.5, -0.5, -0.5, 0.5]);
        assert_eq!(stats.group_of(1), Some(1));
        assert_eq!(stats.group_of(40), Some(2));
        assert_eq!(stats.group_of(99), None);
        // A Latin-looking query q = (0.6, 0.8): terms are q · offset per group.
        let terms = stats.offset_terms(&[0.6, 0.8]);
        assert_eq!(terms.len(), 3);
        assert!((terms[1] - -0.1).abs() < 1e-6 && (terms[2] - 0.1).abs() < 1e-6);
        // Cosines 0.6 (Japanese vector 0) and 0.8 (Latin vector 20): without centring the
        // Latin one wins; with a = 1 the offsets (−0.1, +0.1) bring them to 0.7 and 0.7,
        // and b = 0.5 takes 0.25 off both.
        let full = Centering {
            corpus: 0.5,
            writing_system: 1.0,
        };
        assert_eq!(stats.score(0, 0.6, &terms, Centering::NONE), 0.6);
        assert!((stats.score(0, 0.6, &terms, full) - 0.45).abs() < 1e-6);
        assert!((stats.score(20, 0.8, &terms, full) - 0.45).abs() < 1e-6);
    }

    #[test]
    fn with_one_writing_system_large_enough_there_are_no_language_groups() {
        // 30 Latin vectors and 19 Cyrillic ones (one short of MIN_GROUP_VECTORS): one
        // seed, so no language term; every vector is group 0.
        let mut unit = rows([0.0, 1.0], 30);
        unit.extend(rows([1.0, 0.0], 19));
        let ids: Vec<i64> = (0..49).collect();
        let mut systems = vec![LATIN; 30];
        systems.extend([WritingSystem::Script(Script::Cyrillic); 19]);
        let stats = CorpusStatistics::new(&unit, 2, &ids, &plain(&systems));
        assert_eq!(stats.offsets, vec![0.0, 0.0]);
        assert_eq!(stats.group_of(0), Some(0));
        assert_eq!(stats.group_of(48), Some(0));
        let terms = stats.offset_terms(&[1.0, 0.0]);
        let full = Centering {
            corpus: 0.0,
            writing_system: 1.0,
        };
        assert_eq!(stats.score(30, 0.9, &terms, full), 0.9);
    }

    #[test]
    fn vectors_join_the_nearest_group_of_a_writing_system_their_text_has() {
        // Seeds: 20 Chinese (Han) vectors near (1, 0), 20 Latin near (0, 1). Two vectors
        // near (1, 0) whose texts have more Latin letters than Han ones (a Chinese page
        // of shell examples) join the Chinese group; one near (1, 0) with Latin letters
        // only stays Latin (an English text cannot join a language it has no letter
        // of); five Cyrillic ones, too few to seed a group, join none.
        let han = WritingSystem::Script(Script::Han);
        let cyrillic = WritingSystem::Script(Script::Cyrillic);
        let mut unit = rows([1.0, 0.0], 20);
        unit.extend(rows([0.0, 1.0], 20));
        unit.extend(rows([0.8, 0.6], 2));
        unit.extend(rows([0.8, 0.6], 1));
        unit.extend(rows([0.28, 0.96], 5));
        let ids: Vec<i64> = (0..48).collect();
        let mut profiles = vec![profile(han, &[han]); 20];
        profiles.extend(vec![profile(LATIN, &[LATIN]); 20]);
        profiles.extend(vec![profile(LATIN, &[LATIN, han]); 2]);
        profiles.push(profile(LATIN, &[LATIN]));
        profiles.extend(vec![profile(cyrillic, &[cyrillic]); 5]);
        let stats = CorpusStatistics::new(&unit, 2, &ids, &profiles);
        assert_eq!(stats.group_of(0), Some(1));
        assert_eq!(stats.group_of(20), Some(2));
        assert_eq!(
            stats.group_of(40),
            Some(1),
            "Latin-majority text with Han, near Han"
        );
        assert_eq!(stats.group_of(41), Some(1));
        assert_eq!(stats.group_of(42), Some(2), "Latin only: never Han");
        assert_eq!(stats.group_of(43), Some(0), "Cyrillic: no group");
        // The means are those of the final groups: Chinese (20·(1,0) + 2·(0.8,0.6))/22,
        // Latin (20·(0,1) + (0.8,0.6))/21; μ over all 48.
        let zh = &stats.offsets[2..4];
        let latin = &stats.offsets[4..6];
        let mean = [
            (20.0 + 3.0 * 0.8 + 5.0 * 0.28) / 48.0,
            (20.0 + 3.0 * 0.6 + 5.0 * 0.96) / 48.0,
        ];
        assert!((zh[0] - (21.6 / 22.0 - mean[0]) as f32).abs() < 1e-6);
        assert!((zh[1] - (1.2 / 22.0 - mean[1]) as f32).abs() < 1e-6);
        assert!((latin[0] - (0.8 / 21.0 - mean[0]) as f32).abs() < 1e-6);
        assert!((latin[1] - (20.6 / 21.0 - mean[1]) as f32).abs() < 1e-6);
    }

    #[test]
    fn text_without_letters_seeds_no_group() {
        // 25 letterless vectors (`Common`), 25 Latin: one seed, so no language groups.
        let common = WritingSystem::Script(Script::Common);
        let mut unit = rows([1.0, 0.0], 25);
        unit.extend(rows([0.0, 1.0], 25));
        let ids: Vec<i64> = (0..50).collect();
        let mut profiles = vec![profile(common, &[]); 25];
        profiles.extend(vec![profile(LATIN, &[LATIN]); 25]);
        let stats = CorpusStatistics::new(&unit, 2, &ids, &profiles);
        assert_eq!(stats.offsets, vec![0.0, 0.0]);
        assert_eq!(stats.group_of(0), Some(0));
        assert_eq!(stats.group_of(49), Some(0));
    }

    #[test]
    fn an_empty_collection_scores_the_cosine() {
        let stats = CorpusStatistics::new(&[], 3, &[], &[]);
        assert_eq!(stats.mean(), &[0.0, 0.0, 0.0]);
        let terms = stats.offset_terms(&[1.0, 0.0, 0.0]);
        assert_eq!(terms, vec![0.0]);
        let full = Centering {
            corpus: 1.0,
            writing_system: 1.0,
        };
        assert_eq!(stats.score(0, 0.5, &terms, full), 0.5);
    }
}
