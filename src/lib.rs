//! wirelens
#![warn(missing_docs)]

pub mod codec;
pub mod model;
