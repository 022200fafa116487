//! Memory within the caps. A binary of its own: its counting allocator is the global
//! allocator of the whole process, so no other test may allocate beside it.

mod memory_caps;
