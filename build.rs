//! Link options for the `folio` executable.
//!
//! On Linux with glibc the executable is linked with packed relative relocations
//! (`DT_RELR`, `-z pack-relative-relocs`, binutils 2.38+ / lld 15+, glibc 2.36+). The
//! position-independent executable carries about 120,000 relative relocations; as
//! `RELA` entries (24 bytes each) they are 2.9 MB the loader reads at every start and
//! that stay resident, as `RELR` bitmaps about 42 KB. A linker that does not know the
//! option warns and ignores it, and GNU ld turns it off when the C library does not
//! support `DT_RELR`, so the executable still runs where it was built.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
