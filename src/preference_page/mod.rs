//! The hosted preference page (`/p/{token}`, docs/API.md §6 "Preference
//! page"): a signed link a project sends its user to (the engine's
//! `rules::preference_link`), and the server-rendered page and form behind
//! it (`page`). The routes that serve
//! it are `routes::preference_page`. The one-click unsubscribe pages
//! (`/u/{token}`, `unsubscribe`) are served the same way, by
//! `routes::unsubscribe`.

pub mod page;
pub mod unsubscribe;
