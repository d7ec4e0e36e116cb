//! The one-click unsubscribe pages (`/u/{token}`, docs/API.md §6
//! "One-click unsubscribe"): the confirmation a person who opens the link
//! sees, one button that POSTs to the same URL, and the page that says it
//! is done. Server-rendered, no script, every name escaped; they load only
//! the preference page's stylesheet, under the same headers
//! (`page::CSP`).

use super::page::escape;

fn head(title: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{title}</title>\n\
         <link rel=\"stylesheet\" href=\"../p/preferences.css\">\n</head>\n<body>\n<main>\n"
    )
}

const TAIL: &str = "</main>\n</body>\n</html>\n";

/// The confirmation: which emails the button stops, and the button. The
/// form has no action, so it posts to the page's own URL (the token is
/// in it).
pub fn confirm(flow_name: &str) -> String {
    let mut h = head("Unsubscribe");
    h.push_str(&format!(
        "<h1>Unsubscribe</h1>\n<p>Stop receiving “{}” emails?</p>\n\
         <form method=\"post\">\n\
         <input type=\"hidden\" name=\"List-Unsubscribe\" value=\"One-Click\">\n\
         <div class=\"actions\"><button type=\"submit\">Unsubscribe</button></div>\n\
         </form>\n",
        escape(flow_name)
    ));
    h.push_str(TAIL);
    h
}

/// After the form's POST: it is done.
pub fn done(flow_name: &str) -> String {
    let mut h = head("Unsubscribed");
    h.push_str(&format!(
        "<h1>You are unsubscribed</h1>\n\
         <p class=\"saved\" role=\"status\">You will no longer receive “{}” emails.</p>\n",
        escape(flow_name)
    ));
    h.push_str(TAIL);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_escape_the_flow_name_and_post_to_themselves() {
        let c = confirm("News & <b>deals</b>");
        assert!(c.contains("News &amp; &lt;b&gt;deals&lt;/b&gt;"));
        assert!(c.contains("<form method=\"post\">"));
        assert!(!c.contains("<script"));
        assert!(done("<i>x</i>").contains("&lt;i&gt;x&lt;/i&gt;"));
    }
}
