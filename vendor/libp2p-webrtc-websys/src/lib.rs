#![doc = include_str!("../README.md")]

mod connection;
mod error;
mod sdp;
mod stream;
mod transport;
mod upgrade;

pub use self::{
    connection::Connection,
    error::Error,
    stream::Stream,
    transport::{Config, Transport},
};
