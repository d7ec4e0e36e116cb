//! User tokens: RSA key pairs, signed JWTs and the malformed ones the
//! authentication tests send.

use super::*;
use std::sync::OnceLock;

use serde_json::{json, Value};

// ================================================================ JWTs

/// An RSA key pair as PEM strings.
pub struct RsaPair {
    /// PKCS#8 `PRIVATE KEY`.
    pub private_pem: String,
    /// SPKI `PUBLIC KEY`.
    pub public_pem: String,
    /// PKCS#1 `RSA PUBLIC KEY`.
    pub public_pkcs1_pem: String,
}

impl RsaPair {
    pub fn generate(bits: usize) -> RsaPair {
        use rsa::pkcs1::EncodeRsaPublicKey;
        use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
        let key = rsa::RsaPrivateKey::new(&mut rand::thread_rng(), bits).expect("rsa keygen");
        let public = key.to_public_key();
        RsaPair {
            private_pem: key.to_pkcs8_pem(LineEnding::LF).unwrap().to_string(),
            public_pem: public.to_public_key_pem(LineEnding::LF).unwrap(),
            public_pkcs1_pem: public.to_pkcs1_pem(LineEnding::LF).unwrap(),
        }
    }

    /// RS256 token with the given claims.
    pub fn sign(&self, claims: &Value) -> String {
        sign_with(&self.private_pem, jsonwebtoken::Algorithm::RS256, claims)
    }

    /// RS256 token `{sub, iat, exp: now + 300}`.
    pub fn token(&self, sub: &str) -> String {
        self.sign(&json!({"sub": sub, "iat": now_secs(), "exp": now_secs() + 300}))
    }
}

/// Two 2048-bit key pairs generated once per test binary.
pub fn key_a() -> &'static RsaPair {
    static K: OnceLock<RsaPair> = OnceLock::new();
    K.get_or_init(|| RsaPair::generate(2048))
}

pub fn key_b() -> &'static RsaPair {
    static K: OnceLock<RsaPair> = OnceLock::new();
    K.get_or_init(|| RsaPair::generate(2048))
}

/// Signs `claims` with an RSA private key PEM (PKCS#1 or PKCS#8) and `alg`.
pub fn sign_with(private_pem: &str, alg: jsonwebtoken::Algorithm, claims: &Value) -> String {
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(private_pem.as_bytes()).expect("rsa pem");
    jsonwebtoken::encode(&jsonwebtoken::Header::new(alg), claims, &key).expect("sign jwt")
}

/// HS256 token signed with `secret`.
pub fn hs256_token(claims: &Value, secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .expect("sign hs256")
}

pub fn b64url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// An unsigned token (`alg: none`, empty signature).
pub fn none_token(claims: &Value) -> String {
    format!(
        "{}.{}.",
        b64url(br#"{"alg":"none","typ":"JWT"}"#),
        b64url(claims.to_string().as_bytes())
    )
}

/// Replaces the payload of `token` by `claims`, keeping header and signature.
pub fn with_payload(token: &str, claims: &Value) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3);
    format!(
        "{}.{}.{}",
        parts[0],
        b64url(claims.to_string().as_bytes()),
        parts[2]
    )
}
