//! How much memory the process keeps from the allocator (glibc; elsewhere, musl or macOS,
//! nothing is done).
//!
//! Figures are in docs/benchmarks.md, "Memory of the loaded workspace". One malloc arena
//! for the whole process (`M_ARENA_MAX` 1) was measured there and not adopted: 5 MiB less
//! on k8s-community for twice the load time, the parse threads waiting on its lock.

/// Gives the pages the allocator holds but no allocation uses back to the operating system.
///
/// With glibc every worker thread of [`crate::workspace::parallel_map`] allocates from an
/// arena of its own, and what a parse leaves there (the freed markdown-rs trees, between
/// the parse results that stay) stays mapped after the threads end. `malloc_trim` returns
/// every whole free page of every arena; it takes about a millisecond. Also for callers
/// that free a large load's buffers after it (`folio lsp` drops the texts it read once
/// parsed).
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes its locks.
    unsafe {
        libc::malloc_trim(0);
    }
}
