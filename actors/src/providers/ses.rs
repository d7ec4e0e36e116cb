//! email / `ses`: Amazon SES API v2 `SendEmail`, one JSON POST to
//! `{base_url}/v2/email/outbound-emails` (default
//! `https://email.{region}.amazonaws.com`) signed with AWS Signature Version 4
//! (service `ses`); SES answers 200 with the `MessageId`.
//!
//! The signature is computed here with `hmac` and `sha2` (already
//! dependencies) rather than with the AWS SDK: one signed POST does not
//! warrant the SDK's dependency tree and its own HTTP stack, which would also
//! bypass the egress guard of the shared client. The signer is checked against
//! AWS's published SigV4 test suite (`get-vanilla`, `post-vanilla`) below.

use super::{
    answer_json, answered, channel::Fields, classify_status, error_token, mail, transport_error,
    webhook::retry_after, Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec,
    SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// An AWS region as the provider's `validate` takes it (it names the default host).
const REGION: &str = "^[a-z0-9-]*$";
/// An SNS topic's ARN (`arn:aws:sns:eu-west-1:123456789012:ses-events`).
const TOPIC_ARN: &str = "^(?:arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256})?$";
const SERVICE: &str = "ses";
const PATH: &str = "/v2/email/outbound-emails";

pub struct Ses(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "ses",
    channel_type: ChannelType::Email,
    summary: "Amazon SES API v2 SendEmail, signed with AWS Signature Version 4: one message per delivery to the recipient's `email`.",
    example: || {
        json!({"access_key_id": "AKIAIOSFODNN7EXAMPLE",
               "secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
               "region": "eu-west-1", "from": "Herald <noreply@example.com>"})
    },
    retry: true,
    fields: &[
        ConfigField {
            name: "access_key_id",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(super::channel::ALPHANUMERIC),
            description: "Access key id of an IAM user or role allowed `ses:SendEmail`.",
        },
        ConfigField {
            name: "secret_access_key",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "Its secret access key (signs each request; never sent).",
        },
        ConfigField {
            name: "region",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(REGION),
            description: "AWS region of the SES account (`eu-west-1`): the signature's region and the default endpoint's.",
        },
        mail::FROM,
        ConfigField {
            name: "base_url",
            required: false,
            secret: false,
            format: FieldFormat::Url { default: None },
            description: "API base URL (default `https://email.{region}.amazonaws.com`; a mock, a proxy or a VPC endpoint).",
        },
        ConfigField {
            name: crate::feedback::ses::TOPIC_FIELD,
            required: false,
            secret: false,
            format: FieldFormat::Pattern(TOPIC_ARN),
            description: "The ARN of the SNS topic SES publishes this channel's events to: SNS messages at `/hooks/v1/{channel_id}` of any other topic are refused. Not needed to send.",
        },
    ],
    together: &[],
    // what the secret signs goes to `base_url` (else the region's endpoint), as
    // `access_key_id`
    destinations: &["base_url", "region", "access_key_id"],
};

/// [`TOPIC_ARN`] in code: `arn:<partition>:sns:<region>:<account>:<topic>`.
fn topic_arn_ok(arn: &str) -> bool {
    let p: Vec<&str> = arn.split(':').collect();
    let lower = |s: &str, extra: &str| {
        s.chars()
            .all(|c| c.is_ascii_lowercase() || extra.contains(c))
    };
    p.len() == 6
        && p[0] == "arn"
        && p[1].strip_prefix("aws").is_some_and(|r| lower(r, "-"))
        && p[2] == "sns"
        && !p[3].is_empty()
        && lower(p[3], "0123456789-")
        && p[4].len() == 12
        && p[4].bytes().all(|b| b.is_ascii_digit())
        && (1..=256).contains(&p[5].len())
        && p[5]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Provider for Ses {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_chars(
            "access_key_id",
            |c| c.is_ascii_alphanumeric(),
            "an access key id: letters and digits (AKIA…)",
            v,
        );
        f.want_str("secret_access_key", v);
        f.want_chars(
            "region",
            |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-',
            "an AWS region: lower-case letters, digits and hyphens (eu-west-1)",
            v,
        );
        mail::validate_from(&f, v);
        f.want_url("base_url", v);
        f.want_format(
            crate::feedback::ses::TOPIC_FIELD,
            |s| s.is_empty() || topic_arn_ok(s),
            "an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:TOPIC)",
            v,
        );
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Ses(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let to = mail::recipient(&req)?;
            let c = &req.config;
            let key_id = super::cfg_str(c, "access_key_id").unwrap_or_default();
            let secret = super::cfg_str(c, "secret_access_key").unwrap_or_default();
            let region = super::cfg_str(c, "region").unwrap_or_default();
            let from = super::cfg_str(c, "from").unwrap_or_default();
            let default = format!("https://email.{region}.amazonaws.com");
            let url = guard.url(&format!("{}{PATH}", mail::base_url(c, &default)))?;
            let p = mail::parts(&req);
            let mut simple = json!({
                "Subject": {"Data": p.subject, "Charset": "UTF-8"},
                "Body": {
                    "Text": {"Data": p.text, "Charset": "UTF-8"},
                    "Html": {"Data": p.html, "Charset": "UTF-8"},
                },
            });
            // a commercial flow's one-click unsubscribe (API v2 `Headers`)
            let headers: Vec<serde_json::Value> = mail::unsubscribe_headers(&req)
                .into_iter()
                .map(|(n, v)| json!({"Name": n, "Value": v}))
                .collect();
            if !headers.is_empty() {
                simple["Headers"] = json!(headers);
            }
            let body = serde_json::to_vec(&json!({
                "FromEmailAddress": from,
                "Destination": {"ToAddresses": [to]},
                "Content": {"Simple": simple},
                // the delivery id, for matching SES's events to the delivery
                "EmailTags": [{"Name": "delivery_id", "Value": req.delivery.id.to_string()}],
            }))
            .unwrap_or_default();
            let amz_date = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
            let content_type = "application/json";
            let signer = Signer {
                access_key_id: key_id,
                secret_access_key: secret,
                region,
                service: SERVICE,
            };
            let authorization = signer.authorization(
                "POST",
                &url,
                &[
                    ("content-type", content_type),
                    ("host", &host_header(&url)),
                    ("x-amz-date", &amz_date),
                ],
                &body,
                &amz_date,
            );
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .header("x-amz-date", &amz_date)
                .header(reqwest::header::AUTHORIZATION, authorization)
                .body(body)
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            // AWS names the error in `x-amzn-ErrorType` (`Name:uri`), else `__type`
            let header_code = resp
                .headers()
                .get("x-amzn-errortype")
                .and_then(|h| h.to_str().ok())
                .and_then(|t| t.split(':').next())
                .map(str::to_string);
            let v = answer_json(resp).await;
            if (200..300).contains(&status) {
                return mail::sent(&to, status, v["MessageId"].as_str());
            }
            let code = header_code
                .or_else(|| {
                    v["__type"]
                        .as_str()
                        .map(|t| t.rsplit('#').next().unwrap_or(t).to_string())
                })
                .filter(|c| error_token(c).is_some());
            // the message is only looked at for a refused address, never kept
            let text = v["message"]
                .as_str()
                .or(v["Message"].as_str())
                .unwrap_or_default()
                .to_ascii_lowercase();
            if status == 400
                && code.as_deref() == Some("BadRequestException")
                && text.contains("address")
            {
                return Err(mail::invalid_address(format!(
                    "{}: SES refused the address",
                    answered(status, code.as_deref())
                )));
            }
            Err(classify_status(status, code.as_deref(), ra))
        })
    }
}

/// The `Host` header the client sends for `url`: the port only when it is not
/// the scheme's default.
fn host_header(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    }
}

/// AWS Signature Version 4 of one request (header-based, `AWS4-HMAC-SHA256`).
pub(crate) struct Signer<'a> {
    pub access_key_id: &'a str,
    pub secret_access_key: &'a str,
    pub region: &'a str,
    pub service: &'a str,
}

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    m.update(data);
    m.finalize().into_bytes().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// RFC 3986 percent-encoding of everything but the unreserved characters, as
/// SigV4's canonical form wants (`/` kept in paths).
fn uri_encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) || (keep_slash && b == b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Signer<'_> {
    /// The `Authorization` header of a request to `url` with `headers` (names
    /// lower-case, every one signed, `x-amz-date` among them) and `payload`,
    /// at `amz_date` (`YYYYMMDDTHHMMSSZ`).
    pub(crate) fn authorization(
        &self, method: &str, url: &reqwest::Url, headers: &[(&str, &str)], payload: &[u8],
        amz_date: &str,
    ) -> String {
        let mut hs: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| {
                let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
                (k.to_ascii_lowercase(), v)
            })
            .collect();
        hs.sort();
        let signed_headers = hs
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(";");
        let canonical_headers: String = hs.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
        // the path as sent (already percent-encoded) encoded once more: the
        // canonical URI of every service but S3
        let path = match url.path() {
            "" => "/".to_string(),
            p => uri_encode(p, true),
        };
        let mut query: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| (uri_encode(&k, false), uri_encode(&v, false)))
            .collect();
        query.sort();
        let query = query
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        let canonical_request = format!(
            "{method}\n{path}\n{query}\n{canonical_headers}\n{signed_headers}\n{}",
            hex(&Sha256::digest(payload))
        );
        let date = &amz_date[..amz_date.len().min(8)];
        let scope = format!("{date}/{}/{}/aws4_request", self.region, self.service);
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
            hex(&Sha256::digest(canonical_request.as_bytes()))
        );
        let k_date = hmac(
            format!("AWS4{}", self.secret_access_key).as_bytes(),
            date.as_bytes(),
        );
        let k_region = hmac(&k_date, self.region.as_bytes());
        let k_service = hmac(&k_region, self.service.as_bytes());
        let k_signing = hmac(&k_service, b"aws4_request");
        let signature = hex(&hmac(&k_signing, string_to_sign.as_bytes()));
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
            self.access_key_id
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_topic_arn_pattern_is_the_check() {
        pattern_agrees::<Ses>(
            crate::feedback::ses::TOPIC_FIELD,
            &[
                ("arn:aws:sns:eu-west-1:123456789012:ses-events", true),
                ("arn:aws-cn:sns:cn-north-1:123456789012:ses_events", true),
                ("", true),
                ("arn:aws:sns:eu-west-1:12345678901:ses-events", false),
                ("arn:aws:sqs:eu-west-1:123456789012:ses-events", false),
                ("arn:aws:sns:eu-west-1:123456789012:", false),
                ("arn:aws:sns:eu-west-1:123456789012:a:b", false),
                ("arn:aws:sns::123456789012:ses-events", false),
                ("ses-events", false),
            ],
        );
    }

    /// AWS's SigV4 test suite (`aws-sig-v4-test-suite`): its credentials,
    /// region, service and date.
    fn suite_signer() -> Signer<'static> {
        Signer {
            access_key_id: "AKIDEXAMPLE",
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            region: "us-east-1",
            service: "service",
        }
    }

    fn suite_case(method: &str) -> String {
        let url = reqwest::Url::parse("https://example.amazonaws.com/").unwrap();
        suite_signer().authorization(
            method,
            &url,
            &[
                ("host", "example.amazonaws.com"),
                ("x-amz-date", "20150830T123600Z"),
            ],
            b"",
            "20150830T123600Z",
        )
    }

    #[test]
    fn the_signature_is_the_published_test_vectors() {
        // get-vanilla/get-vanilla.authz
        assert_eq!(
            suite_case("GET"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
        // post-vanilla/post-vanilla.authz
        assert_eq!(
            suite_case("POST"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
        );
    }

    #[test]
    fn the_host_header_has_the_port_only_when_not_the_default() {
        let u = |s: &str| reqwest::Url::parse(s).unwrap();
        assert_eq!(
            host_header(&u("https://email.eu-west-1.amazonaws.com/v2")),
            "email.eu-west-1.amazonaws.com"
        );
        assert_eq!(host_header(&u("http://127.0.0.1:8025/")), "127.0.0.1:8025");
    }

    #[test]
    fn the_region_and_key_id_patterns_are_the_checks() {
        pattern_agrees::<Ses>(
            "region",
            &[
                ("eu-west-1", true),
                ("", true),
                ("evil.example.com/", false),
                ("EU-WEST-1", false),
            ],
        );
        pattern_agrees::<Ses>(
            "access_key_id",
            &[("AKIAIOSFODNN7EXAMPLE", true), ("AKIA-1", false)],
        );
    }
}
