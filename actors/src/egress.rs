//! The egress guard: which destinations Herald may send to.
//!
//! Every outbound request (webhook, Slack, Twilio, FCM and its token endpoint,
//! APNs, SMTP, web push) goes through it, so that a tenant's channel config or an
//! end user's push endpoint cannot make Herald talk to loopback, the private
//! network, link-local cloud metadata services and the like (SSRF). It is
//! enforced twice:
//!
//! - at configuration / subscription time, on the literal host of a URL (and a few
//!   well-known names), so a bad destination is a 422 the caller sees at once;
//! - at send time, on the address actually connected to: the HTTP clients resolve
//!   through [`GuardedResolver`] (so a name that resolves, or later re-resolves, to
//!   a refused address never connects: DNS rebinding does not pass), IP-literal
//!   URLs are checked before the request (reqwest does not call the resolver for
//!   those), and SMTP connects to an address this module resolved and checked.
//!
//! The HTTP clients follow no redirects (see [`client_builder`]): a redirect would
//! be a second destination chosen by the answering server.
//!
//! Operators open ranges with `--egress-allow CIDR,…` or everything with
//! `--allow-private-destinations`.

use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// What the operator allows beyond public unicast addresses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    /// Everything passes (`--allow-private-destinations`): the guard is off.
    pub allow_private: bool,
    /// Ranges that pass although they are not public (`--egress-allow`).
    pub allow: Vec<IpNet>,
}

/// A destination the policy refuses, and why (a message without path or query:
/// URLs may carry secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub host: String,
    pub ip: IpAddr,
    pub kind: &'static str,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        if host.parse::<IpAddr>().ok() == Some(self.ip) {
            write!(f, "{} is a {} address", self.host, self.kind)?;
        } else {
            write!(
                f,
                "{} resolves to {}, a {} address",
                self.host, self.ip, self.kind
            )?;
        }
        write!(
            f,
            "; the egress policy does not allow it (--egress-allow opens a range)"
        )
    }
}

impl std::error::Error for Refused {}

/// A name that did not resolve (so transport errors can say so plainly).
#[derive(Debug)]
pub struct LookupFailed {
    pub host: String,
    pub cause: String,
}

impl std::fmt::Display for LookupFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DNS lookup failed for {}: {}", self.host, self.cause)
    }
}

impl std::error::Error for LookupFailed {}

/// Names refused by name, with the address they stand for (a name is judged as
/// that address, so an operator who allows it allows the name too). They are the
/// loopback names and the cloud metadata services' names; other names are
/// judged on what they resolve to, at send time.
fn well_known_name(host: &str) -> Option<IpAddr> {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let metadata = IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254));
    if h == "localhost" || h.ends_with(".localhost") || h == "localhost.localdomain" {
        return Some(loopback);
    }
    match h.as_str() {
        "metadata"
        | "metadata.google.internal"
        | "metadata.goog"
        | "instance-data"
        | "instance-data.ec2.internal" => Some(metadata),
        _ => None,
    }
}

fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> IpNet {
    IpNet::V4(ipnet::Ipv4Net::new(Ipv4Addr::new(a, b, c, d), len).expect("valid prefix"))
}

/// The kind of a non-public IPv4 address, `None` for a public unicast one.
fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    let within = |net: IpNet| net.contains(&IpAddr::V4(ip));
    Some(if ip.is_unspecified() || o[0] == 0 {
        "unspecified (\"this network\")"
    } else if ip.is_loopback() {
        "loopback"
    } else if ip.is_private() || within(v4(100, 64, 0, 0, 10)) {
        "private"
    } else if ip.is_link_local() {
        "link-local"
    } else if ip.is_broadcast() {
        "broadcast"
    } else if ip.is_multicast() {
        "multicast"
    } else if ip.is_documentation() {
        "documentation"
    } else if within(v4(198, 18, 0, 0, 15)) {
        "benchmarking"
    } else if within(v4(192, 0, 0, 0, 24)) || within(v4(192, 88, 99, 0, 24)) || o[0] >= 240 {
        "reserved"
    } else {
        return None;
    })
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(m) = ip.to_ipv4_mapped() {
        return Some(m);
    }
    // `::` and `::1` are IPv6's own unspecified and loopback, not compatible forms
    if s[..6] == [0; 6] && !(s[6] == 0 && s[7] <= 1) {
        return Some(tail);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(tail);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

/// The kind of a non-public IPv6 address (its embedded IPv4 judged as IPv4).
fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(inner) = embedded_v4(ip) {
        return v4_kind(inner);
    }
    let s = ip.segments();
    Some(if ip.is_unspecified() {
        "unspecified"
    } else if ip.is_loopback() {
        "loopback"
    } else if s[0] & 0xfe00 == 0xfc00 {
        "unique-local"
    } else if s[0] & 0xffc0 == 0xfe80 {
        "link-local"
    } else if s[0] & 0xffc0 == 0xfec0 {
        "site-local"
    } else if ip.is_multicast() {
        "multicast"
    } else if (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && s[1] < 0x1000) {
        "documentation"
    } else if s[..4] == [0x100, 0, 0, 0] {
        "discard-only"
    } else if s[0] == 0x64 && s[1] == 0xff9b {
        // local-use NAT64 (64:ff9b:1::/48): translates into a private network
        "private"
    } else if s[0] == 0x2001 && s[1] < 0x200 {
        // IETF protocol assignments, Teredo (2001::/32) among them
        "reserved"
    } else {
        return None;
    })
}

/// Why `ip` is not a public unicast address, `None` when it is one.
pub fn non_public_kind(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(a) => v4_kind(a),
        IpAddr::V6(a) => v6_kind(a),
    }
}

/// `"10.0.0.0/8,192.168.1.5"` → ranges; a bare address is a single-address range.
pub fn parse_allow(list: &str) -> Result<Vec<IpNet>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<IpNet>()
                .or_else(|_| s.parse::<IpAddr>().map(IpNet::from))
                .map(|n| n.trunc())
                .map_err(|_| format!("--egress-allow: {s:?} is not a CIDR range or an IP address"))
        })
        .collect()
}

impl EgressPolicy {
    /// The guard off: every destination passes.
    pub fn open() -> Self {
        EgressPolicy {
            allow_private: true,
            allow: vec![],
        }
    }

    /// Whether Herald may connect to `ip`.
    pub fn allows(&self, ip: IpAddr) -> bool {
        self.refusal_kind(ip).is_none()
    }

    fn refusal_kind(&self, ip: IpAddr) -> Option<&'static str> {
        if self.allow_private {
            return None;
        }
        let inner = match ip {
            IpAddr::V6(a) => embedded_v4(a).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        if self
            .allow
            .iter()
            .any(|n| n.contains(&ip) || inner.is_some_and(|i| n.contains(&i)))
        {
            return None;
        }
        non_public_kind(ip)
    }

    /// Checks an address Herald is about to connect to (`host` names it in the error).
    pub fn check_ip(&self, host: &str, ip: IpAddr) -> Result<(), Refused> {
        match self.refusal_kind(ip) {
            None => Ok(()),
            Some(kind) => Err(Refused {
                host: host.to_string(),
                ip,
                kind,
            }),
        }
    }

    /// Checks a host as written (config time, and before a request): IP literals
    /// (in every form the WHATWG parser accepts: `127.1`, `0x7f000001`…) and the
    /// well-known names. Other names pass here; the resolver judges them.
    pub fn check_host<S: AsRef<str>>(&self, host: &url::Host<S>) -> Result<(), Refused> {
        match host {
            url::Host::Ipv4(a) => self.check_ip(&a.to_string(), IpAddr::V4(*a)),
            url::Host::Ipv6(a) => self.check_ip(&format!("[{a}]"), IpAddr::V6(*a)),
            url::Host::Domain(d) => match well_known_name(d.as_ref()) {
                Some(ip) => self.refusal_kind(ip).map_or(Ok(()), |kind| {
                    Err(Refused {
                        host: d.as_ref().to_string(),
                        ip,
                        kind,
                    })
                }),
                None => Ok(()),
            },
        }
    }

    /// Checks the host of an http(s) URL. `Ok(None)` when the URL does not parse
    /// (the caller's format check speaks for that).
    pub fn check_url(&self, raw: &str) -> Result<Option<url::Url>, Refused> {
        let Ok(u) = url::Url::parse(raw.trim()) else {
            return Ok(None);
        };
        if let Some(h) = u.host() {
            self.check_host(&h)?;
        }
        Ok(Some(u))
    }

    /// Checks a bare host name or address (SMTP `host`): `127.1`, `[::1]` and `::1`
    /// are addresses; anything that is not a valid host passes (not ours to judge).
    pub fn check_bare_host(&self, raw: &str) -> Result<(), Refused> {
        match parse_bare_host(raw) {
            Some(h) => self.check_host(&h),
            None => Ok(()),
        }
    }

    /// Resolves `host` and keeps the addresses the policy allows: none left is
    /// `Refused` (naming the first refused address), a failed lookup `LookupFailed`.
    pub async fn resolve(
        &self, host: &str, port: u16,
    ) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        if let Some(h) = parse_bare_host(host) {
            match h {
                url::Host::Ipv4(a) => {
                    self.check_ip(host, IpAddr::V4(a))?;
                    return Ok(vec![SocketAddr::new(IpAddr::V4(a), port)]);
                }
                url::Host::Ipv6(a) => {
                    self.check_ip(host, IpAddr::V6(a))?;
                    return Ok(vec![SocketAddr::new(IpAddr::V6(a), port)]);
                }
                url::Host::Domain(_) => {}
            }
        }
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| LookupFailed {
                host: host.to_string(),
                cause: e.to_string(),
            })?
            .collect();
        if found.is_empty() {
            return Err(Box::new(LookupFailed {
                host: host.to_string(),
                cause: "no addresses".into(),
            }));
        }
        let mut first_refusal = None;
        let allowed: Vec<SocketAddr> = found
            .into_iter()
            .filter(|a| match self.check_ip(host, a.ip()) {
                Ok(()) => true,
                Err(r) => {
                    first_refusal.get_or_insert(r);
                    false
                }
            })
            .collect();
        match (allowed.is_empty(), first_refusal) {
            (true, Some(r)) => Err(Box::new(r)),
            _ => Ok(allowed),
        }
    }
}

/// A bare host as the WHATWG parser reads it for http(s) URLs, accepting an
/// unbracketed IPv6 address too.
fn parse_bare_host(raw: &str) -> Option<url::Host<String>> {
    let raw = raw.trim();
    if let Ok(a) = raw.parse::<Ipv6Addr>() {
        return Some(url::Host::Ipv6(a));
    }
    url::Host::parse(raw).ok()
}

/// reqwest's resolver hook: every name an HTTP client connects to is resolved
/// here and only allowed addresses are handed back, so the address connected to
/// is always one the policy allows.
pub struct GuardedResolver {
    policy: Arc<EgressPolicy>,
}

impl GuardedResolver {
    pub fn new(policy: Arc<EgressPolicy>) -> Self {
        GuardedResolver { policy }
    }
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            // port 0: reqwest puts the URL's port (or the scheme's) in
            let addrs = policy.resolve(&host, 0).await?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The settings every provider HTTP client shares: the guarded resolver, no
/// redirects (a 3xx would send the request, 307/308 with its body, to a
/// destination the answering server chooses, and no provider Herald speaks to
/// needs one: the 3xx is recorded as the provider's answer), and no proxy from
/// the environment (a proxy resolves names itself, out of the guard's sight).
pub fn client_builder(policy: &Arc<EgressPolicy>) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .user_agent(concat!("herald/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(GuardedResolver::new(policy.clone())))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
}

/// The refusal somewhere in an error's chain of causes (the resolver's error
/// reaches the caller wrapped in hyper's and reqwest's).
pub fn find_cause<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cur {
        if let Some(t) = c.downcast_ref::<T>() {
            return Some(t);
        }
        cur = c.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> EgressPolicy {
        EgressPolicy::default()
    }

    #[test]
    fn refuses_every_non_public_range() {
        let g = guard();
        for a in [
            "127.0.0.1",
            "127.255.255.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.0.1",
            "100.64.0.1",
            "100.127.255.255",
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "239.255.255.250",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "192.0.0.8",
            "240.0.0.1",
            "::",
            "::1",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2001::1",
            "100::1",
        ] {
            let ip: IpAddr = a.parse().unwrap();
            assert!(!g.allows(ip), "{a} must be refused");
            assert!(
                EgressPolicy::open().allows(ip),
                "{a} passes with the guard off"
            );
        }
        for a in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(g.allows(a.parse().unwrap()), "{a} must pass");
        }
    }

    #[test]
    fn allowed_ranges_pass_mapped_forms_included() {
        let p = EgressPolicy {
            allow_private: false,
            allow: parse_allow("127.0.0.1/32, 10.0.0.0/8,fd00::1").unwrap(),
        };
        assert!(p.allows("127.0.0.1".parse().unwrap()));
        assert!(p.allows("::ffff:127.0.0.1".parse().unwrap()));
        assert!(p.allows("10.200.0.1".parse().unwrap()));
        assert!(p.allows("fd00::1".parse().unwrap()));
        assert!(!p.allows("127.0.0.2".parse().unwrap()));
        assert!(!p.allows("fd00::2".parse().unwrap()));
        assert!(!p.allows("169.254.169.254".parse().unwrap()));
        assert!(parse_allow("10.0.0.0/33").is_err());
        assert!(parse_allow("nonsense").is_err());
        assert_eq!(parse_allow(" , ").unwrap(), vec![]);
    }

    #[test]
    fn literal_forms_and_names_are_judged_by_address() {
        let g = guard();
        for u in [
            "http://127.0.0.1/x",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://localhost:8080/",
            "http://LOCALHOST./",
            "http://a.b.localhost/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "https://169.254.169.254/latest/meta-data",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://metadata/",
        ] {
            let e = g.check_url(u).expect_err(u);
            assert!(!e.to_string().contains("/x"), "no path in {e}");
        }
        assert!(g
            .check_url("https://hooks.slack.com/services/T/B/C")
            .is_ok());
        assert!(g.check_url("https://8.8.8.8/").is_ok());
        assert!(g.check_url("not a url").unwrap().is_none());
        for h in [
            "127.0.0.1",
            "127.1",
            "localhost",
            "[::1]",
            "::1",
            "0x7f000001",
        ] {
            assert!(g.check_bare_host(h).is_err(), "{h}");
        }
        assert!(g.check_bare_host("smtp.example.com").is_ok());
        // a name stands for its address: allowing the address allows the name
        let p = EgressPolicy {
            allow_private: false,
            allow: parse_allow("127.0.0.0/8").unwrap(),
        };
        assert!(p.check_url("http://localhost/").is_ok());
        assert!(p.check_url("http://metadata/").is_err());
        assert!(EgressPolicy::open().check_url("http://metadata/").is_ok());
    }

    #[tokio::test]
    async fn the_resolver_refuses_localhost_unless_allowed() {
        use reqwest::dns::Resolve;
        let name = |s: &str| s.parse::<reqwest::dns::Name>().unwrap();
        let r = GuardedResolver::new(Arc::new(guard()));
        let err = match r.resolve(name("localhost")).await {
            Err(e) => e,
            Ok(a) => panic!("resolved to {:?}", a.collect::<Vec<_>>()),
        };
        let refused = find_cause::<Refused>(&*err).expect("a refusal");
        assert_eq!(refused.host, "localhost");
        assert_eq!(refused.kind, "loopback");
        let r = GuardedResolver::new(Arc::new(EgressPolicy {
            allow_private: false,
            allow: parse_allow("127.0.0.0/8,::1/128").unwrap(),
        }));
        let addrs: Vec<SocketAddr> = r
            .resolve(name("localhost"))
            .await
            .expect("allowed")
            .collect();
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
        // a name that does not exist: a lookup failure, not a refusal
        let r = GuardedResolver::new(Arc::new(guard()));
        match r.resolve(name("no-such-host.invalid")).await {
            Err(e) => assert!(find_cause::<LookupFailed>(&*e).is_some(), "{e}"),
            Ok(_) => panic!(".invalid never resolves"),
        }
    }

    #[tokio::test]
    async fn a_guarded_client_never_connects_to_a_refused_name() {
        // a real listener on 127.0.0.1, reached by name: the guard stops it
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let accepted = tokio::spawn(async move {
            tokio::time::timeout(std::time::Duration::from_millis(500), l.accept())
                .await
                .is_ok()
        });
        let client = client_builder(&Arc::new(guard())).build().unwrap();
        let e = client
            .get(format!("http://localhost:{port}/"))
            .send()
            .await
            .expect_err("refused");
        assert!(find_cause::<Refused>(&e).is_some(), "{e:?}");
        assert!(
            !accepted.await.unwrap(),
            "no connection reached the listener"
        );
    }
}
