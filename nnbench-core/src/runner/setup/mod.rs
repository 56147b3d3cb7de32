//! Before the first case: a runner made by its builder ([`builder`]) or
//! from a bench binary's command line ([`bench_main`]), the cases it takes
//! ([`select`]), where its figures come from ([`provenance`], [`git_head`]),
//! and how Ctrl-C stops it ([`interrupt`]).

pub(super) mod bench_main;
pub(super) mod builder;
pub(super) mod git_head;
pub(super) mod interrupt;
pub(crate) mod machine;
pub(crate) mod provenance;
pub(super) mod select;
