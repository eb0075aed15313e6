//! The six KnowledgePulse tools (`kp_search_skill`, `kp_search_knowledge`,
//! `kp_contribute_skill`, `kp_contribute_knowledge`, `kp_validate_unit`,
//! `kp_reputation_query`) over the model in [`crate::knowledge`].
//!
//! Skills and units are files: `org` ones in the knowledge base, found by the one search
//! contract ([`Host::search`], the hybrid pipeline), `private` ones in the user's data
//! folder for this root ([`crate::knowledge::place::private_dir`]), a small folio root
//! of its own with its own derived index, searched lexically. Scores come from the
//! ledger files of both places ([`crate::knowledge::scores`]). Writes go through the
//! root's writer (org) or the private folder's own writer (private).

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::user::UserConfig;
use crate::knowledge::ledger::{Event, EventKind, event_path, is_event_path, rfc3339};
use crate::knowledge::place::{is_skill_path, is_unit_path, skill_path, unit_path};
use crate::knowledge::scores::{Ledger, Reputation};
use crate::knowledge::skill::{Skill, contributed_id, parse_skill, with_id};
use crate::knowledge::unit::{Unit, from_value, read_file, render};
use crate::knowledge::{MAX_ITEM_BYTES, Rejection, Visibility, check_id};
use crate::path_policy::resolve_new;
use crate::workspace::{Config, scan};

use super::registry::{KnowledgeNetwork, Registry};
use super::search::{SearchHit, SearchRequest, SearchResponse};
use super::{ErrorCode, Host, HostError, HostResult, doc_uri};

/// The setting a `network` contribution needs: the registry's URL, in the user's own
/// configuration.
pub const REGISTRY_SETTING: &str = "[knowledge] registry";

/// Where a search result or a tally comes from, as this host sees it.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// This host's files: the knowledge base or the private folder.
    #[default]
    Local,
    /// The KnowledgePulse registry configured as `[knowledge] registry`.
    Registry,
}

impl From<Rejection> for HostError {
    fn from(r: Rejection) -> HostError {
        match r {
            Rejection::Invalid(m) => HostError::invalid(m),
            Rejection::BadId(m) => HostError::new(ErrorCode::InvalidPath, m),
        }
    }
}

/// A knowledge unit type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum UnitType {
    /// How a task was solved: task, steps, outcome.
    ReasoningTrace,
    /// How to call a tool: when, argument shapes, example calls, pitfalls.
    ToolCallPattern,
    /// A procedure: goal, prerequisites, steps, checks.
    ExpertSOP,
}

impl UnitType {
    fn as_str(self) -> &'static str {
        match self {
            UnitType::ReasoningTrace => "ReasoningTrace",
            UnitType::ToolCallPattern => "ToolCallPattern",
            UnitType::ExpertSOP => "ExpertSOP",
        }
    }
}

/// `kp_search_skill` arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct SearchSkillArgs {
    /// Free-text query (English, Japanese, …), searched over the skills' text with folio's hybrid search.
    pub query: String,
    /// Only skills whose frontmatter `domain` is this.
    #[serde(default)]
    pub domain: Option<String>,
    /// Only skills whose frontmatter `tags` hold at least one of these.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Lowest quality_score returned, 0–1 (default 0.7).
    #[serde(default)]
    pub min_quality: Option<f64>,
    /// Most skills returned, 1–20 (default 5).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// One skill found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SkillHit {
    /// The skill's id (frontmatter `id`, else derived from its path).
    pub id: String,
    /// Frontmatter `name`.
    pub name: String,
    /// Frontmatter `description`.
    pub description: String,
    /// Frontmatter `domain`.
    pub domain: Option<String>,
    /// Frontmatter `tags`.
    pub tags: Vec<String>,
    /// Frontmatter `version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Quality, 0–1 (docs/knowledgepulse.md has the formula).
    pub quality_score: f64,
    /// The whole SKILL.md.
    pub content: String,
    /// `org` (in the knowledge base), `private` (in the user's data folder) or `network`
    /// (from the registry).
    pub visibility: Visibility,
    /// `local` (this knowledge base or the private folder) or `registry` (the
    /// `[knowledge] registry`'s answer).
    #[serde(default)]
    pub origin: Origin,
    /// Path of the SKILL.md: KB-relative for `org`, relative to the private folder for
    /// `private`, relative to the registry's knowledge base for `network`.
    pub path: String,
    /// `kb://doc/<path>` for `org` skills.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
}

/// `kp_search_skill` output.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SearchSkillOutput {
    /// Skills, best match first (local and registry results interleaved by rank).
    pub results: Vec<SkillHit>,
    /// The search mode that ran over the knowledge base (`hybrid` or `lexical`).
    pub mode: String,
    /// True while a reindex runs: results may miss files not indexed yet.
    pub indexing: bool,
    /// Present and true when this root's first index was still being built after the
    /// search waited for it (kb_search `partial`): an empty list does not mean "none".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// With a registry configured: why its part of the search failed (`UNAVAILABLE`, or
    /// its own error); the results are then the local ones only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_error: Option<HostError>,
}

/// `kp_search_knowledge` arguments.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct SearchKnowledgeArgs {
    /// Free-text query (English, Japanese, …), searched over the units' text with folio's hybrid search.
    pub query: String,
    /// Only units of these types.
    #[serde(default)]
    pub types: Vec<UnitType>,
    /// Only units of this domain.
    #[serde(default)]
    pub domain: Option<String>,
    /// Lowest quality_score returned, 0–1 (default 0.75).
    #[serde(default)]
    pub min_quality: Option<f64>,
    /// Most units returned, 1–10 (default 5).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only units of this schema version (e.g. "1.0").
    #[serde(default)]
    pub schema_version: Option<String>,
}

/// One unit found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnitHit {
    /// The unit's id.
    pub id: String,
    /// `ReasoningTrace`, `ToolCallPattern` or `ExpertSOP`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The unit's domain.
    pub domain: String,
    /// The unit's title.
    pub title: String,
    /// The unit's schema version.
    pub schema_version: String,
    /// Quality, 0–1 (docs/knowledgepulse.md has the formula).
    pub quality_score: f64,
    /// The whole unit, as JSON.
    pub content: Value,
    /// `org`, `private` or `network` (from the registry).
    pub visibility: Visibility,
    /// `local` or `registry` (the `[knowledge] registry`'s answer).
    #[serde(default)]
    pub origin: Origin,
    /// Path of the unit's file (KB-relative for `org`; in the registry's knowledge base
    /// for `network`).
    pub path: String,
    /// `kb://doc/<path>` for `org` units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
}

/// `kp_search_knowledge` output.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SearchKnowledgeOutput {
    /// Units, best match first (local and registry results interleaved by rank).
    pub results: Vec<UnitHit>,
    /// The search mode that ran over the knowledge base (`hybrid` or `lexical`).
    pub mode: String,
    /// True while a reindex runs: results may miss files not indexed yet.
    pub indexing: bool,
    /// Present and true when this root's first index was still being built after the
    /// search waited for it (kb_search `partial`): an empty list does not mean "none".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// With a registry configured: why its part of the search failed; the results are
    /// then the local ones only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_error: Option<HostError>,
}

/// `kp_contribute_skill` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct ContributeSkillArgs {
    /// The whole SKILL.md: YAML frontmatter with `name` and `description` (required), `domain`, `tags`, `version`, `id` (optional), then the instructions. At most 256 KiB.
    pub skill_md_content: String,
    /// `private` (the user's data folder, never the knowledge base), `org` (the knowledge base, shared by git) or `network` (the shared registry of `[knowledge] registry`; NOT_CONFIGURED without one). Default `network`.
    #[serde(default)]
    pub visibility: Option<Visibility>,
}

/// `kp_contribute_skill` output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContributeSkillOutput {
    /// The skill's id (written into its frontmatter when it had none).
    pub id: String,
    /// Quality of the new skill: its structural score.
    pub quality_score: f64,
    /// Where it went.
    pub visibility: Visibility,
    /// The new file: KB-relative for `org`, relative to the private folder for `private`,
    /// relative to the registry's knowledge base for `network`.
    pub path: String,
    /// For `network` sent to a registry: its URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
}

/// `kp_contribute_knowledge` arguments.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct ContributeKnowledgeArgs {
    /// The knowledge unit, a JSON object matching schema 1.0 (docs/knowledgepulse.md): schema_version "1.0", type (ReasoningTrace | ToolCallPattern | ExpertSOP), title, summary, domain, optional id, tags, author, created, and the type's own fields.
    pub unit: serde_json::Map<String, Value>,
    /// `private` (the user's data folder), `org` (the knowledge base) or `network` (the shared registry of `[knowledge] registry`; NOT_CONFIGURED without one).
    pub visibility: Visibility,
}

/// `kp_contribute_knowledge` output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContributeKnowledgeOutput {
    /// The unit's id (assigned when the unit had none).
    pub id: String,
    /// Quality of the new unit: its structural score.
    pub quality_score: f64,
    /// Where it went.
    pub visibility: Visibility,
    /// The new file: KB-relative for `org`, relative to the private folder for `private`,
    /// relative to the registry's knowledge base for `network`.
    pub path: String,
    /// For `network` sent to a registry: its URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<String>,
}

/// `kp_validate_unit` arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct ValidateArgs {
    /// Id of the knowledge unit (or skill) judged.
    pub unit_id: String,
    /// The verdict: does the unit hold up?
    pub valid: bool,
    /// Why, in free text (optional; at most 16 KiB of UTF-8).
    #[serde(default)]
    pub feedback: Option<String>,
}

/// The most bytes of `feedback` a verdict takes: a ledger event is read up to 64 KiB
/// ([`Host::knowledge_ledger`]), so a longer one would be written and never counted.
pub const MAX_FEEDBACK_BYTES: usize = 16 * 1024;

/// `kp_validate_unit` output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ValidateOutput {
    /// Always true: the verdict is in the ledger.
    pub validated: bool,
    /// The item's quality after this verdict.
    pub quality_score: f64,
    /// `registry` when the item is the registry's and the verdict went there (recorded
    /// as the registry token's agent); absent for an item of this host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// `kp_reputation_query` arguments.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[schemars(transform = crate::host::portable_schema)]
#[serde(deny_unknown_fields)]
pub struct ReputationArgs {
    /// The agent's id (as the ledger records it: its --agent-id, else `<client name>/<client version>`).
    pub agent_id: String,
}

/// `kp_reputation_query` output.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct ReputationOutput {
    /// Reputation, 0–1: (P + 1) / (P + N + 2) over the verdicts of others on its contributions
    /// (with a registry: P and N of both ledgers added).
    pub score: f64,
    /// Skills and units the agent contributed (with a registry: here and there).
    pub contributions: usize,
    /// P: verdicts `valid: true` on its contributions.
    pub positive_verdicts: usize,
    /// N: verdicts `valid: false` on its contributions.
    pub negative_verdicts: usize,
    /// With a registry configured: this host's own ledger's tally.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local: Option<Tally>,
    /// With a registry configured: the registry's tally (absent when it failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry: Option<Tally>,
    /// With a registry configured: why asking it failed; the totals are then local only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registry_error: Option<HostError>,
}

/// One ledger's reputation tally of an agent (the fields of a `kp_reputation_query`
/// answer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Tally {
    /// (P + 1) / (P + N + 2), rounded to 4 decimals.
    pub score: f64,
    /// Skills and units the agent contributed there.
    pub contributions: usize,
    /// P.
    pub positive_verdicts: usize,
    /// N.
    pub negative_verdicts: usize,
}

/// The part of a registry's search answer a client reads.
#[derive(Deserialize)]
struct RemoteResults<T> {
    results: Vec<T>,
}

/// Runs `tool` on `registry` and reads its structured result as `T`.
///
/// Errors: the registry's (see [`super::registry::RegistryError::into_host_error`]);
/// `UNAVAILABLE` when the answer does not have `T`'s shape.
fn call_registry<T: serde::de::DeserializeOwned>(
    registry: &dyn Registry,
    tool: &str,
    arguments: &impl Serialize,
) -> HostResult<T> {
    let arguments = serde_json::to_value(arguments).map_err(HostError::internal)?;
    let value = registry
        .call(tool, arguments)
        .map_err(|e| e.into_host_error(registry.location()))?;
    serde_json::from_value(value).map_err(|e| {
        HostError::new(
            ErrorCode::Unavailable,
            format!(
                "the KnowledgePulse registry at {} answered `{tool}` with an unexpected shape ({e})",
                registry.location()
            ),
        )
    })
}

/// Where a contribution goes ([`Host::destination`]).
enum Destination<'a> {
    /// Kept in this host's place of that visibility.
    Here(Visibility),
    /// Sent to the registry this host is a client of.
    Registry(&'a dyn Registry),
}

/// A contribution's answer that a registry can give.
trait Forwarded: serde::de::DeserializeOwned {
    /// Marks the answer as the registry's at `location`: visibility `network`.
    fn kept_by(&mut self, location: &str);
}

macro_rules! forwarded {
    ($($out:ty),*) => {$(
        impl Forwarded for $out {
            fn kept_by(&mut self, location: &str) {
                self.visibility = Visibility::Network;
                self.registry = Some(location.to_string());
            }
        }
    )*};
}
forwarded!(ContributeSkillOutput, ContributeKnowledgeOutput);

/// A search hit a registry can answer with (`kp_search_skill`, `kp_search_knowledge`).
trait RegistryHit: serde::de::DeserializeOwned {
    /// The item's id.
    fn id(&self) -> &str;
    /// Whether the registry's answer is believable: `quality_score` in `[0, 1]` and a path
    /// that is plain and relative (no `..`, `.`, empty part, backslash or leading `/`).
    fn plausible(&self) -> bool;
    /// Marks the hit as the registry's: origin `registry`, visibility `network`, no
    /// `kb://` URI (it would name a local file).
    fn mark_remote(&mut self);
}

fn plausible(quality_score: f64, path: &str) -> bool {
    (0.0..=1.0).contains(&quality_score)
        && !path.starts_with('/')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != "..")
}

/// The same [`RegistryHit`] for each hit type: they share the fields it reads.
macro_rules! registry_hit {
    ($($hit:ty),*) => {$(
        impl RegistryHit for $hit {
            fn id(&self) -> &str {
                &self.id
            }
            fn plausible(&self) -> bool {
                plausible(self.quality_score, &self.path)
            }
            fn mark_remote(&mut self) {
                self.origin = Origin::Registry;
                self.visibility = Visibility::Network;
                self.uri = None;
            }
        }
    )*};
}
registry_hit!(SkillHit, UnitHit);

/// Where an item was found.
struct Found {
    visibility: Visibility,
    path: String,
    kind: &'static str,
    structure: f64,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Checks an agent id: 1–200 characters, no control characters.
fn check_agent(agent: &str) -> HostResult<()> {
    if agent.trim().is_empty() || agent.len() > 200 || agent.chars().any(char::is_control) {
        return Err(HostError::invalid(
            "the agent id must be 1-200 characters without control characters",
        ));
    }
    Ok(())
}

fn check_min_quality(value: Option<f64>, default: f64) -> HostResult<f64> {
    let q = value.unwrap_or(default);
    if !(0.0..=1.0).contains(&q) {
        return Err(HostError::invalid("`min_quality` must be between 0 and 1"));
    }
    Ok(q)
}

fn check_limit(value: Option<usize>, default: usize, max: usize) -> HostResult<usize> {
    let n = value.unwrap_or(default);
    if !(1..=max).contains(&n) {
        return Err(HostError::invalid(format!(
            "`limit` must be between 1 and {max}"
        )));
    }
    Ok(n)
}

fn network_not_configured() -> HostError {
    HostError::new(
        ErrorCode::NotConfigured,
        format!(
            "`network` visibility needs a shared registry, and none is configured (set `{REGISTRY_SETTING}` to the registry's URL in {}, with its token in `registry_token_file` or FOLIO_REGISTRY_TOKEN); nothing was written. Use `org` to share through the knowledge base or `private` to keep it to yourself",
            UserConfig::location()
        ),
    )
}

/// A skill or unit about to be contributed: its id, `skill` or `unit`, the path of its
/// file in its place, and the file's text.
struct NewItem<'a> {
    id: &'a str,
    kind: &'a str,
    path: &'a str,
    text: &'a str,
}

/// `private` from a request that is not the server user's own.
fn private_refused() -> HostError {
    HostError::new(
        ErrorCode::PermissionDenied,
        "`private` items are kept for this server's own user: over HTTP only a token of the owner (`[mcp.http] private_owner`) may contribute them; use `org` to share through the knowledge base. Nothing was written",
    )
}

/// Whether a request may see and fill this host's private folder, which holds its user's
/// own skills and units. The front end decides: folio's MCP server grants it over stdio
/// (the user's own agent) and, over HTTP, only to a token whose agent is the configured
/// owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrivateAccess {
    /// The server's own user: private items are searched, found, judged and written.
    Owner,
    /// Anyone else: private items do not exist for the request (not found, not counted),
    /// and contributing one is `PERMISSION_DENIED`.
    Others,
}

/// `private` sent to a registry, whose private folder no caller may fill or read.
fn private_on_registry() -> HostError {
    HostError::invalid(
        "this server is a KnowledgePulse registry (`[knowledge] serve_registry`): it keeps `network` and `org` items for every agent, and no one's `private` ones; keep private items on your own folio instance. Nothing was written",
    )
}

/// The paths of hits, each once, in rank order.
fn unique_paths(hits: &[SearchHit]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    hits.iter()
        .filter(|h| seen.insert(h.path.clone()))
        .map(|h| h.path.clone())
        .collect()
}

/// Interleaves two ranked lists: first of `a`, first of `b`, second of `a`, …
fn interleave<T>(a: Vec<T>, b: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut a = a.into_iter();
    let mut b = b.into_iter();
    loop {
        match (a.next(), b.next()) {
            (None, None) => return out,
            (x, y) => out.extend(x.into_iter().chain(y)),
        }
    }
}

impl Host {
    /// The private folder of this root (see [`crate::knowledge::place::private_dir`]).
    pub fn private_dir(&self) -> &Path {
        &self.private_dir
    }

    /// The same host keeping its private items in `dir` (tests, and a user setting
    /// later).
    pub fn with_private_dir(mut self, dir: std::path::PathBuf) -> Host {
        self.private_writer = crate::write::Writer::with_state_dir(&dir, &dir.join(".folio"));
        self.private_dir = dir;
        self
    }

    /// The same host with `network` as what `visibility: network` means (a registry
    /// client is injected by the front end that speaks its protocol).
    pub fn with_knowledge_network(mut self, network: KnowledgeNetwork) -> Host {
        self.network = network;
        self
    }

    /// True when this host is a KnowledgePulse registry (`[knowledge] serve_registry`).
    pub fn serves_registry(&self) -> bool {
        matches!(self.network, KnowledgeNetwork::Serve)
    }

    /// `local` results of search `tool` with the registry's merged in (when this host is
    /// a registry client): interleaved by rank, cut at `limit`; a registry hit is dropped
    /// when its id is among the local ones or already given, or its answer is not
    /// [`RegistryHit::plausible`]. A failing registry leaves the local results and its
    /// error.
    fn merge_registry<T: RegistryHit>(
        &self,
        tool: &str,
        args: &impl Serialize,
        local: Vec<T>,
        limit: usize,
    ) -> (Vec<T>, Option<HostError>) {
        let Some(registry) = self.registry() else {
            return (local, None);
        };
        match call_registry::<RemoteResults<T>>(registry, tool, args) {
            Ok(remote) => {
                let mut seen: std::collections::HashSet<String> =
                    local.iter().map(|h| h.id().to_string()).collect();
                let remote: Vec<T> = remote
                    .results
                    .into_iter()
                    .filter(|h| h.plausible() && seen.insert(h.id().to_string()))
                    .map(|mut h| {
                        h.mark_remote();
                        h
                    })
                    .collect();
                let mut merged = interleave(local, remote);
                merged.truncate(limit);
                (merged, None)
            }
            Err(e) => (local, Some(e)),
        }
    }

    /// The registry this host is a client of, if any.
    fn registry(&self) -> Option<&dyn Registry> {
        match &self.network {
            KnowledgeNetwork::Client(r) => Some(r.as_ref()),
            _ => None,
        }
    }

    /// The root of a place.
    fn place_root(&self, visibility: Visibility) -> &Path {
        match visibility {
            Visibility::Private => &self.private_dir,
            _ => &self.root,
        }
    }

    /// Reads a file of a place as text (at most the index's file size cap).
    fn read_place(&self, visibility: Visibility, path: &str) -> HostResult<String> {
        let bytes = crate::workspace::beneath::read(
            self.place_root(visibility),
            path,
            self.config.index.max_file_size,
        )
        .map_err(|e| HostError::new(ErrorCode::NotFound, format!("`{path}`: {e}")))?;
        String::from_utf8(bytes).map_err(|_| {
            HostError::new(
                ErrorCode::UnsupportedFormat,
                format!("`{path}` is not UTF-8"),
            )
        })
    }

    /// The places that exist for a request with `access`, org first.
    ///
    /// A registry ([`KnowledgeNetwork::Serve`]) answers other agents, so it never reads
    /// its user's private folder: its searches, verdicts and scores see its knowledge
    /// base only. Nor does a request of [`PrivateAccess::Others`].
    fn places(&self, access: PrivateAccess) -> Vec<Visibility> {
        let mut out = vec![Visibility::Org];
        if access == PrivateAccess::Owner
            && self.private_dir.is_dir()
            && !matches!(self.network, KnowledgeNetwork::Serve)
        {
            out.push(Visibility::Private);
        }
        out
    }

    /// Markdown and other files of a place.
    fn scan_place(&self, visibility: Visibility) -> HostResult<crate::workspace::Scan> {
        let root = self.place_root(visibility);
        let config = match visibility {
            Visibility::Private => Config::default(),
            _ => self.config.clone(),
        };
        scan(root, &config).map_err(HostError::internal)
    }

    /// The tallies of the ledgers of the places `access` sees.
    pub fn knowledge_ledger(&self, access: PrivateAccess) -> HostResult<Ledger> {
        let mut events = Vec::new();
        for place in self.places(access) {
            let scanned = self.scan_place(place)?;
            for path in scanned.other.iter().filter(|p| is_event_path(p)) {
                let Ok(bytes) =
                    crate::workspace::beneath::read(self.place_root(place), path, 64 * 1024)
                else {
                    tracing::warn!(path, "ledger event unreadable; skipped");
                    continue;
                };
                match Event::from_bytes(&bytes) {
                    Ok(e) => events.push((format!("{place:?}/{path}"), e)),
                    Err(err) => tracing::warn!(path, %err, "ledger event skipped"),
                }
            }
        }
        Ok(Ledger::from_events(events))
    }

    /// Finds the skill or unit with this id in the places `access` sees.
    fn find_item(&self, id: &str, access: PrivateAccess) -> HostResult<Option<Found>> {
        if check_id(id).is_ok() {
            for place in self.places(access) {
                let path = unit_path(id);
                if let Ok(text) = self.read_place(place, &path)
                    && let Ok(unit) = read_file(&text)
                    && unit.id == id
                {
                    return Ok(Some(Found {
                        visibility: place,
                        path,
                        kind: "unit",
                        structure: unit.structure,
                    }));
                }
            }
        }
        for place in self.places(access) {
            let scanned = self.scan_place(place)?;
            for path in scanned.markdown.iter().filter(|p| is_skill_path(p)) {
                if let Ok(text) = self.read_place(place, path)
                    && let Ok(skill) = parse_skill(&text)
                    && skill.id_at(path) == id
                {
                    return Ok(Some(Found {
                        visibility: place,
                        path: path.clone(),
                        kind: "skill",
                        structure: skill.structure,
                    }));
                }
            }
        }
        Ok(None)
    }

    /// Runs `request` over the places `access` sees: the knowledge base through
    /// [`Host::search`], the private folder (reindexed incrementally first) lexically.
    /// Returns the mode over the knowledge base and the matching files, as (place, path),
    /// interleaved by rank.
    fn search_places(
        &self,
        request: SearchRequest,
        access: PrivateAccess,
    ) -> HostResult<(SearchResponse, Vec<(Visibility, String)>)> {
        let org = self.search(&request)?;
        let mut private = Vec::new();
        if self.places(access).contains(&Visibility::Private) {
            let db = self.private_dir.join(".folio").join("index.db");
            crate::index::index_root(&self.private_dir, &Config::default(), &db, false, None)
                .map_err(HostError::internal)?;
            let lexical = SearchRequest {
                mode: Some("lexical".into()),
                ..request
            };
            let (query, options) = lexical.plan(&crate::config::SearchConfig::default())?;
            let store = crate::store::Store::open(&db).map_err(HostError::internal)?;
            let res = crate::search::semantic::search(&store, None, None, &query, &options)
                .map_err(super::search::search_error)?;
            let res = SearchResponse::from_pipeline(&self.private_dir, res, false, false);
            private = unique_paths(&res.results);
        }
        let files = interleave(
            unique_paths(&org.results)
                .into_iter()
                .map(|p| (Visibility::Org, p))
                .collect(),
            private
                .into_iter()
                .map(|p| (Visibility::Private, p))
                .collect(),
        );
        Ok((org, files))
    }

    /// `kp_search_skill` for a request with `access`.
    pub fn kp_search_skill(
        &self,
        args: &SearchSkillArgs,
        access: PrivateAccess,
    ) -> HostResult<SearchSkillOutput> {
        let min_quality = check_min_quality(args.min_quality, 0.7)?;
        let limit = check_limit(args.limit, 5, 20)?;
        let mut fields = BTreeMap::new();
        if let Some(d) = &args.domain {
            fields.insert("domain".to_string(), vec![d.clone()]);
        }
        let request = SearchRequest {
            query: args.query.clone(),
            limit: Some(super::search::MAX_LIMIT),
            path_globs: vec!["**/SKILL.md".into()],
            tags_any: args.tags.clone(),
            fields,
            ..SearchRequest::default()
        };
        let (org, files) = self.search_places(request, access)?;
        let ledger = self.knowledge_ledger(access)?;
        let mut results = Vec::new();
        for (place, path) in files {
            if results.len() == limit {
                break;
            }
            let Ok(text) = self.read_place(place, &path) else {
                continue;
            };
            let Ok(skill) = parse_skill(&text) else {
                continue;
            };
            let id = skill.id_at(&path);
            let quality_score = ledger.quality(&id, skill.structure);
            if quality_score < min_quality {
                continue;
            }
            results.push(skill_hit(skill, id, quality_score, text, place, path));
        }
        let (results, registry_error) =
            self.merge_registry("kp_search_skill", args, results, limit);
        Ok(SearchSkillOutput {
            results,
            mode: org.mode,
            indexing: org.indexing,
            partial: org.partial,
            registry_error,
        })
    }

    /// `kp_search_knowledge` for a request with `access`.
    pub fn kp_search_knowledge(
        &self,
        args: &SearchKnowledgeArgs,
        access: PrivateAccess,
    ) -> HostResult<SearchKnowledgeOutput> {
        let min_quality = check_min_quality(args.min_quality, 0.75)?;
        let limit = check_limit(args.limit, 5, 10)?;
        let mut fields = BTreeMap::new();
        if !args.types.is_empty() {
            fields.insert(
                "type".to_string(),
                args.types.iter().map(|t| t.as_str().to_string()).collect(),
            );
        }
        if let Some(d) = &args.domain {
            fields.insert("domain".to_string(), vec![d.clone()]);
        }
        if let Some(v) = &args.schema_version {
            fields.insert("schema_version".to_string(), vec![v.clone()]);
        }
        let request = SearchRequest {
            query: args.query.clone(),
            limit: Some(super::search::MAX_LIMIT),
            path_globs: vec![format!("{}/*.md", crate::knowledge::place::UNITS_DIR)],
            fields,
            ..SearchRequest::default()
        };
        let (org, files) = self.search_places(request, access)?;
        let ledger = self.knowledge_ledger(access)?;
        let mut results = Vec::new();
        for (place, path) in files {
            if results.len() == limit {
                break;
            }
            if !is_unit_path(&path) {
                continue;
            }
            let Ok(unit) = self
                .read_place(place, &path)
                .and_then(|t| Ok(read_file(&t)?))
            else {
                continue;
            };
            let quality_score = ledger.quality(&unit.id, unit.structure);
            if quality_score < min_quality {
                continue;
            }
            results.push(unit_hit(unit, quality_score, place, path));
        }
        let (results, registry_error) =
            self.merge_registry("kp_search_knowledge", args, results, limit);
        Ok(SearchKnowledgeOutput {
            results,
            mode: org.mode,
            indexing: org.indexing,
            partial: org.partial,
            registry_error,
        })
    }

    /// `kp_contribute_skill` by `agent`, with `access`.
    pub fn kp_contribute_skill(
        &self,
        agent: &str,
        args: &ContributeSkillArgs,
        access: PrivateAccess,
    ) -> HostResult<ContributeSkillOutput> {
        self.require_writes()?;
        check_agent(agent)?;
        let skill = parse_skill(&args.skill_md_content)?;
        let visibility = args.visibility.unwrap_or(Visibility::Network);
        // The id and the text as they will be kept, here or on a registry: the checks
        // below hold for a network contribution too, before anything leaves the machine.
        let id = skill
            .id
            .clone()
            .unwrap_or_else(|| contributed_id(&skill.name, &skill.description));
        let text = if skill.id.is_some() {
            args.skill_md_content.clone()
        } else {
            with_id(&args.skill_md_content, &id)
        };
        if text.len() > MAX_ITEM_BYTES {
            return Err(HostError::invalid(format!(
                "the SKILL.md with its id is {} bytes; at most {MAX_ITEM_BYTES} (256 KiB) are allowed",
                text.len()
            )));
        }
        let place = match self.destination(visibility, access)? {
            Destination::Here(place) => place,
            Destination::Registry(registry) => {
                return self.forward(
                    registry,
                    &id,
                    access,
                    "kp_contribute_skill",
                    serde_json::json!({
                        "skill_md_content": args.skill_md_content,
                        "visibility": Visibility::Network,
                    }),
                );
            }
        };
        let path = skill_path(&skill.name, &id);
        let item = NewItem {
            id: &id,
            kind: "skill",
            path: &path,
            text: &text,
        };
        self.contribute(agent, access, place, item)?;
        Ok(ContributeSkillOutput {
            id,
            quality_score: skill.structure,
            visibility,
            path,
            registry: None,
        })
    }

    /// `kp_contribute_knowledge` by `agent`, with `access`.
    pub fn kp_contribute_knowledge(
        &self,
        agent: &str,
        args: &ContributeKnowledgeArgs,
        access: PrivateAccess,
    ) -> HostResult<ContributeKnowledgeOutput> {
        self.require_writes()?;
        check_agent(agent)?;
        let mut value = Value::Object(args.unit.clone());
        crate::knowledge::unit::check(&value)?;
        if value.get("id").is_none() {
            let id = crate::knowledge::unit::contributed_id(&value);
            value["id"] = Value::String(id);
        }
        let place = match self.destination(args.visibility, access)? {
            Destination::Here(place) => place,
            Destination::Registry(registry) => {
                let id = value.get("id").and_then(Value::as_str).unwrap_or_default();
                return self.forward(
                    registry,
                    id,
                    access,
                    "kp_contribute_knowledge",
                    serde_json::json!({"unit": args.unit, "visibility": Visibility::Network}),
                );
            }
        };
        let unit = from_value(value)?;
        let text = render(&unit);
        let path = unit_path(&unit.id);
        let item = NewItem {
            id: &unit.id,
            kind: "unit",
            path: &path,
            text: &text,
        };
        self.contribute(agent, access, place, item)?;
        Ok(ContributeKnowledgeOutput {
            id: unit.id,
            quality_score: unit.structure,
            visibility: args.visibility,
            path,
            registry: None,
        })
    }

    /// Where a contribution of `visibility` goes: a registry elsewhere gets the call; a
    /// registry here keeps `network` items in its knowledge base, as `org` ones.
    ///
    /// Errors: `NOT_CONFIGURED` for `network` without a registry; `INVALID_ARGUMENT` for
    /// `private` on a registry; `PERMISSION_DENIED` for `private` without
    /// [`PrivateAccess::Owner`].
    fn destination(
        &self,
        visibility: Visibility,
        access: PrivateAccess,
    ) -> HostResult<Destination<'_>> {
        if visibility == Visibility::Private
            && access == PrivateAccess::Others
            && !matches!(self.network, KnowledgeNetwork::Serve)
        {
            return Err(private_refused());
        }
        match (visibility, &self.network) {
            (Visibility::Network, KnowledgeNetwork::None) => Err(network_not_configured()),
            (Visibility::Network, KnowledgeNetwork::Client(registry)) => {
                Ok(Destination::Registry(registry.as_ref()))
            }
            (Visibility::Network, KnowledgeNetwork::Serve) => {
                Ok(Destination::Here(Visibility::Org))
            }
            (Visibility::Private, KnowledgeNetwork::Serve) => Err(private_on_registry()),
            (v, _) => Ok(Destination::Here(v)),
        }
    }

    /// Sends a contribution checked here (its item `id`) to `registry` as `tool` with
    /// `arguments`, and marks the answer as kept there.
    ///
    /// Errors: `ALREADY_EXISTS` when this knowledge base holds `id` (nothing sent); the
    /// registry's.
    fn forward<T: Forwarded>(
        &self,
        registry: &dyn Registry,
        id: &str,
        access: PrivateAccess,
        tool: &str,
        arguments: Value,
    ) -> HostResult<T> {
        self.refuse_local_duplicate(id, access)?;
        let mut out: T = call_registry(registry, tool, &arguments)?;
        out.kept_by(registry.location());
        tracing::info!(
            id,
            registry = registry.location(),
            "contributed to the registry"
        );
        Ok(out)
    }

    /// `ALREADY_EXISTS` when this knowledge base (or the private folder) holds an item
    /// with `id`: a network contribution of it would be hidden behind the local one in
    /// every search and verdict here.
    fn refuse_local_duplicate(&self, id: &str, access: PrivateAccess) -> HostResult<()> {
        if self.find_item(id, access)?.is_some() {
            return Err(HostError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "a skill or unit with id `{id}` already exists in this knowledge base; contribute it to the registry under another id (nothing was sent)"
                ),
            ));
        }
        Ok(())
    }

    /// Writes a new item file and its contribution event in `visibility`'s place.
    ///
    /// Errors: `ALREADY_EXISTS` when an item with this id, or a file at `path`, exists
    /// (in a place `access` sees); path policy errors; write errors. Nothing is left
    /// written on failure.
    fn contribute(
        &self,
        agent: &str,
        access: PrivateAccess,
        visibility: Visibility,
        item: NewItem<'_>,
    ) -> HostResult<()> {
        let NewItem {
            id,
            kind,
            path,
            text,
        } = item;
        let root = self.place_root(visibility).to_path_buf();
        let writer = match visibility {
            Visibility::Private => {
                // Owner-only (`0700`), as folio's state folders: private items are the user's.
                crate::workspace::prepare_state_dir(&root).map_err(HostError::internal)?;
                &self.private_writer
            }
            _ => &self.writer,
        };
        let guard = writer.lock()?;
        if self.find_item(id, access)?.is_some() {
            return Err(HostError::new(
                ErrorCode::AlreadyExists,
                format!("a skill or unit with id `{id}` already exists; nothing was written"),
            ));
        }
        resolve_new(&root, path)?;
        let time_ms = now_ms();
        let event = Event {
            event: EventKind::Contribution,
            item: id.to_string(),
            item_kind: kind.to_string(),
            agent: agent.to_string(),
            valid: None,
            feedback: None,
            time: rfc3339(time_ms),
        };
        let bytes = event.to_bytes();
        let event_file = event_path(&event, time_ms, &bytes);
        resolve_new(&root, &event_file)?;
        guard.create(path, text.as_bytes())?;
        if let Err(e) = guard.create(&event_file, &bytes) {
            let _ = guard.remove(path, text.as_bytes());
            return Err(e.into());
        }
        tracing::info!(id, path, ?visibility, "contributed");
        if visibility == Visibility::Org {
            self.sync_document(path, Some(text));
        }
        drop(guard);
        Ok(())
    }

    /// `kp_validate_unit` by `agent`, with `access`.
    pub fn kp_validate_unit(
        &self,
        agent: &str,
        args: &ValidateArgs,
        access: PrivateAccess,
    ) -> HostResult<ValidateOutput> {
        self.require_writes()?;
        check_agent(agent)?;
        if let Some(feedback) = &args.feedback
            && feedback.len() > MAX_FEEDBACK_BYTES
        {
            return Err(HostError::invalid(format!(
                "`feedback` is {} bytes; a verdict takes at most {MAX_FEEDBACK_BYTES}",
                feedback.len()
            )));
        }
        let Some(found) = self.find_item(&args.unit_id, access)? else {
            if let Some(registry) = self.registry() {
                // Not here: the registry's item, judged there as its token's agent.
                let mut out: ValidateOutput = call_registry(registry, "kp_validate_unit", args)?;
                if !out.validated || !(0.0..=1.0).contains(&out.quality_score) {
                    return Err(HostError::new(
                        ErrorCode::Unavailable,
                        format!(
                            "the KnowledgePulse registry at {} answered kp_validate_unit with validated {} and quality_score {}; the verdict's outcome is unknown",
                            registry.location(),
                            out.validated,
                            out.quality_score
                        ),
                    ));
                }
                out.origin = Some(Origin::Registry);
                tracing::info!(id = %args.unit_id, registry = registry.location(), valid = args.valid, "verdict sent to the registry");
                return Ok(out);
            }
            return Err(HostError::new(
                ErrorCode::NotFound,
                format!("no knowledge unit or skill has id `{}`", args.unit_id),
            ));
        };
        let ledger = self.knowledge_ledger(access)?;
        if ledger.contributor(&args.unit_id) == Some(agent) {
            return Err(HostError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "`{agent}` contributed `{}` and cannot validate its own unit",
                    args.unit_id
                ),
            ));
        }
        let time_ms = now_ms();
        let event = Event {
            event: EventKind::Validation,
            item: args.unit_id.clone(),
            item_kind: found.kind.to_string(),
            agent: agent.to_string(),
            valid: Some(args.valid),
            feedback: args.feedback.clone().filter(|f| !f.trim().is_empty()),
            time: rfc3339(time_ms),
        };
        let bytes = event.to_bytes();
        let event_file = event_path(&event, time_ms, &bytes);
        let root = self.place_root(found.visibility).to_path_buf();
        let writer = match found.visibility {
            Visibility::Private => &self.private_writer,
            _ => &self.writer,
        };
        {
            let guard = writer.lock()?;
            resolve_new(&root, &event_file)?;
            guard.create(&event_file, &bytes)?;
        }
        tracing::info!(id = %args.unit_id, path = %found.path, valid = args.valid, "validated");
        let ledger = self.knowledge_ledger(access)?;
        Ok(ValidateOutput {
            validated: true,
            quality_score: ledger.quality(&args.unit_id, found.structure),
            origin: None,
        })
    }

    /// `kp_reputation_query` for a request with `access` (verdicts kept in the private
    /// folder count for the owner only).
    pub fn kp_reputation(
        &self,
        args: &ReputationArgs,
        access: PrivateAccess,
    ) -> HostResult<ReputationOutput> {
        check_agent(&args.agent_id)?;
        let Reputation {
            score,
            contributions,
            positive,
            negative,
        } = self.knowledge_ledger(access)?.reputation(&args.agent_id);
        let local = Tally {
            score,
            contributions,
            positive_verdicts: positive,
            negative_verdicts: negative,
        };
        let Some(registry) = self.registry() else {
            return Ok(ReputationOutput {
                score,
                contributions,
                positive_verdicts: positive,
                negative_verdicts: negative,
                local: None,
                registry: None,
                registry_error: None,
            });
        };
        match call_registry::<Tally>(registry, "kp_reputation_query", args) {
            Ok(remote) => {
                let p = positive + remote.positive_verdicts;
                let n = negative + remote.negative_verdicts;
                Ok(ReputationOutput {
                    score: crate::knowledge::scores::round4(
                        (p as f64 + 1.0) / ((p + n) as f64 + 2.0),
                    ),
                    contributions: contributions + remote.contributions,
                    positive_verdicts: p,
                    negative_verdicts: n,
                    local: Some(local),
                    registry: Some(remote),
                    registry_error: None,
                })
            }
            Err(e) => Ok(ReputationOutput {
                score,
                contributions,
                positive_verdicts: positive,
                negative_verdicts: negative,
                local: Some(local),
                registry: None,
                registry_error: Some(e),
            }),
        }
    }
}

fn skill_hit(
    skill: Skill,
    id: String,
    quality_score: f64,
    content: String,
    place: Visibility,
    path: String,
) -> SkillHit {
    SkillHit {
        id,
        name: skill.name,
        description: skill.description,
        domain: skill.domain,
        tags: skill.tags,
        version: skill.version,
        quality_score,
        content,
        visibility: place,
        origin: Origin::Local,
        uri: (place == Visibility::Org).then(|| doc_uri(&path)),
        path,
    }
}

fn unit_hit(unit: Unit, quality_score: f64, place: Visibility, path: String) -> UnitHit {
    UnitHit {
        id: unit.id,
        kind: unit.kind,
        domain: unit.domain,
        title: unit.title,
        schema_version: unit.schema_version,
        quality_score,
        content: unit.value,
        visibility: place,
        origin: Origin::Local,
        uri: (place == Visibility::Org).then(|| doc_uri(&path)),
        path,
    }
}
