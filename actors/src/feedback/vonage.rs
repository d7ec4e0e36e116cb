//! Vonage SMS API delivery receipts, signed. With signed webhooks on for the
//! account (Vonage support turns them on), each delivery receipt carries a
//! `timestamp` (Unix seconds) and a `sig` over all of its other parameters:
//! sorted by name, each written `&name=value` (a `&` or `=` in a value
//! becomes `_`), then
//!
//! - `md5hash` (Vonage's default): the MD5 of that text followed by the
//!   signature secret, in hex;
//! - `md5`, `sha1`, `sha256`, `sha512`: the HMAC of that text keyed with the
//!   signature secret, in hex.
//!
//! The channel keeps the secret as `signature_secret` and the method chosen
//! in Vonage's dashboard as `signature_method`. (The JWT `Authorization`
//! header with a `payload_hash` is the Messages API's scheme; this provider
//! sends with the SMS API, whose receipts use `sig`.)
//!
//! The receipt comes as a form body (`POST`), a JSON object (`POST-JSON`) or,
//! when the body is empty, in the URL's query string. `messageId` is the
//! `message-id` of Vonage's send answer, stored as the delivery's message id.

use super::detail::short;
use super::{Hook, Refused, Report, ReportKind, Verified};
use crate::model::Timestamp;
use hmac::{Hmac, Mac};
use serde_json::Value;
use subtle::ConstantTimeEq;

/// The config fields of the signature.
pub const SECRET_FIELD: &str = "signature_secret";
pub const METHOD_FIELD: &str = "signature_method";
/// The methods Vonage's dashboard offers, its default first.
pub const METHODS: &[&str] = &["md5hash", "md5", "sha1", "sha256", "sha512"];

/// How far the signed `timestamp` may be from Herald's clock, either way:
/// the timestamp is signed so that a receipt cannot be replayed later.
pub const TOLERANCE_SECONDS: i64 = 600;

/// Checks a delivery receipt's signature and reads its status.
pub fn verify(config: &Value, hook: &Hook<'_>, now: Timestamp) -> Result<Verified, Refused> {
    let secret = config[SECRET_FIELD]
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Refused::new(format!("the channel has no {SECRET_FIELD}")))?;
    let method = config[METHOD_FIELD].as_str().unwrap_or(METHODS[0]);
    let params = params(hook)?;
    let sig = params
        .iter()
        .find(|(k, _)| k == "sig")
        .map(|(_, v)| v.to_ascii_lowercase())
        .ok_or_else(|| Refused::new("the receipt is not signed (no sig)"))?;
    let expected = signature(&params, secret, method)
        .ok_or_else(|| Refused::new(format!("{METHOD_FIELD}: unknown method {method}")))?;
    if !bool::from(expected.as_bytes().ct_eq(sig.as_bytes())) {
        return Err(Refused::new("the signature does not match"));
    }
    let get = |name: &str| super::param(&params, name);
    let signed_at: i64 = get("timestamp")
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| Refused::new("the receipt has no signed timestamp"))?;
    if (now.millis() / 1000 - signed_at).abs() > TOLERANCE_SECONDS {
        return Err(Refused::new(
            "the signature's timestamp is more than 10 minutes from now",
        ));
    }
    let kind = match get("status") {
        Some("delivered") => ReportKind::Delivered,
        Some("failed" | "rejected" | "expired") => ReportKind::Failed,
        // accepted, buffered (on the way), unknown: no outcome yet
        _ => return Ok(Verified::Reports(vec![])),
    };
    let Some(message_id) = get("messageId") else {
        return Ok(Verified::Reports(vec![]));
    };
    let detail = match (get("status"), get("err-code")) {
        (Some(s), Some(code)) if code != "0" => Some(short(&format!("{s}: err-code {code}"))),
        _ => None,
    };
    Ok(Verified::Reports(vec![Report {
        message_id: message_id.to_string(),
        kind,
        at: get("message-timestamp").and_then(parse_time),
        detail,
    }]))
}

/// The receipt's parameters, in the order received.
fn params(hook: &Hook<'_>) -> Result<Vec<(String, String)>, Refused> {
    let body = hook.body;
    let trimmed = body.trim_ascii_start();
    if trimmed.first() == Some(&b'{') {
        let v: serde_json::Map<String, Value> = serde_json::from_slice(body)
            .map_err(|_| Refused::new("the body is not a JSON object"))?;
        return Ok(v
            .into_iter()
            .map(|(k, v)| {
                let text = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, text)
            })
            .collect());
    }
    let form = if trimmed.is_empty() {
        hook.url.split_once('?').map_or("", |(_, q)| q).as_bytes()
    } else {
        body
    };
    Ok(url::form_urlencoded::parse(form).into_owned().collect())
}

/// Vonage's signature of `params` (without `sig`) with `method`, lower-case
/// hex; `None` for a method Vonage does not have.
fn signature(params: &[(String, String)], secret: &str, method: &str) -> Option<String> {
    let mut sorted: Vec<&(String, String)> = params.iter().filter(|(k, _)| k != "sig").collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut text = String::new();
    for (k, v) in sorted {
        text.push('&');
        text.push_str(k);
        text.push('=');
        text.push_str(&v.replace(['&', '='], "_"));
    }
    fn hmac_hex<M: Mac + hmac::digest::KeyInit>(secret: &str, text: &str) -> String {
        let mut m = <M as Mac>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
        m.update(text.as_bytes());
        hex(&m.finalize().into_bytes())
    }
    Some(match method {
        "md5hash" => {
            use md5::Digest;
            let mut h = md5::Md5::new();
            h.update(text.as_bytes());
            h.update(secret.as_bytes());
            hex(&h.finalize())
        }
        "md5" => hmac_hex::<Hmac<md5::Md5>>(secret, &text),
        "sha1" => hmac_hex::<Hmac<sha1::Sha1>>(secret, &text),
        "sha256" => hmac_hex::<Hmac<sha2::Sha256>>(secret, &text),
        "sha512" => hmac_hex::<Hmac<sha2::Sha512>>(secret, &text),
        _ => return None,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `message-timestamp`: `YYYY-MM-DD HH:MM:SS`, UTC.
fn parse_time(s: &str) -> Option<Timestamp> {
    let t = chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").ok()?;
    Some(Timestamp::from_millis(t.and_utc().timestamp_millis()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_790_000_000;
    const SECRET: &str = "s3cr3t-signature";

    fn receipt(status: &str) -> Vec<(String, String)> {
        [
            ("msisdn", "447700900000"),
            ("to", "Herald"),
            ("network-code", "23410"),
            ("messageId", "0A0000000123ABCD1"),
            ("price", "0.03330000"),
            ("status", status),
            ("scts", "2001011400"),
            ("err-code", if status == "delivered" { "0" } else { "5" }),
            ("api-key", "abcd1234"),
            ("message-timestamp", "2026-11-29 20:00:00"),
            ("client-ref", "a&b=c"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .chain([("timestamp".to_string(), NOW.to_string())])
        .collect()
    }

    fn signed(mut p: Vec<(String, String)>, method: &str) -> Vec<(String, String)> {
        let sig = signature(&p, SECRET, method).unwrap();
        p.push(("sig".into(), sig.to_ascii_uppercase()));
        p
    }

    fn form(p: &[(String, String)]) -> String {
        url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(p)
            .finish()
    }

    fn run(method: Option<&str>, url: &str, body: &[u8]) -> Result<Verified, Refused> {
        let mut config = json!({ SECRET_FIELD: SECRET });
        if let Some(m) = method {
            config[METHOD_FIELD] = json!(m);
        }
        let headers = vec![];
        let hook = Hook {
            url,
            headers: &headers,
            body,
        };
        verify(&config, &hook, Timestamp::from_millis(NOW * 1000))
    }

    const URL: &str = "https://herald.example/hooks/v1/c";

    #[test]
    fn the_md5_hash_is_over_the_sorted_parameters_then_the_secret() {
        // worked by hand: "&a=1&b=x_y" followed by the secret "k"
        let p = vec![
            ("b".to_string(), "x=y".to_string()),
            ("a".to_string(), "1".to_string()),
        ];
        use md5::Digest;
        assert_eq!(
            signature(&p, "k", "md5hash").unwrap(),
            hex(&md5::Md5::digest(b"&a=1&b=x_yk"))
        );
        let mut m = <Hmac<sha2::Sha256> as Mac>::new_from_slice(b"k").unwrap();
        m.update(b"&a=1&b=x_y");
        assert_eq!(
            signature(&p, "k", "sha256").unwrap(),
            hex(&m.finalize().into_bytes())
        );
    }

    #[test]
    fn every_method_and_form_of_receipt_is_read() {
        for method in METHODS {
            let p = signed(receipt("delivered"), method);
            let want = Ok(Verified::Reports(vec![Report {
                message_id: "0A0000000123ABCD1".into(),
                kind: ReportKind::Delivered,
                at: parse_time("2026-11-29 20:00:00"),
                detail: None,
            }]));
            // a form body
            assert_eq!(
                run(Some(method), URL, form(&p).as_bytes()),
                want,
                "{method}"
            );
            // the query string, nothing in the body
            assert_eq!(run(Some(method), &format!("{URL}?{}", form(&p)), b""), want);
            // JSON
            let obj: serde_json::Map<String, Value> =
                p.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            let body = serde_json::to_vec(&obj).unwrap();
            assert_eq!(run(Some(method), URL, &body), want);
        }
        // md5hash when no method is set
        let p = signed(receipt("delivered"), "md5hash");
        assert!(run(None, URL, form(&p).as_bytes()).is_ok());
    }

    #[test]
    fn statuses_map_to_reports() {
        for (status, kind) in [
            ("delivered", Some(ReportKind::Delivered)),
            ("failed", Some(ReportKind::Failed)),
            ("rejected", Some(ReportKind::Failed)),
            ("expired", Some(ReportKind::Failed)),
            ("accepted", None),
            ("buffered", None),
        ] {
            let p = signed(receipt(status), "sha256");
            let Ok(Verified::Reports(r)) = run(Some("sha256"), URL, form(&p).as_bytes()) else {
                panic!("{status}: refused")
            };
            assert_eq!(r.first().map(|r| r.kind), kind, "{status}");
            if status == "failed" {
                assert_eq!(r[0].detail.as_deref(), Some("failed: err-code 5"));
            }
        }
    }

    #[test]
    fn tampering_a_wrong_secret_or_method_and_a_stale_timestamp_are_refused() {
        let p = signed(receipt("failed"), "sha256");
        // a parameter changed
        let mut t = p.clone();
        t.iter_mut().find(|(k, _)| k == "status").unwrap().1 = "delivered".into();
        assert!(run(Some("sha256"), URL, form(&t).as_bytes()).is_err());
        // a parameter added
        let mut t = p.clone();
        t.push(("extra".into(), "1".into()));
        assert!(run(Some("sha256"), URL, form(&t).as_bytes()).is_err());
        // another method than the one signed with
        assert!(run(Some("sha512"), URL, form(&p).as_bytes()).is_err());
        assert!(run(Some("sha3"), URL, form(&p).as_bytes()).is_err());
        // another secret
        let mut config = json!({ SECRET_FIELD: "other", METHOD_FIELD: "sha256" });
        let body = form(&p);
        let hook = Hook {
            url: URL,
            headers: &[],
            body: body.as_bytes(),
        };
        let now = Timestamp::from_millis(NOW * 1000);
        assert!(verify(&config, &hook, now).is_err());
        // no secret
        config[SECRET_FIELD] = json!("");
        assert!(verify(&config, &hook, now).is_err());
        // not signed
        let unsigned = form(&receipt("failed"));
        assert!(run(Some("sha256"), URL, unsigned.as_bytes()).is_err());
        // signed, but the timestamp is too old or too far ahead
        for t in [NOW - TOLERANCE_SECONDS - 1, NOW + TOLERANCE_SECONDS + 1] {
            let mut r = receipt("failed");
            r.iter_mut().find(|(k, _)| k == "timestamp").unwrap().1 = t.to_string();
            let p = signed(r, "sha256");
            let e = run(Some("sha256"), URL, form(&p).as_bytes()).unwrap_err();
            assert!(e.0.contains("10 minutes"), "{e:?}");
        }
        // signed, without a timestamp
        let mut r = receipt("failed");
        r.retain(|(k, _)| k != "timestamp");
        let p = signed(r, "sha256");
        assert!(run(Some("sha256"), URL, form(&p).as_bytes()).is_err());
    }
}
