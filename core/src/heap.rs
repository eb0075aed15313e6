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

/// Keeps glibc's trim threshold at its default for the life of the process, for one that
/// keeps a loaded workspace (`folio lsp`, `folio mcp`). Call it first thing, before other
/// threads start.
///
/// glibc serves a block of 128 KiB or more with its own `mmap`, and the first time such a
/// block is freed it raises that limit to the block's size and the trim threshold (the free
/// space an arena keeps at its top instead of handing it back) to twice that, up to 32 and
/// 64 MiB. markdown-rs's working buffers for a large file do that at once, and from then
/// on each parse thread's arena keeps what the parses freed, where later allocations land
/// in pieces. Setting the `mmap` limit to its own ceiling, 32 MiB (`M_MMAP_THRESHOLD`),
/// turns the raising off: large buffers still come from the arenas, as they would once
/// raised, and the trim threshold stays 128 KiB. `folio lsp` on k8s-community keeps about
/// 4.5 MiB less once loaded (51 → 46.5 MiB VmRSS), its peak is 4 MiB lower, for about the
/// same CPU time; `folio mcp` there, indexed and searched once, 90–93 → 83–85.5 MiB.
/// The `MALLOC_MMAP_THRESHOLD_` and `MALLOC_TRIM_THRESHOLD_` environment variables, when
/// set, win.
pub fn fix_trim_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none()
        && std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_none()
    {
        // SAFETY: mallopt only sets a field of the allocator's parameters, under its lock.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 * 1024 * 1024);
        }
    }
}
