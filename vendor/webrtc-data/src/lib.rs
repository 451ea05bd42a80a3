#![warn(rust_2018_idioms)]
#![allow(dead_code)]

pub mod data_channel;
mod error;
pub mod message;

pub use error::Error;
