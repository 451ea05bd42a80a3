//! syncscope's browser UI: joins the network through the relay and shows what the protocols do.

mod app;
mod config;
mod connection;

pub use app::App;
