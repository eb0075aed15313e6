//! Link options for the `folio` executable.
//!
//! On Linux with glibc the executable is linked with packed relative relocations
//! (`DT_RELR`, `-z pack-relative-relocs`, binutils 2.38+ / lld 15+, glibc 2.36+). The
//! position-independent executable carries about 120,000 relative relocations; as
//! `RELA` entries (24 bytes each) they are 2.9 MB the loader reads at every start and
//! that stay resident, as `RELR` bitmaps about 36 KB: 3–4.5 MiB less resident memory for
//! `folio lsp` (docs/benchmarks.md). A linker that does not know the option warns and
//! ignores it, and GNU ld leaves it off when the C library lacks `DT_RELR` support.
//!
//! The cost: an executable linked so needs glibc 2.36 or newer where it runs (the
//! `GLIBC_ABI_DT_RELR` version). It runs where it was built; to build one for machines
//! with an older glibc (Ubuntu 22.04 has 2.35), set `FOLIO_NO_PACKED_RELOCS=1`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=FOLIO_NO_PACKED_RELOCS");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let opted_out = std::env::var_os("FOLIO_NO_PACKED_RELOCS").is_some_and(|v| v != "0");
    if os == "linux" && env == "gnu" && !opted_out {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
