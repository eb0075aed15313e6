//! JWT access tokens (RFC 9068) checked here, against the issuer's published keys: the
//! signature with the key the header's `kid` names (an asymmetric algorithm only: never
//! `none`, never a shared-secret HMAC, and the key's own `alg` when it states one), then
//! `iss`, `aud` (RFC 8707: this server's resource URI), `exp` and `nbf` with the allowed
//! clock skew. The JOSE work is the `jsonwebtoken` crate's.

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde_json::{Map, Value};

use super::Rejection;
use super::issuer::Issuer;

/// Whether `token` has a JWS compact serialization's shape: three base64url parts.
pub fn looks_like_jwt(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3
        && parts[..2].iter().all(|p| !p.is_empty())
        && parts.iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

/// The `iss` a JWT claims, read without any check: only to pick which issuer's keys
/// verify it.
///
/// Errors: [`Rejection::Invalid`] when the claims are not a JSON object, or have no
/// string `iss`.
pub fn claimed_issuer(token: &str) -> Result<String, Rejection> {
    let claims: Map<String, Value> = jsonwebtoken::dangerous::insecure_decode_claims(token)
        .map_err(|_| Rejection::Invalid("the token's claims are not a JSON object".into()))?;
    claims
        .get("iss")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Rejection::Invalid("the token's claims have no iss".into()))
}

/// A JSON object read only to refuse one whose members repeat a name (the claims' map
/// keeps the last of them, where a provider may have meant the first).
struct UniqueMembers;

impl<'de> serde::Deserialize<'de> for UniqueMembers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<UniqueMembers, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = UniqueMembers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<UniqueMembers, A::Error> {
                let mut seen = std::collections::HashSet::new();
                while let Some(name) = map.next_key::<String>()? {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    if !seen.insert(name) {
                        return Err(serde::de::Error::custom("a member is repeated"));
                    }
                }
                Ok(UniqueMembers)
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// The `alg` a token's header names, read without any check (for the message of a
/// header the JWT library refuses).
fn header_alg(token: &str) -> Option<String> {
    use base64::Engine;
    let part = token.split('.').next()?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .ok()?;
    let header: Value = serde_json::from_slice(&bytes).ok()?;
    header.get("alg")?.as_str().map(str::to_owned)
}

/// Why a JWT library error refuses a token, in words for `error_description` (never the
/// library's own text, which names its internals).
fn reason(kind: &ErrorKind, audience: &str) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidAudience => {
            format!("the token is not for this server (its aud is not {audience})")
        }
        ErrorKind::InvalidIssuer => "the token's iss is not its issuer".into(),
        ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
        ErrorKind::MissingRequiredClaim(claim) if claim == "exp" || claim == "nbf" => {
            format!("the token has no {claim} claim, or not a number of seconds")
        }
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
        ErrorKind::InvalidClaimFormat(claim) => format!("the token's {claim} claim is malformed"),
        ErrorKind::InvalidAlgorithm => "the token's alg does not match the issuer's key".into(),
        ErrorKind::Json(_) => {
            "the token's claims are not valid JSON, or repeat a claim folio checks".into()
        }
        ErrorKind::InvalidEcdsaKey | ErrorKind::InvalidEddsaKey | ErrorKind::InvalidRsaKey(_) => {
            "the issuer's key cannot verify this token".into()
        }
        _ => "the token is not a valid JWT".into(),
    }
}

/// A key id as a message shows it: escaped, at most 64 characters.
fn shown_kid(kid: &str) -> String {
    let escaped: String = kid.escape_debug().collect();
    if escaped.chars().count() > 64 {
        format!("{}…", escaped.chars().take(64).collect::<String>())
    } else {
        escaped
    }
}

/// The claims of `token` when `issuer` signed it for `audience` and it is in date, with
/// `leeway` seconds of clock skew.
///
/// Errors: [`Rejection::Invalid`] for a token that fails a check (with why),
/// [`Rejection::Unavailable`] when the issuer's keys cannot be had.
pub async fn verify(
    issuer: &Issuer,
    token: &str,
    audience: &str,
    leeway: u64,
) -> Result<Map<String, Value>, Rejection> {
    let header = decode_header(token).map_err(|_| {
        Rejection::Invalid(match header_alg(token) {
            Some(alg) if alg.eq_ignore_ascii_case("none") => {
                "an unsigned token (alg none) is never accepted".into()
            }
            Some(alg) if SUPPORTED_ALGS.contains(&alg.as_str()) => {
                "the token's header is malformed (a member of the wrong type, or repeated)".into()
            }
            Some(alg) => format!(
                "the token's alg {} is not one folio verifies ({})",
                shown_kid(&alg),
                SUPPORTED_ALGS.join(", ")
            ),
            None => "the token's header is not a JWS header".into(),
        })
    })?;
    if matches!(
        header.alg,
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
    ) {
        return Err(Rejection::Invalid(format!(
            "alg {:?} is a shared-secret algorithm; only the issuer's public keys verify access tokens",
            header.alg
        )));
    }
    let jwk = issuer
        .key(header.kid.as_deref())
        .await
        .map_err(Rejection::Unavailable)?
        .ok_or_else(|| {
            Rejection::Invalid(match &header.kid {
                Some(kid) => format!(
                    "the issuer publishes no signing key with kid \"{}\"",
                    shown_kid(kid)
                ),
                None => "the token names no key (kid) and the issuer has several".into(),
            })
        })?;
    if let Some(stated) = jwk.common.key_algorithm
        && stated.to_string() != format!("{:?}", header.alg)
    {
        return Err(Rejection::Invalid(format!(
            "the token's alg {:?} is not its key's ({stated})",
            header.alg
        )));
    }
    let key = DecodingKey::from_jwk(&jwk).map_err(|e| {
        Rejection::Invalid(format!("the issuer's key cannot verify: {:?}", e.kind()))
    })?;
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[&issuer.id]);
    validation.set_audience(&[audience]);
    validation.set_required_spec_claims(&["exp", "iss", "aud"]);
    validation.validate_nbf = true;
    validation.leeway = leeway;
    let claims = decode::<Map<String, Value>>(token, &key, &validation)
        .map(|data| data.claims)
        .map_err(|e| Rejection::Invalid(reason(e.kind(), audience)))?;
    jsonwebtoken::dangerous::insecure_decode_claims::<UniqueMembers>(token)
        .map_err(|_| Rejection::Invalid("the token repeats a claim".into()))?;
    Ok(claims)
}

/// The algorithms folio verifies access tokens with: the issuers' public-key ones.
pub const SUPPORTED_ALGS: [&str; 9] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_compact_jws_shapes_are_taken_for_jwts() {
        assert!(looks_like_jwt("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln"));
        assert!(!looks_like_jwt("folio_abc"));
        assert!(!looks_like_jwt("a.b"));
        assert!(!looks_like_jwt("a.b.c.d.e"), "a JWE has five parts");
        assert!(!looks_like_jwt(".b.c"));
        assert!(!looks_like_jwt("a+/.b.c"), "base64url, not base64");
        assert!(
            looks_like_jwt("a.b."),
            "an unsecured JWT's empty signature is refused later, with why"
        );
    }

    #[test]
    fn the_claimed_issuer_is_read_without_a_check() {
        // {"alg":"none"} . {"iss":"https://id.example.com","sub":"a"} .
        let token = "eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2lkLmV4YW1wbGUuY29tIiwic3ViIjoiYSJ9.";
        assert_eq!(
            claimed_issuer(token),
            Ok("https://id.example.com".to_owned())
        );
        assert_eq!(
            claimed_issuer("a.b.c"),
            Err(Rejection::Invalid(
                "the token's claims are not a JSON object".into()
            ))
        );
    }
}
