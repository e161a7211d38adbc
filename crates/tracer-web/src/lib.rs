//! tracer's live web UI (`tracer ui`, and `--ui` on `proxy`, `run` and `up`): an axum server
//! over a tracer database with the page embedded in the binary.
//!
//! Floor 4: it reads the store through `tracer-live` and `tracer-export` (the same listings,
//! hop logs and searches the CLI prints, so the page and `--json` never disagree); it never
//! names `tracer-record` (a recording process hands it what passes through [`LiveFeed`]) nor
//! `tracer-reference`. Its JSON API is documented in docs/ui.md.
//!
//! Module map:
//! - `server`: [`UiServer`]: the listener, the routes, the guard, the watcher; `options`: what a
//!   server is started with ([`UiOptions`]).
//! - `guard`: loopback, `Host` (DNS rebinding), the token and its cookie, the security headers.
//! - `api`: the JSON endpoints; `message`: one message with its body and its stream's events;
//!   `trace_cache`: the hop logs of the traces lately opened, with the page's extras.
//! - `events`: the live events (ids, a ring for `Last-Event-ID`, SSE per client); `watcher`:
//!   what the database says changed, as events; `live_feed`: what a recording process tells.
//! - `assets`: the page, embedded (`assets/`: plain ES modules, no build step).

#![warn(unreachable_pub)]

mod api;
mod assets;
mod events;
mod guard;
mod live_feed;
mod message;
mod options;
mod server;
mod trace_cache;
mod watcher;

pub use live_feed::LiveFeed;
pub use options::{DiffFuture, DiffPage, DiffTraces, UiOptions, Watch};
pub use server::{UiError, UiServer};
