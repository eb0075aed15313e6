//! Whether a folder lives on a network file system, whose change notifications report
//! only what this machine changed (Linux's inotify over NFS, SMB or 9P sees nothing of
//! another client's writes), so `auto` polls it instead.

use std::path::Path;

/// The file systems polled under `auto`, by the `f_type` magic `statfs(2)` reports
/// (Linux `include/uapi/linux/magic.h` and the CIFS/SMB client's own constants).
#[cfg(target_os = "linux")]
const REMOTE: &[(u32, &str)] = &[
    (0x6969, "NFS"),
    (0x517B, "SMB"),
    (0xFF53_4D42, "CIFS"),
    (0xFE53_4D42, "SMB2"),
    (0x0102_1997, "9P"),
    (0x0000_564C, "NCP"),
    (0x5346_414F, "AFS"),
    (0x6B41_4653, "AFS"),
    (0x00C3_6400, "Ceph"),
    (0x0BD0_0BD0, "Lustre"),
];

/// The name of the network file system `folder` is on (`NFS`, `SMB`, `9P`, …), or `None`
/// for a local one (and where this cannot be told: other systems than Linux).
pub(super) fn remote_file_system(folder: &Path) -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    {
        let stat = rustix::fs::statfs(folder).ok()?;
        // `f_type` is signed on some targets; the magics are 32-bit.
        let magic = stat.f_type as u64 as u32;
        REMOTE
            .iter()
            .find(|(m, _)| *m == magic)
            .map(|(_, name)| *name)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = folder;
        None
    }
}
