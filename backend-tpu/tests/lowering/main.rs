//! Every lowered prim against the CPU backend, on the PJRT CPU plugin: random inputs of every
//! dtype the prim supports, many parameter combinations, NaN/±∞/±0 and ties where they matter.

#[path = "../common/mod.rs"]
mod common;
mod harness;

mod basic;
mod elementwise;
mod index;
mod nn;
mod sort;
