//! What the harness measures around a case: resident memory (time is taken around the call itself).

pub mod rss;
