//! 10,000 concurrent streams held against the simulator. A binary of its own: while it holds
//! them it needs the machine's cores to itself (beside another test of the same binary it
//! could not keep every stream in flight at once, and the level read as not held).

#[path = "../support/mod.rs"]
mod support;

mod hold_10k;
