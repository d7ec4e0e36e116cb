//! The console's sign-in: `herald console add-member` on the server's store
//! and one request helper per sign-in endpoint. The console answers
//! redirects and sets cookies, so these requests go through a client that
//! follows no redirect, and the session cookie is passed by hand.

use super::*;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// A signed-in member's session: the cookie's token and its CSRF token.
#[derive(Clone, Debug)]
pub struct ConsoleSession {
    pub cookie: String,
    pub csrf: String,
}

/// A client that follows no redirect.
pub fn console_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .expect("reqwest client")
}

/// `herald console ARGS…` on the store of `dir` (its database on
/// PostgreSQL, else the data directory: through the server's operator API
/// while one serves it).
pub fn console_cmd(dir: &Path, args: &[&str]) -> CmdOutput {
    let mut cmd = base_command();
    cmd.arg("console").args(args);
    if pg_mode() {
        cmd.arg("--store").arg(pg_url_for(dir));
    } else {
        cmd.arg("--data-dir").arg(dir);
    }
    cmd.stdin(Stdio::null());
    run_with_timeout(cmd, Duration::from_secs(60))
}

/// The token of the `sign_in_link:` line of an `add-member`'s output.
pub fn link_token(out: &CmdOutput) -> String {
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("sign_in_link: "))
        .unwrap_or_else(|| panic!("no sign_in_link line: {out:?}"));
    line.rsplit_once("/console/invite/")
        .unwrap_or_else(|| panic!("not an invite link: {line}"))
        .1
        .to_string()
}

/// The value of the session cookie a response sets (`None`: it sets none).
pub fn session_cookie_of(r: &Resp) -> Option<String> {
    r.headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| c.strip_prefix("herald_console="))
        .map(|rest| rest.split(';').next().unwrap_or("").to_string())
}

/// The whole `Set-Cookie` header of the session cookie.
pub fn session_set_cookie(r: &Resp) -> String {
    r.headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("herald_console="))
        .unwrap_or_else(|| panic!("no session cookie: {r}"))
        .to_string()
}

/// The page's CSRF token (`<meta name="csrf-token">` of the layout).
pub fn csrf_of(page: &str) -> String {
    let at = page
        .find("name=\"csrf-token\" content=\"")
        .unwrap_or_else(|| panic!("no csrf-token meta: {page}"));
    let rest = &page[at + "name=\"csrf-token\" content=\"".len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

impl TestApp {
    /// `herald console add-member EMAIL --project default --role ROLE` on
    /// this server's store; asserts exit 0 and returns the link's token.
    pub fn console_add_member(&self, email: &str, role: &str) -> String {
        let out = console_cmd(
            &self.data_dir,
            &["add-member", email, "--project", "default", "--role", role],
        );
        assert_eq!(out.status.code(), Some(0), "add-member: {out:?}");
        link_token(&out)
    }

    fn console_req(&self, base: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
        console_client().request(method, format!("{base}{path}"))
    }

    /// `GET /console/invite/{token}`.
    pub async fn console_invite_page(&self, token: &str) -> Resp {
        self.console_req(
            self.next_address(),
            GET,
            &format!("/console/invite/{token}"),
        )
        .go()
        .await
    }

    /// `POST /console/invite/{token}` with the password twice (`confirm`).
    pub async fn console_set_password(&self, token: &str, password: &str, confirm: &str) -> Resp {
        self.console_req(
            self.next_address(),
            POST,
            &format!("/console/invite/{token}"),
        )
        .form(&[("password", password), ("password_confirmation", confirm)])
        .go()
        .await
    }

    /// `POST /console/login` on the node at `base`.
    pub async fn console_login_at(&self, base: &str, email: &str, password: &str) -> Resp {
        self.console_req(base, POST, "/console/login")
            .form(&[("email", email), ("password", password)])
            .go()
            .await
    }

    /// `POST /console/login`.
    pub async fn console_login(&self, email: &str, password: &str) -> Resp {
        let base = self.next_address().to_string();
        self.console_login_at(&base, email, password).await
    }

    /// A console page (`GET path`) with a session cookie, on the node at `base`.
    pub async fn console_page_at(&self, base: &str, cookie: &str, path: &str) -> Resp {
        self.console_req(base, GET, path)
            .header("cookie", format!("herald_console={cookie}"))
            .go()
            .await
    }

    /// A console page (`GET path`) with a session cookie.
    pub async fn console_page(&self, cookie: &str, path: &str) -> Resp {
        let base = self.next_address().to_string();
        self.console_page_at(&base, cookie, path).await
    }

    /// A console form posted with a session cookie.
    pub async fn console_post(&self, cookie: &str, path: &str, form: &[(&str, &str)]) -> Resp {
        self.console_req(self.next_address(), POST, path)
            .header("cookie", format!("herald_console={cookie}"))
            .form(form)
            .go()
            .await
    }

    /// `POST /console/logout`.
    pub async fn console_logout(&self, cookie: &str, csrf: &str) -> Resp {
        self.console_post(cookie, "/console/logout", &[("csrf", csrf)])
            .await
    }

    /// An Admin API request with a console session: the cookie, and the
    /// CSRF token in `X-CSRF-Token` unless `None`.
    pub fn admin_as_member(
        &self, s: &ConsoleSession, csrf: Option<&str>, method: Method, path: &str,
    ) -> reqwest::RequestBuilder {
        let r = self
            .console_req(self.next_address(), method, path)
            .header("cookie", format!("herald_console={}", s.cookie));
        match csrf {
            Some(t) => r.header("x-csrf-token", t),
            None => r,
        }
    }

    /// Adds a member with `role`, sets their password through the link and
    /// returns their session (the cookie and the CSRF token of a page).
    pub async fn console_member(&self, email: &str, role: &str, password: &str) -> ConsoleSession {
        let token = self.console_add_member(email, role);
        let r = self.console_set_password(&token, password, password).await;
        assert_eq!(r.status, 303, "{r}");
        let cookie = session_cookie_of(&r).unwrap_or_else(|| panic!("no cookie: {r}"));
        let page = self
            .console_page(&cookie, "/console/settings/members")
            .await;
        ConsoleSession {
            csrf: csrf_of(&page.text),
            cookie,
        }
    }
}
