//! The certificates Amazon SNS signs its messages with: which URLs one may
//! be fetched from (an SNS host over HTTPS, or the one host the operator
//! trusts for tests), fetching it through the egress guard, and a bounded
//! cache by URL (SNS names each certificate by a URL of its own, so a URL's
//! certificate does not change; every message of a topic names the same
//! one).

use super::super::Refused;
use crate::egress::{self, EgressPolicy};
use crate::model::Timestamp;
use rsa::pkcs8::DecodePublicKey;
use rsa::RsaPublicKey;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use x509_cert::der::{DecodePem, Encode};
use x509_cert::Certificate;

/// Certificates kept (one per SNS region and key in use: a handful).
const CACHE_SIZE: usize = 32;
/// Largest certificate read (SNS's are about 2 KiB of PEM).
const MAX_CERT_BYTES: usize = 64 * 1024;
/// Timeout of one certificate fetch.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// A signing certificate as the verifier needs it: its RSA key and the
/// period it is valid in (Unix seconds).
#[derive(Debug, Clone)]
pub struct SigningCert {
    pub(super) key: RsaPublicKey,
    not_before: i64,
    not_after: i64,
}

impl SigningCert {
    /// A PEM X.509 certificate with an RSA key.
    pub fn from_pem(pem: &[u8]) -> Result<Self, String> {
        let cert = Certificate::from_pem(pem).map_err(|_| "not a PEM X.509 certificate")?;
        let tbs = &cert.tbs_certificate;
        let spki = tbs
            .subject_public_key_info
            .to_der()
            .map_err(|_| "its public key does not encode")?;
        let key = RsaPublicKey::from_public_key_der(&spki)
            .map_err(|_| "its public key is not an RSA key")?;
        let secs = |t: x509_cert::time::Time| t.to_unix_duration().as_secs() as i64;
        Ok(SigningCert {
            key,
            not_before: secs(tbs.validity.not_before),
            not_after: secs(tbs.validity.not_after),
        })
    }

    /// Whether `now` is within its validity period.
    pub fn valid_at(&self, now: Timestamp) -> bool {
        let s = now.millis() / 1000;
        self.not_before <= s && s <= self.not_after
    }
}

/// Amazon SNS's hosts: `sns.<region>.amazonaws.com`, and
/// `sns.<region>.amazonaws.com.cn` in China.
pub fn is_sns_host(host: &str) -> bool {
    let h = host.to_ascii_lowercase();
    h.strip_suffix(".amazonaws.com")
        .or_else(|| h.strip_suffix(".amazonaws.com.cn"))
        .and_then(|r| r.strip_prefix("sns."))
        .is_some_and(|region| {
            !region.is_empty()
                && region
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

/// A URL of an SNS message (its `SigningCertURL`, its `SubscribeURL`) when
/// Herald may call it: https to an SNS host, or http(s) to exactly the
/// trusted host. `what` names the field in the refusal.
pub fn allowed_url(raw: &str, trusted: Option<&str>, what: &str) -> Result<url::Url, Refused> {
    let url = url::Url::parse(raw).map_err(|_| Refused::new(format!("{what} is not a URL")))?;
    let host = url.host_str().unwrap_or_default();
    let trusted = trusted.is_some_and(|t| t.eq_ignore_ascii_case(host))
        && matches!(url.scheme(), "http" | "https");
    let sns = url.scheme() == "https" && is_sns_host(host);
    if !(trusted || sns) || !url.username().is_empty() || url.password().is_some() {
        return Err(Refused::new(format!(
            "{what} is not an https URL of an Amazon SNS host"
        )));
    }
    Ok(url)
}

/// Fetches and caches SNS signing certificates. One per engine, shared by
/// every `ses` channel.
pub struct SnsCerts {
    http: reqwest::Client,
    policy: Arc<EgressPolicy>,
    trusted_host: Option<String>,
    cache: Mutex<VecDeque<(String, Arc<SigningCert>)>>,
}

impl SnsCerts {
    /// `http` must come from [`egress::client_builder`] with `policy` (the
    /// guarded resolver, no redirects): the engine's shared client.
    /// `trusted_host`: the operator's `--sns-trusted-cert-host`, a host
    /// (name or IP address, no port) whose certificates are trusted like
    /// SNS's, over http too: for tests only, never in production.
    pub fn new(
        http: reqwest::Client, policy: Arc<EgressPolicy>, trusted_host: Option<String>,
    ) -> Self {
        SnsCerts {
            http,
            policy,
            trusted_host: trusted_host.filter(|h| !h.trim().is_empty()),
            cache: Mutex::new(VecDeque::new()),
        }
    }

    pub fn trusted_host(&self) -> Option<&str> {
        self.trusted_host.as_deref()
    }

    /// The certificate at `url` (already judged by [`allowed_url`]), from
    /// the cache or fetched.
    pub async fn get(&self, url: &url::Url) -> Result<Arc<SigningCert>, Refused> {
        let key = url.as_str();
        if let Some(c) = self.cached(key) {
            return Ok(c);
        }
        let cert = Arc::new(self.fetch(url).await?);
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if !cache.iter().any(|(u, _)| u == key) {
            if cache.len() >= CACHE_SIZE {
                cache.pop_front();
            }
            cache.push_back((key.to_string(), cert.clone()));
        }
        Ok(cert)
    }

    fn cached(&self, url: &str) -> Option<Arc<SigningCert>> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.iter().find(|(u, _)| u == url).map(|(_, c)| c.clone())
    }

    async fn fetch(&self, url: &url::Url) -> Result<SigningCert, Refused> {
        let failed = |why: String| Refused::new(format!("the signing certificate: {why}"));
        // IP literals are judged here (the resolver judges names)
        let url = match self.policy.check_url(url.as_str()) {
            Ok(Some(u)) => u,
            Ok(None) => return Err(failed("its URL does not parse".into())),
            Err(r) => return Err(failed(r.to_string())),
        };
        let host = url.host_str().unwrap_or_default().to_string();
        let mut resp = self
            .http
            .get(url)
            .timeout(FETCH_TIMEOUT)
            .send()
            .await
            .map_err(|e| match egress::find_cause::<egress::Refused>(&e) {
                Some(r) => failed(r.to_string()),
                None => failed(format!("{host} could not be reached")),
            })?;
        if resp.status() != reqwest::StatusCode::OK {
            return Err(failed(format!(
                "{host} answered {}",
                resp.status().as_u16()
            )));
        }
        let mut pem = Vec::new();
        while let Ok(Some(chunk)) = resp.chunk().await {
            if pem.len() + chunk.len() > MAX_CERT_BYTES {
                return Err(failed("larger than 64 KiB".into()));
            }
            pem.extend_from_slice(&chunk);
        }
        SigningCert::from_pem(&pem).map_err(|e| failed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sns_hosts_over_https_or_the_trusted_host_are_allowed() {
        for ok in [
            "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-abc.pem",
            "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-abc.pem",
            "https://SNS.eu-west-1.amazonaws.com/x.pem",
        ] {
            assert!(allowed_url(ok, None, "SigningCertURL").is_ok(), "{ok}");
        }
        for bad in [
            "http://sns.us-east-1.amazonaws.com/x.pem",
            "https://sns.us-east-1.amazonaws.com.evil.example/x.pem",
            "https://evil.example/sns.us-east-1.amazonaws.com/x.pem",
            "https://sqs.us-east-1.amazonaws.com/x.pem",
            "https://sns..amazonaws.com/x.pem",
            "https://sns.amazonaws.com/x.pem",
            "https://user@sns.us-east-1.amazonaws.com/x.pem",
            "https://127.0.0.1/x.pem",
            "file:///etc/passwd",
            "not a url",
        ] {
            assert!(allowed_url(bad, None, "SigningCertURL").is_err(), "{bad}");
        }
        // the trusted host, over http too, and only that host exactly
        let t = Some("127.0.0.1");
        assert!(allowed_url("http://127.0.0.1:8080/c.pem", t, "x").is_ok());
        assert!(allowed_url("https://127.0.0.1/c.pem", t, "x").is_ok());
        assert!(allowed_url("http://127.0.0.2/c.pem", t, "x").is_err());
        assert!(allowed_url("ftp://127.0.0.1/c.pem", t, "x").is_err());
    }
}
