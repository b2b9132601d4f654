//! The video a HAS server holds: a bitrate ladder, a sequence of segments (each with its own
//! media duration) and the size of every segment at every level.
//!
//! Sizes are CBR (`bitrate × duration / 8`, rounded to whole bytes) unless given per segment
//! (from a scenario table, or from the byte ranges of an MPD's `SegmentList`).
//!
//! Presets (the papers' ladders; all with 2 s segments):
//! - `tcphas`: 248, 456, 928, 1632, 4256 kbps — TcpHas paper, Table I. Its evaluation runs
//!   K = 180 s; the preset is 10 min long.
//! - `qoe`: 328, 796, 1500, 2400, 3000, 3800, 4200 kbps — QoE-of-legacy-TCP paper, Table I
//!   (2 s segments, a 10 min video).
//! - `newcwv`: 200, 250, 300, 400, 500, 600, 700 kbps — newCWV/pacing paper (its video lasted
//!   about 600 s).

/// Presets: (name, ladder in kbps, segment duration s, video length s).
pub const PRESETS: &[(&str, &[u64], u64, u64)] = &[
    ("tcphas", &[248, 456, 928, 1632, 4256], 2, 600),
    ("qoe", &[328, 796, 1500, 2400, 3000, 3800, 4200], 2, 600),
    ("newcwv", &[200, 250, 300, 400, 500, 600, 700], 2, 600),
];

/// Names of the presets, for messages.
pub fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|p| format!("\"{}\"", p.0))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A video: ladder, segment durations and sizes. Built through [`Video::cbr`],
/// [`Video::from_durations`] or [`super::mpd`]; every constructor checks its invariants.
#[derive(Clone, Debug, PartialEq)]
pub struct Video {
    /// Where it came from ("tcphas", "custom", an MPD path).
    pub name: String,
    /// Encoding bitrate of each level, strictly ascending.
    pub bitrates_bps: Vec<u64>,
    /// Media duration of each segment.
    pub durations_ns: Vec<u64>,
    /// `sizes_bytes[level][segment]`.
    pub sizes_bytes: Vec<Vec<u64>>,
    /// What reading the video forgave (e.g. duplicate Representation ids in an MPD): reported
    /// as the run's warnings, never changing the video.
    pub warnings: Vec<String>,
}

/// Most segments a video may have (a 10-day video of 1 s segments is below this).
pub const MAX_SEGMENTS: usize = 1_000_000;

/// CBR size of a segment: bitrate × duration / 8, rounded, at least 1 byte.
pub fn cbr_bytes(bitrate_bps: u64, duration_ns: u64) -> u64 {
    let bits = bitrate_bps as u128 * duration_ns as u128 / 1_000_000_000;
    (((bits + 4) / 8) as u64).max(1)
}

impl Video {
    /// A CBR video of `segments` segments of `segment_ns` each (the last one shortened so that
    /// the total is `total_ns`, when given and not a multiple).
    pub fn cbr(
        name: &str,
        bitrates_bps: Vec<u64>,
        segment_ns: u64,
        total_ns: u64,
    ) -> Result<Video, String> {
        if segment_ns == 0 {
            return Err("the segment duration must be greater than zero".into());
        }
        if total_ns == 0 {
            return Err("the video duration must be greater than zero".into());
        }
        let full = total_ns / segment_ns;
        let rest = total_ns % segment_ns;
        let n = full + (rest > 0) as u64;
        if n as usize > MAX_SEGMENTS {
            return Err(format!(
                "{n} segments is too many: at most {MAX_SEGMENTS} (use longer segments or a shorter video)"
            ));
        }
        let mut durations = vec![segment_ns; full as usize];
        if rest > 0 {
            durations.push(rest);
        }
        Self::from_durations(name, bitrates_bps, durations, None)
    }

    /// A video with explicit durations and optional explicit sizes (`[level][segment]`).
    pub fn from_durations(
        name: &str,
        bitrates_bps: Vec<u64>,
        durations_ns: Vec<u64>,
        sizes_bytes: Option<Vec<Vec<u64>>>,
    ) -> Result<Video, String> {
        check_ladder(&bitrates_bps)?;
        if durations_ns.is_empty() {
            return Err("the video has no segments".into());
        }
        if durations_ns.len() > MAX_SEGMENTS {
            return Err(format!(
                "{} segments is too many: at most {MAX_SEGMENTS}",
                durations_ns.len()
            ));
        }
        if let Some(i) = durations_ns.iter().position(|&d| d == 0) {
            return Err(format!("segment {i} has a zero duration"));
        }
        let sizes = match sizes_bytes {
            Some(s) => {
                if s.len() != bitrates_bps.len() {
                    return Err(format!(
                        "sizes are given for {} levels but the ladder has {}",
                        s.len(),
                        bitrates_bps.len()
                    ));
                }
                for (l, row) in s.iter().enumerate() {
                    if row.len() != durations_ns.len() {
                        return Err(format!(
                            "level {l} has {} segment sizes but the video has {} segments",
                            row.len(),
                            durations_ns.len()
                        ));
                    }
                    if let Some(i) = row.iter().position(|&b| b == 0) {
                        return Err(format!(
                            "level {l}, segment {i}: a size must be greater than zero"
                        ));
                    }
                }
                s
            }
            None => bitrates_bps
                .iter()
                .map(|&b| durations_ns.iter().map(|&d| cbr_bytes(b, d)).collect())
                .collect(),
        };
        Ok(Video {
            name: name.to_string(),
            bitrates_bps,
            durations_ns,
            sizes_bytes: sizes,
            warnings: Vec::new(),
        })
    }

    /// A preset by name (see the module documentation), optionally with another length.
    pub fn preset(name: &str, total_ns: Option<u64>) -> Option<Result<Video, String>> {
        let &(n, kbps, seg_s, len_s) = PRESETS.iter().find(|p| p.0 == name)?;
        Some(Video::cbr(
            n,
            kbps.iter().map(|k| k * 1000).collect(),
            seg_s * 1_000_000_000,
            total_ns.unwrap_or(len_s * 1_000_000_000),
        ))
    }

    pub fn levels(&self) -> usize {
        self.bitrates_bps.len()
    }
    pub fn segments(&self) -> usize {
        self.durations_ns.len()
    }
    /// Total media duration.
    pub fn total_ns(&self) -> u64 {
        self.durations_ns.iter().sum()
    }
    /// The nominal segment duration τ: the duration of the first segment (all but the last are
    /// equal in CBR videos and in typical MPDs).
    pub fn segment_ns(&self) -> u64 {
        self.durations_ns[0]
    }
    pub fn size(&self, level: usize, segment: usize) -> u64 {
        self.sizes_bytes[level][segment]
    }
    /// The highest level whose bitrate is at most `bps` (level 0 if none is).
    pub fn level_at_most(&self, bps: f64) -> usize {
        highest_at_most(&self.bitrates_bps, bps)
    }
}

/// The highest index of `ladder` (ascending) whose value is at most `bps`; 0 if none.
pub fn highest_at_most(ladder: &[u64], bps: f64) -> usize {
    ladder.iter().rposition(|&r| r as f64 <= bps).unwrap_or(0)
}

/// Checks that a ladder is non-empty, positive and strictly ascending.
pub fn check_ladder(bitrates_bps: &[u64]) -> Result<(), String> {
    if bitrates_bps.is_empty() {
        return Err("the bitrate ladder is empty".into());
    }
    if bitrates_bps.len() > 255 {
        return Err(format!(
            "{} levels is too many: at most 255",
            bitrates_bps.len()
        ));
    }
    if bitrates_bps.contains(&0) {
        return Err("every bitrate must be greater than zero".into());
    }
    if let Some(w) = bitrates_bps.windows(2).find(|w| w[1] <= w[0]) {
        return Err(format!(
            "the bitrates must be strictly ascending ({} bps is followed by {} bps)",
            w[0], w[1]
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_sizes_are_bitrate_times_duration() {
        let v = Video::cbr(
            "t",
            vec![1_000_000, 2_000_000],
            2_000_000_000,
            5_000_000_000,
        )
        .unwrap();
        assert_eq!(v.segments(), 3);
        assert_eq!(
            v.durations_ns,
            vec![2_000_000_000, 2_000_000_000, 1_000_000_000]
        );
        assert_eq!(v.size(0, 0), 250_000);
        assert_eq!(v.size(1, 2), 250_000);
        assert_eq!(v.total_ns(), 5_000_000_000);
    }

    #[test]
    fn presets_have_the_papers_ladders() {
        let v = Video::preset("tcphas", None).unwrap().unwrap();
        assert_eq!(
            v.bitrates_bps,
            vec![248_000, 456_000, 928_000, 1_632_000, 4_256_000]
        );
        assert_eq!(v.segment_ns(), 2_000_000_000);
        let q = Video::preset("qoe", Some(60_000_000_000)).unwrap().unwrap();
        assert_eq!(q.levels(), 7);
        assert_eq!(q.segments(), 30);
        assert!(Video::preset("nope", None).is_none());
    }

    #[test]
    fn bad_ladders_and_sizes_are_refused() {
        assert!(check_ladder(&[]).is_err());
        assert!(check_ladder(&[2, 1]).unwrap_err().contains("ascending"));
        assert!(check_ladder(&[1, 1]).is_err());
        assert!(check_ladder(&[0, 1]).is_err());
        let e =
            Video::from_durations("x", vec![1, 2], vec![1, 1], Some(vec![vec![1, 1]])).unwrap_err();
        assert!(e.contains("2"), "{e}");
        let e = Video::from_durations("x", vec![1], vec![1, 1], Some(vec![vec![1]])).unwrap_err();
        assert!(e.contains("segment sizes"), "{e}");
    }

    #[test]
    fn level_at_most_picks_the_highest_fitting_level() {
        let l = [100, 200, 300];
        assert_eq!(highest_at_most(&l, 50.0), 0);
        assert_eq!(highest_at_most(&l, 200.0), 1);
        assert_eq!(highest_at_most(&l, 299.9), 1);
        assert_eq!(highest_at_most(&l, 1e9), 2);
    }
}
