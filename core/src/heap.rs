//! How much memory the process keeps from the allocator: two glibc settings, applied by
//! the long-running servers. Elsewhere (musl, macOS) both functions do nothing.
//!
//! Figures are in docs/benchmarks.md, "Memory of the loaded workspace".

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

/// Makes every thread allocate from one arena (glibc's `M_ARENA_MAX`), for a process that
/// keeps a loaded workspace for its lifetime. Call it first thing, before other threads
/// start.
///
/// glibc gives threads up to eight arenas per core by default. The parse threads' results
/// stay spread over those arenas, between the pages the parse freed, and partly filled
/// pages cannot be returned. With one arena, `folio lsp` on k8s-community (965 files)
/// keeps about 5.5 MiB less once loaded (68 → 62.5 MiB VmRSS) for the same CPU time on
/// two cores; each thread's cache of small blocks (glibc's tcache) still takes most
/// allocations without the arena's lock. The `MALLOC_ARENA_MAX` environment variable,
/// when set, wins.
pub fn use_one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        // SAFETY: mallopt only sets a field of the allocator's parameters, under its lock.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}
