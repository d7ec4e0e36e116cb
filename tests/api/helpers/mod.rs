//! Test harness: starts the real `herald` binary and offers request and
//! assertion helpers shared by every test file, one module per concern:
//! which backend a run uses and its services (`backends`), the server's
//! process and its output (`process`), the running server (`app`), requests
//! with credentials and per endpoint (`requests`), responses and their
//! assertions (`response`), keys, ids and values (`values`), and user
//! tokens (`jwt`). Every item is re-exported here, so a test file takes them
//! all with `use crate::helpers::*`.
#![allow(dead_code)]

mod app;
mod backends;
mod console;
mod content;
mod jwt;
mod process;
mod requests;
mod response;
mod values;

pub use app::*;
pub use backends::*;
pub use console::*;
pub use jwt::*;
pub use process::*;
pub use response::*;
pub use values::*;

pub use reqwest::Method;

pub const A: &str = "/admin/v1";
pub const U: &str = "/user/v1";
pub const CHANNEL_TYPES: [&str; 6] = ["chat", "email", "in_app", "mobile_push", "sms", "web_push"];

pub const GET: Method = Method::GET;
pub const PUT: Method = Method::PUT;
pub const POST: Method = Method::POST;
pub const PATCH: Method = Method::PATCH;
pub const DELETE: Method = Method::DELETE;
