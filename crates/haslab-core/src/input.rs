//! Reading the input files a scenario names (MPDs, Mahimahi traces): only regular files, and at
//! most a stated number of bytes, so that a path such as `/dev/zero`, `/dev/urandom`, a FIFO
//! without a writer or a directory is refused at once instead of filling the memory or hanging.

use std::io::Read;
use std::path::Path;

/// Largest MPD read (bytes). A SegmentTimeline or SegmentList MPD of the longest video the
/// simulator holds (`has::video::MAX_SEGMENTS` segments, about 60 bytes of XML each) fits.
pub const MAX_MPD_BYTES: u64 = 64 << 20;
/// Largest Mahimahi trace read (bytes): an hour of a 100 Mbit/s link is about 30 million lines
/// (about 240 MB); the parsed trace needs 8 bytes per line more.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// `n` bytes in the largest whole unit (for messages).
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

/// The bytes of the regular file at `path`, at most `cap` of them. `what` names the file in
/// messages ("MPD file", "trace"). Refuses other kinds of files (FIFOs, devices, sockets,
/// directories) without opening them, and files larger than `cap`.
pub fn read_capped(path: &Path, what: &str, cap: u64) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a device, FIFO or socket)"
        };
        return Err(format!(
            "cannot read {what} {shown}: it is {kind}; a regular file is needed"
        ));
    }
    let too_big = |size: String| {
        format!(
            "{what} {shown} is {size}: at most {} are read",
            human_bytes(cap)
        )
    };
    if meta.len() > cap {
        return Err(too_big(format!("{} bytes", meta.len())));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    // the file may grow after the size was checked: never read more than the cap
    file.take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    if out.len() as u64 > cap {
        return Err(too_big("larger than that".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_fifos_are_refused_without_reading() {
        for p in ["/dev/zero", "/dev/urandom", "/dev/null", "/"] {
            let e = read_capped(Path::new(p), "MPD file", MAX_MPD_BYTES).unwrap_err();
            assert!(e.contains("a regular file is needed"), "{p}: {e}");
        }
        let e = read_capped(Path::new("/no/such/file"), "trace", 10).unwrap_err();
        assert!(e.starts_with("cannot read trace /no/such/file"), "{e}");
    }

    #[test]
    fn a_file_over_the_cap_is_refused_naming_the_cap() {
        let dir = std::env::temp_dir().join(format!("haslab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big.txt");
        std::fs::write(&f, vec![b'1'; 2048]).unwrap();
        let e = read_capped(&f, "trace", 1024).unwrap_err();
        assert!(e.contains("is 2048 bytes: at most 1 KiB are read"), "{e}");
        assert_eq!(read_capped(&f, "trace", 4096).unwrap().len(), 2048);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
