//! Bearer tokens of `folio mcp --http`: a TOML file outside every knowledge base
//! (`$XDG_CONFIG_HOME/folio/tokens.toml` by default, beside the user's `config.toml`).
//!
//! Each entry holds the SHA-256 of a token, never the token: `folio token add` shows the
//! token once. A token is 32 random bytes from the operating system, so a plain hash is
//! enough (a slow password hash such as Argon2 guards guessable secrets; these are not).
//! Looking a token up by its hash leaks nothing useful through timing: an attacker learns
//! at most bytes of a hash whose preimage is 256 random bits.
//!
//! No protocol here: the MCP adapter checks the `Authorization` header against
//! [`TokenFile::verify`]; the CLI adds, lists and revokes.

use std::path::{Path, PathBuf};

use crate::serde_wording::{Format, plain};
use base64::Engine;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The file's name in the user's configuration folder.
pub const TOKENS_FILE: &str = "tokens.toml";

/// Prefix of every token, so a leaked one is recognisable in logs and secret scanners.
pub const TOKEN_PREFIX: &str = "folio_";

/// What a token may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Every reading tool, prompt and resource; writing tools answer `PERMISSION_DENIED`.
    Read,
    /// Reading tools and the KnowledgePulse writing tools (contributing and validating),
    /// not the tools that edit, move or delete files: the scope to give other folio
    /// instances and agents on a KnowledgePulse registry, so that a contributor cannot
    /// change or delete another agent's items.
    Contribute,
    /// Reading and writing tools (when the server allows writes at all).
    ReadWrite,
}

impl Scope {
    /// The scope as written in the file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Contribute => "contribute",
            Scope::ReadWrite => "read-write",
        }
    }

    /// Whether this scope allows the KnowledgePulse writing tools (contributing and
    /// validating).
    pub fn allows_contributions(self) -> bool {
        self != Scope::Read
    }

    /// Whether this scope allows the tools that edit, move or delete files.
    pub fn allows_file_writes(self) -> bool {
        self == Scope::ReadWrite
    }
}

impl std::str::FromStr for Scope {
    type Err = String;

    fn from_str(s: &str) -> Result<Scope, String> {
        match s {
            "read" => Ok(Scope::Read),
            "contribute" => Ok(Scope::Contribute),
            "read-write" => Ok(Scope::ReadWrite),
            _ => Err(format!(
                "`{s}` is not a scope (read, contribute or read-write)"
            )),
        }
    }
}

/// One token, as kept in the file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    /// A short public name of the token (the first 12 hex digits of its hash), for
    /// `folio token list` and `revoke`.
    pub id: String,
    /// The agent the token belongs to (the `agent_id` of its contributions).
    pub agent: String,
    /// What the token may do.
    pub scope: Scope,
    /// `sha256:` and the hex SHA-256 of the token.
    pub hash: String,
    /// When it was made (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub created: String,
    /// When it was revoked, if it was; a revoked token is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<String>,
}

/// The file's shape.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    #[serde(default, rename = "token")]
    tokens: Vec<TokenEntry>,
}

/// The token file, loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenFile {
    path: PathBuf,
    /// The tokens, revoked ones included, in the order they were made.
    pub tokens: Vec<TokenEntry>,
}

/// `sha256:<hex>` of a token.
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// Checks an agent id: 1–64 characters of `A-Z a-z 0-9 . _ - @`.
pub fn check_agent_id(agent: &str) -> Result<(), String> {
    let ok = !agent.is_empty()
        && agent.len() <= 64
        && agent
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{agent}` is not an agent id: use 1 to 64 letters, digits, `.`, `_`, `-` or `@`"
        ))
    }
}

impl TokenFile {
    /// The default location: `tokens.toml` in the folder of the user's `config.toml`.
    pub fn default_path() -> Option<PathBuf> {
        super::user::UserConfig::path().and_then(|p| p.parent().map(|dir| dir.join(TOKENS_FILE)))
    }

    /// Reads the file; a missing file holds no tokens.
    ///
    /// Errors: unreadable, not a token file, or a token whose agent id
    /// [`check_agent_id`] refuses (an entry edited by hand: an id such as
    /// `alice@https://…` would pass for an OAuth caller's), each message naming the file.
    pub fn load(path: &Path) -> Result<TokenFile, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let shape: FileShape = toml::from_str(&text).map_err(|e| {
            format!(
                "invalid {}: {}",
                path.display(),
                plain(&e.to_string(), Format::Toml)
            )
        })?;
        for token in &shape.tokens {
            check_agent_id(&token.agent).map_err(|e| format!("invalid {}: {e}", path.display()))?;
        }
        Ok(TokenFile {
            path: path.to_path_buf(),
            tokens: shape.tokens,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes a token for `agent` with `scope` at time `now` (seconds since the Unix
    /// epoch) and returns it; only its hash is kept. Call [`TokenFile::save`] after.
    ///
    /// Errors: a bad agent id, or no randomness from the operating system.
    pub fn add(&mut self, agent: &str, scope: Scope, now: u64) -> Result<String, String> {
        check_agent_id(agent)?;
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes from the OS: {e}"))?;
        let token = format!(
            "{TOKEN_PREFIX}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
        );
        let hash = hash_token(&token);
        self.tokens.push(TokenEntry {
            id: hash["sha256:".len().."sha256:".len() + 12].to_string(),
            agent: agent.to_string(),
            scope,
            hash,
            created: utc_timestamp(now),
            revoked: None,
        });
        Ok(token)
    }

    /// Revokes the token with id `which`, or every active token of the agent `which`;
    /// returns the ids revoked.
    ///
    /// Errors: nothing active matches.
    pub fn revoke(&mut self, which: &str, now: u64) -> Result<Vec<String>, String> {
        let by_id = self.tokens.iter().any(|t| t.id == which);
        let mut ids = Vec::new();
        for t in &mut self.tokens {
            let hit = if by_id {
                t.id == which
            } else {
                t.agent == which
            };
            if hit && t.revoked.is_none() {
                t.revoked = Some(utc_timestamp(now));
                ids.push(t.id.clone());
            }
        }
        if ids.is_empty() {
            return Err(format!(
                "no active token has the id or agent `{which}` (see `folio token list`)"
            ));
        }
        Ok(ids)
    }

    /// The active (not revoked) entry whose hash is the token's, if any.
    pub fn verify(&self, token: &str) -> Option<&TokenEntry> {
        let hash = hash_token(token);
        self.tokens
            .iter()
            .find(|t| t.revoked.is_none() && t.hash == hash)
    }

    /// Writes the file atomically (a temporary file beside it, then a rename), readable
    /// and writable by the user only; creates its folder if needed.
    ///
    /// Errors: the folder or file cannot be written.
    pub fn save(&self) -> Result<(), String> {
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let text = toml::to_string(&FileShape {
            tokens: self.tokens.clone(),
        })
        .map_err(|e| format!("cannot encode the token file: {e}"))?;
        let header = "# folio bearer tokens (`folio token add|list|revoke`): hashes only, never the tokens.\n\n";
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| format!("cannot write in {}: {e}", dir.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(|e| format!("cannot restrict {}: {e}", self.path.display()))?;
        }
        use std::io::Write;
        tmp.write_all(header.as_bytes())
            .and_then(|()| tmp.write_all(text.as_bytes()))
            .and_then(|()| tmp.as_file().sync_all())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        tmp.persist(&self.path)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        Ok(())
    }
}

/// Refuses a token file inside the knowledge base root (a workspace file could be
/// committed, synced or read by the agents the tokens guard).
///
/// Errors: the file (or the folder it would be in) is under `root`.
pub fn check_outside_root(tokens: &Path, root: &Path) -> Result<(), String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    // The file may not exist yet: canonicalize the nearest existing ancestor.
    let mut probe = tokens.to_path_buf();
    let mut rest = Vec::new();
    let base = loop {
        if let Ok(c) = probe.canonicalize() {
            break c;
        }
        match (probe.file_name().map(|n| n.to_os_string()), probe.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                probe = parent.to_path_buf();
            }
            _ => break probe.clone(),
        }
    };
    let full = rest.iter().rev().fold(base, |p, n| p.join(n));
    if full.starts_with(&root) {
        return Err(format!(
            "the token file {} is inside the knowledge base {}; keep it outside (the default is {})",
            tokens.display(),
            root.display(),
            TokenFile::default_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "~/.config/folio/tokens.toml".into())
        ));
    }
    Ok(())
}

/// Seconds since the Unix epoch now.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of seconds since the Unix epoch (proleptic Gregorian, UTC).
pub fn utc_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_796_083_199), "2026-11-30T23:59:59Z");
    }

    #[test]
    fn add_keeps_only_the_hash_verify_finds_it_and_revoke_stops_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cfg").join(TOKENS_FILE);
        let mut file = TokenFile::load(&path).unwrap();
        assert!(file.tokens.is_empty());
        let token = file.add("alice", Scope::Read, 0).unwrap();
        assert!(token.starts_with("folio_"));
        assert_eq!(token.len(), "folio_".len() + 43);
        let writer = file.add("bob", Scope::ReadWrite, 60).unwrap();
        file.save().unwrap();

        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&token) && !text.contains(&writer));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }

        let file = TokenFile::load(&path).unwrap();
        let alice = file.verify(&token).unwrap();
        assert_eq!(
            (alice.agent.as_str(), alice.scope, alice.created.as_str()),
            ("alice", Scope::Read, "1970-01-01T00:00:00Z")
        );
        assert_eq!(alice.hash, hash_token(&token));
        assert_eq!(alice.id, alice.hash[7..19]);
        assert_eq!(file.verify(&writer).unwrap().scope, Scope::ReadWrite);
        assert_eq!(file.verify("folio_wrong"), None);

        let mut file = file;
        let id = file.tokens[0].id.clone();
        assert_eq!(file.revoke(&id, 120).unwrap(), vec![id.clone()]);
        assert_eq!(file.verify(&token), None);
        assert!(file.verify(&writer).is_some());
        assert_eq!(
            file.revoke(&id, 180).unwrap_err(),
            format!("no active token has the id or agent `{id}` (see `folio token list`)")
        );
        // By agent: every active token of it.
        let bob_id = file.tokens[1].id.clone();
        assert_eq!(file.revoke("bob", 240).unwrap(), vec![bob_id]);
        assert_eq!(file.verify(&writer), None);
        assert_eq!(
            file.tokens[0].revoked.as_deref(),
            Some("1970-01-01T00:02:00Z")
        );
    }

    #[test]
    fn bad_agent_ids_and_scopes_are_refused() {
        let mut file = TokenFile::load(Path::new("/nonexistent/tokens.toml")).unwrap();
        assert_eq!(
            file.add("a b", Scope::Read, 0).unwrap_err(),
            "`a b` is not an agent id: use 1 to 64 letters, digits, `.`, `_`, `-` or `@`"
        );
        assert!(file.add("", Scope::Read, 0).is_err());
        // An entry edited by hand is held to the same rule when the file is read.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let mut edited = TokenFile::load(&path).unwrap();
        edited.add("alice", Scope::Read, 0).unwrap();
        edited.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(
            &path,
            text.replace("\"alice\"", "\"alice@http://127.0.0.1:9\""),
        )
        .unwrap();
        assert_eq!(
            TokenFile::load(&path).unwrap_err(),
            format!(
                "invalid {}: `alice@http://127.0.0.1:9` is not an agent id: use 1 to 64 letters, digits, `.`, `_`, `-` or `@`",
                path.display()
            )
        );
        assert_eq!(
            "write".parse::<Scope>().unwrap_err(),
            "`write` is not a scope (read, contribute or read-write)"
        );
        assert_eq!("read-write".parse::<Scope>(), Ok(Scope::ReadWrite));
        assert_eq!("contribute".parse::<Scope>(), Ok(Scope::Contribute));
        assert!(
            Scope::Contribute.allows_contributions() && !Scope::Contribute.allows_file_writes()
        );
        assert!(!Scope::Read.allows_contributions() && !Scope::Read.allows_file_writes());
        assert!(Scope::ReadWrite.allows_contributions() && Scope::ReadWrite.allows_file_writes());
    }

    #[test]
    fn a_token_file_inside_the_root_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("kb");
        std::fs::create_dir(&root).unwrap();
        assert!(check_outside_root(&root.join("sub/tokens.toml"), &root).is_err());
        assert!(check_outside_root(&root.join(".folio/tokens.toml"), &root).is_err());
        assert_eq!(
            check_outside_root(&dir.path().join("tokens.toml"), &root),
            Ok(())
        );
    }
}
