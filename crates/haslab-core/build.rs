//! `HASLAB_MODEL_ID`: a fingerprint of the simulator's source (every file under `src/`, path
//! and content, FNV-1a 64). Stored runs record it, so that a sweep re-runs what an older
//! simulator computed instead of reusing it (docs/sweeps.md).

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    println!("cargo:rerun-if-changed=src");
    let mut all = Vec::new();
    files(&src, &mut all);
    all.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for p in &all {
        let rel = p.strip_prefix(root).unwrap_or(p);
        eat(rel.to_string_lossy().replace('\\', "/").as_bytes());
        eat(&[0]);
        eat(&std::fs::read(p).unwrap_or_default());
        eat(&[0]);
    }
    println!("cargo:rustc-env=HASLAB_MODEL_ID={h:016x}");
}
