//! Quality and reputation, computed from the ledger alone (so a reindex, or a fresh
//! clone, gives the same numbers). The formulas, with `s` an item's structural
//! completeness (`skill::structure_score`, `unit::structure_score`):
//!
//! - **Reputation** of agent `a`: over the items `a` contributed, `P` and `N` count the
//!   verdicts `valid: true` and `valid: false` of other agents (each agent's latest
//!   verdict per item). `r(a) = (P + 1) / (P + N + 2)`: a Bayesian average with a prior
//!   of 0.5 worth two verdicts (Laplace's rule), so a new agent has 0.5.
//! - **Quality** of an item: each other agent `v`'s latest verdict weighs `r(v)`;
//!   `q = (K·s + Σ r(v)·[valid_v]) / (K + Σ r(v))` with `K = 2`: the structural score is
//!   the prior, worth two verdicts of weight one, and verdicts pull the score towards
//!   their weighted share of `valid: true`. A new item has `q = s`.
//!
//! Both are rounded to 4 decimals. The contributor of an item is the agent of its first
//! contribution event; its own verdicts (which the tools refuse) are ignored.

use std::collections::{BTreeMap, BTreeSet};

use super::ledger::{Event, EventKind};

/// Weight of the structural prior in [`Ledger::quality`], in verdicts.
pub const PRIOR_WEIGHT: f64 = 2.0;

/// What the ledger says of one item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemTally {
    /// The agent of the first contribution event.
    pub contributor: Option<String>,
    /// Each other agent's latest verdict.
    pub verdicts: BTreeMap<String, bool>,
}

/// The tallies of a whole ledger.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Per item id.
    pub items: BTreeMap<String, ItemTally>,
    /// Per agent, the items it contributed.
    pub contributions: BTreeMap<String, BTreeSet<String>>,
}

/// An agent's reputation.
#[derive(Clone, Debug, PartialEq)]
pub struct Reputation {
    /// `(P + 1) / (P + N + 2)`, rounded to 4 decimals.
    pub score: f64,
    /// Items contributed.
    pub contributions: usize,
    /// `P`: verdicts `valid: true` by others on its items.
    pub positive: usize,
    /// `N`: verdicts `valid: false` by others on its items.
    pub negative: usize,
}

/// `x` rounded to 4 decimals.
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

impl Ledger {
    /// Tallies events given with their file paths, in order of `time`, then path.
    pub fn from_events(mut events: Vec<(String, Event)>) -> Ledger {
        events.sort_by(|a, b| (&a.1.time, &a.0).cmp(&(&b.1.time, &b.0)));
        let mut ledger = Ledger::default();
        for (_, e) in events {
            let tally = ledger.items.entry(e.item.clone()).or_default();
            match e.event {
                EventKind::Contribution => {
                    if tally.contributor.is_none() {
                        tally.contributor = Some(e.agent.clone());
                        ledger
                            .contributions
                            .entry(e.agent.clone())
                            .or_default()
                            .insert(e.item.clone());
                    }
                }
                EventKind::Validation => {
                    if let Some(valid) = e.valid {
                        tally.verdicts.insert(e.agent.clone(), valid);
                    }
                }
            }
        }
        // Verdicts by the contributor do not count, whichever came first.
        for tally in ledger.items.values_mut() {
            if let Some(c) = &tally.contributor {
                tally.verdicts.remove(c);
            }
        }
        ledger
    }

    /// The agent who contributed `item`.
    pub fn contributor(&self, item: &str) -> Option<&str> {
        self.items.get(item)?.contributor.as_deref()
    }

    /// `r(agent)`, unrounded.
    fn raw_reputation(&self, agent: &str) -> (f64, usize, usize, usize) {
        let mut positive = 0;
        let mut negative = 0;
        let items = self.contributions.get(agent);
        for item in items.into_iter().flatten() {
            for valid in self.items[item].verdicts.values() {
                if *valid {
                    positive += 1;
                } else {
                    negative += 1;
                }
            }
        }
        let score = (positive as f64 + 1.0) / ((positive + negative) as f64 + 2.0);
        (score, items.map_or(0, BTreeSet::len), positive, negative)
    }

    /// The reputation of `agent` (0.5 and no contributions for an agent the ledger does
    /// not know).
    pub fn reputation(&self, agent: &str) -> Reputation {
        let (score, contributions, positive, negative) = self.raw_reputation(agent);
        Reputation {
            score: round4(score),
            contributions,
            positive,
            negative,
        }
    }

    /// The quality of `item` whose structural score is `structure`.
    pub fn quality(&self, item: &str, structure: f64) -> f64 {
        let mut weight = 0.0;
        let mut valid_weight = 0.0;
        for (agent, valid) in self
            .items
            .get(item)
            .map(|t| &t.verdicts)
            .into_iter()
            .flatten()
        {
            let w = self.raw_reputation(agent).0;
            weight += w;
            if *valid {
                valid_weight += w;
            }
        }
        round4((PRIOR_WEIGHT * structure + valid_weight) / (PRIOR_WEIGHT + weight))
    }
}
