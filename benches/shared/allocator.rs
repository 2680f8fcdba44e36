//! The plugin's allocator (`src/main.rs`), so that every bench measures the engine, the
//! TUI and the floor server with the allocator the shipped binary runs on: with glibc's,
//! the in-process write path measured about a quarter slower.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
