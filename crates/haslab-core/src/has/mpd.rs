//! A [`Video`] from a DASH MPD (ISO/IEC 23009-1), parsed with the `dash-mpd-core` crate.
//!
//! What is read: the first video AdaptationSet of the (single) Period; each Representation's
//! `@bandwidth` (the ladder, sorted ascending); the segment timing from `SegmentTemplate`
//! (`@duration` with `$Number$`, or a `SegmentTimeline`), `SegmentList` (one segment per
//! `SegmentURL`, durations from `@duration` or a `SegmentTimeline`, sizes from `@mediaRange`
//! when every URL has one) or `SegmentBase` (a single file whose index is inside the media: it
//! is cut into equal segments of a duration the scenario gives). Segment-information elements
//! are inherited Period → AdaptationSet → Representation, attribute by attribute.
//!
//! Sizes are CBR (`@bandwidth` × duration) unless the MPD gives byte ranges. Every malformed or
//! unsupported MPD gets an error that names the element and what is wrong.

use super::video::{Video, MAX_SEGMENTS};
use dash_mpd_core::{
    AdaptationSet, Period, Representation, SegmentBase, SegmentList, SegmentTemplate,
    SegmentTimeline, MPD,
};
use std::path::Path;

/// Options that the MPD cannot give.
#[derive(Clone, Debug, Default)]
pub struct MpdOptions {
    /// Segment duration used to cut a `SegmentBase` representation into CBR segments.
    pub segment_ns: Option<u64>,
}

/// Reads and converts an MPD file.
pub fn load_file(path: &Path, opts: &MpdOptions) -> Result<Video, String> {
    let text = crate::input::read_capped(path, "MPD file", crate::input::MAX_MPD_BYTES)?;
    let text = String::from_utf8(text)
        .map_err(|_| format!("MPD file {} is not UTF-8 text", path.display()))?;
    load_str(&text, &path.display().to_string(), opts)
}

/// Converts MPD text (`name` is used in the video's name and messages).
pub fn load_str(xml: &str, name: &str, opts: &MpdOptions) -> Result<Video, String> {
    if xml.trim().is_empty() {
        return Err("the MPD is empty".into());
    }
    let cleaned = super::mpd_clean::clean(xml)?;
    let mpd = dash_mpd_core::parse(&cleaned.xml).map_err(|e| format!("not a valid MPD: {e}"))?;
    convert(&mpd, name, opts)
}

fn secs(d: std::time::Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

fn rep_name(r: &Representation, i: usize) -> String {
    match &r.id {
        Some(id) => format!("Representation {id:?}"),
        None => format!("Representation #{i}"),
    }
}

fn convert(mpd: &MPD, name: &str, opts: &MpdOptions) -> Result<Video, String> {
    if mpd.mpdtype.as_deref() == Some("dynamic") {
        return Err(
            "live MPDs (type=\"dynamic\") are not supported: a simulated video needs a fixed list of segments"
                .into(),
        );
    }
    let period = match mpd.periods.as_slice() {
        [] => return Err("the MPD has no Period".into()),
        [p] => p,
        many => {
            return Err(format!(
                "multi-period MPDs are not supported (found {} Periods)",
                many.len()
            ))
        }
    };
    if period.href.is_some() {
        return Err("remote elements (xlink:href on Period) are not supported".into());
    }
    let total_ns = period
        .duration
        .or(mpd.mediaPresentationDuration)
        .map(secs)
        .filter(|&d| d > 0);
    let sets: Vec<&AdaptationSet> = period.adaptations.iter().collect();
    if sets.is_empty() {
        return Err("the Period has no AdaptationSet".into());
    }
    if sets.iter().any(|a| a.href.is_some()) {
        return Err("remote elements (xlink:href on AdaptationSet) are not supported".into());
    }
    let set = sets
        .iter()
        .copied()
        .find(dash_mpd_core::is_video_adaptation)
        .or_else(|| {
            sets.iter().copied().find(|a| {
                !dash_mpd_core::is_audio_adaptation(a) && !dash_mpd_core::is_subtitle_adaptation(a)
            })
        })
        .ok_or("no video AdaptationSet: every AdaptationSet is audio or text")?;
    let set_name = match &set.id {
        Some(id) => format!("AdaptationSet {id:?}"),
        None => "the video AdaptationSet".to_string(),
    };
    if set.representations.is_empty() {
        return Err(format!("{set_name} has no Representation"));
    }
    let mut reps: Vec<(u64, String, &Representation)> = Vec::new();
    let mut warnings = Vec::new();
    for (i, r) in set.representations.iter().enumerate() {
        let rn = rep_name(r, i);
        if r.href.is_some() {
            return Err(format!(
                "{rn}: remote elements (xlink:href) are not supported"
            ));
        }
        if let Some(id) = &r.id {
            if let Some(j) = set.representations[..i]
                .iter()
                .position(|o| o.id.as_ref() == Some(id))
            {
                // haslab tells levels apart by @bandwidth, so it can read such an MPD; a DASH
                // client that addresses Representations by id could not
                warnings.push(format!(
                    "Representations #{j} and #{i} have the same @id {id:?}: the DASH standard requires ids unique within a Period (ISO/IEC 23009-1, 5.3.5.2); haslab tells the levels apart by @bandwidth and reads both"
                ));
            }
        }
        let bw = r
            .bandwidth
            .ok_or_else(|| format!("{rn} has no @bandwidth"))?;
        if bw == 0 {
            return Err(format!("{rn}: @bandwidth must be greater than zero"));
        }
        if bw > crate::sim::units::MAX_RATE_BPS {
            return Err(format!(
                "{rn}: @bandwidth {bw} is above {} bit/s, the highest rate supported",
                crate::sim::units::MAX_RATE_BPS
            ));
        }
        if let Some((_, other, _)) = reps.iter().find(|(b, _, _)| *b == bw) {
            return Err(format!(
                "{other} and {rn} have the same @bandwidth ({bw}): the ladder must be strictly ascending"
            ));
        }
        reps.push((bw, rn, r));
    }
    reps.sort_by_key(|r| r.0);
    if reps.len() > 255 {
        return Err(format!(
            "{set_name} has {} Representations: at most 255 levels are supported",
            reps.len()
        ));
    }

    let mut durations: Option<(String, Vec<u64>)> = None;
    let mut sizes: Vec<Vec<u64>> = Vec::new();
    for (bw, rn, r) in &reps {
        let (d, s) = timing(period, set, r, rn, total_ns, opts)?;
        match &durations {
            None => durations = Some((rn.clone(), d)),
            Some((first, fd)) if fd.len() != d.len() => {
                return Err(format!(
                    "{first} has {} segments but {rn} has {}: all Representations must have the same segments",
                    fd.len(),
                    d.len()
                ))
            }
            _ => {}
        }
        match s {
            Some(s) => sizes.push(s),
            None => {
                let d = &durations.as_ref().expect("set above").1;
                sizes.push(d.iter().map(|&x| super::video::cbr_bytes(*bw, x)).collect());
            }
        }
    }
    let (_, durations) = durations.expect("at least one Representation");
    let mut video = Video::from_durations(
        name,
        reps.iter().map(|r| r.0).collect(),
        durations,
        Some(sizes),
    )
    .map_err(|e| format!("{set_name}: {e}"))?;
    video.warnings = warnings;
    Ok(video)
}

/// Attribute-wise inheritance of segment templates (lower level wins).
fn merge_template(
    hi: Option<&SegmentTemplate>,
    lo: Option<&SegmentTemplate>,
) -> Option<SegmentTemplate> {
    match (hi, lo) {
        (None, None) => None,
        (Some(h), None) => Some(h.clone()),
        (None, Some(l)) => Some(l.clone()),
        (Some(h), Some(l)) => {
            let mut m = l.clone();
            m.media = m.media.or_else(|| h.media.clone());
            m.startNumber = m.startNumber.or(h.startNumber);
            m.endNumber = m.endNumber.or(h.endNumber);
            m.duration = m.duration.or(h.duration);
            m.timescale = m.timescale.or(h.timescale);
            m.SegmentTimeline = m.SegmentTimeline.or_else(|| h.SegmentTimeline.clone());
            Some(m)
        }
    }
}

fn merge_list(hi: Option<&SegmentList>, lo: Option<&SegmentList>) -> Option<SegmentList> {
    match (hi, lo) {
        (None, None) => None,
        (Some(h), None) => Some(h.clone()),
        (None, Some(l)) => Some(l.clone()),
        (Some(h), Some(l)) => {
            let mut m = l.clone();
            m.duration = m.duration.or(h.duration);
            m.timescale = m.timescale.or(h.timescale);
            m.SegmentTimeline = m.SegmentTimeline.or_else(|| h.SegmentTimeline.clone());
            if m.segment_urls.is_empty() {
                m.segment_urls = h.segment_urls.clone();
            }
            Some(m)
        }
    }
}

fn base_of<'a>(
    p: &'a Period,
    a: &'a AdaptationSet,
    r: &'a Representation,
) -> Option<&'a SegmentBase> {
    r.SegmentBase
        .as_ref()
        .or(a.SegmentBase.as_ref())
        .or(p.SegmentBase.as_ref())
}

/// Per-segment durations (and sizes, when the MPD gives them) of one Representation.
#[allow(clippy::type_complexity)]
fn timing(
    p: &Period,
    a: &AdaptationSet,
    r: &Representation,
    rn: &str,
    total_ns: Option<u64>,
    opts: &MpdOptions,
) -> Result<(Vec<u64>, Option<Vec<u64>>), String> {
    let tpl = merge_template(
        merge_template(p.SegmentTemplate.as_ref(), a.SegmentTemplate.as_ref()).as_ref(),
        r.SegmentTemplate.as_ref(),
    );
    if let Some(t) = tpl {
        return template_timing(&t, rn, total_ns).map(|d| (d, None));
    }
    let list = merge_list(
        merge_list(p.SegmentList.as_ref(), a.SegmentList.as_ref()).as_ref(),
        r.SegmentList.as_ref(),
    );
    if let Some(l) = list {
        return list_timing(&l, rn, total_ns);
    }
    if base_of(p, a, r).is_some() || !r.BaseURL.is_empty() {
        let seg = opts.segment_ns.ok_or_else(|| {
            format!(
                "{rn} uses SegmentBase (one file whose segment index is inside the media, not in the MPD): \
                 give the video's `segment` duration to cut it into equal CBR segments"
            )
        })?;
        let total = total_ns.ok_or_else(|| {
            format!("{rn} uses SegmentBase but neither Period@duration nor MPD@mediaPresentationDuration gives its length")
        })?;
        let full = total / seg;
        let rest = total % seg;
        let n = full as usize + (rest > 0) as usize;
        check_count(n, rn)?;
        let mut d = vec![seg; full as usize];
        if rest > 0 {
            d.push(rest);
        }
        return Ok((d, None));
    }
    Err(format!(
        "{rn} has no segment information (SegmentTemplate, SegmentList or SegmentBase)"
    ))
}

fn check_count(n: usize, rn: &str) -> Result<(), String> {
    if n == 0 {
        return Err(format!("{rn} has no segments"));
    }
    if n > MAX_SEGMENTS {
        return Err(format!(
            "{rn} has {n} segments: at most {MAX_SEGMENTS} are supported"
        ));
    }
    Ok(())
}

fn timescale(ts: Option<u64>, what: &str, rn: &str) -> Result<u64, String> {
    match ts {
        Some(0) => Err(format!("{rn}: {what}@timescale must be greater than zero")),
        Some(t) => Ok(t),
        None => Ok(1),
    }
}

fn ticks_ns(ticks: u128, ts: u64) -> u64 {
    (ticks * 1_000_000_000 / ts as u128).min(u64::MAX as u128) as u64
}

/// Durations from a SegmentTimeline (`@r = -1` repeats up to `total_ns`).
fn timeline_durations(
    tl: &SegmentTimeline,
    ts: u64,
    what: &str,
    rn: &str,
    total_ns: Option<u64>,
) -> Result<Vec<u64>, String> {
    if tl.segments.is_empty() {
        return Err(format!("{rn}: the {what} SegmentTimeline has no S element"));
    }
    let mut out: Vec<u64> = Vec::new();
    // end of the previous S element's segments, in ticks
    let mut end_ticks: Option<u128> = None;
    for (i, s) in tl.segments.iter().enumerate() {
        if let (Some(t), Some(end)) = (s.t, end_ticks) {
            if (t as u128) < end {
                return Err(format!(
                    "{rn}: S element #{i} of the {what} SegmentTimeline has @t = {t}, before the end of the segments before it ({end}): times must not go backwards"
                ));
            }
        }
        if s.d == 0 {
            return Err(format!(
                "{rn}: S element #{i} of the {what} SegmentTimeline has @d = 0 (must be greater than zero)"
            ));
        }
        let d = ticks_ns(s.d as u128, ts).max(1);
        let r = s.r.unwrap_or(0);
        let count: u64 = if r >= 0 {
            r as u64 + 1
        } else if r == -1 {
            let total = total_ns.ok_or_else(|| {
                format!(
                    "{rn}: S element #{i} repeats until the end (@r = -1) but neither Period@duration nor MPD@mediaPresentationDuration is given"
                )
            })?;
            let so_far: u128 = out.iter().map(|&x| x as u128).sum();
            (total as u128).saturating_sub(so_far).div_ceil(d as u128) as u64
        } else {
            return Err(format!(
                "{rn}: S element #{i} of the {what} SegmentTimeline has @r = {r} (must be -1 or more)"
            ));
        };
        if out.len() as u64 + count > MAX_SEGMENTS as u64 {
            return Err(format!(
                "{rn}: the {what} SegmentTimeline has more than {MAX_SEGMENTS} segments"
            ));
        }
        out.extend(std::iter::repeat_n(d, count as usize));
        let start = s.t.map(u128::from).or(end_ticks).unwrap_or(0);
        end_ticks = Some(start + s.d as u128 * count as u128);
    }
    check_count(out.len(), rn)?;
    Ok(out)
}

fn template_timing(
    t: &SegmentTemplate,
    rn: &str,
    total_ns: Option<u64>,
) -> Result<Vec<u64>, String> {
    let media = t
        .media
        .as_deref()
        .ok_or_else(|| format!("{rn}: SegmentTemplate has no @media (the segment URL template)"))?;
    let by_number = media.contains("$Number");
    let by_time = media.contains("$Time");
    if !by_number && !by_time {
        return Err(format!(
            "{rn}: SegmentTemplate@media {media:?} contains neither $Number$ nor $Time$, so it does not address segments"
        ));
    }
    let ts = timescale(t.timescale, "SegmentTemplate", rn)?;
    if let Some(tl) = &t.SegmentTimeline {
        return timeline_durations(tl, ts, "SegmentTemplate", rn, total_ns);
    }
    if by_time {
        return Err(format!(
            "{rn}: SegmentTemplate@media uses $Time$ but there is no SegmentTimeline to give the times"
        ));
    }
    let dur = t.duration.ok_or_else(|| {
        format!("{rn}: SegmentTemplate has neither @duration nor a SegmentTimeline")
    })?;
    if !(dur.is_finite() && dur > 0.0) {
        return Err(format!(
            "{rn}: SegmentTemplate@duration = {dur} (must be greater than zero)"
        ));
    }
    let seg_ns = ((dur * 1e9 / ts as f64).round() as u64).max(1);
    let start = t.startNumber.unwrap_or(1);
    let n = match (t.endNumber, total_ns) {
        (Some(end), _) => {
            if end < start {
                return Err(format!(
                    "{rn}: SegmentTemplate@endNumber {end} is before @startNumber {start}"
                ));
            }
            let n = end - start;
            if n >= MAX_SEGMENTS as u64 {
                return Err(format!(
                    "{rn}: SegmentTemplate@startNumber {start} to @endNumber {end} is more than {MAX_SEGMENTS} segments, the most supported"
                ));
            }
            n as usize + 1
        }
        (None, Some(total)) => total.div_ceil(seg_ns) as usize,
        (None, None) => {
            return Err(format!(
                "{rn}: cannot count the segments: no @endNumber, and neither Period@duration nor MPD@mediaPresentationDuration is given"
            ))
        }
    };
    check_count(n, rn)?;
    let mut d = vec![seg_ns; n];
    if let (None, Some(total)) = (t.endNumber, total_ns) {
        let last = total - seg_ns * (n as u64 - 1);
        d[n - 1] = last.max(1);
    }
    Ok(d)
}

/// The length of a byte range "first-last" (inclusive).
fn parse_range(s: &str) -> Result<u64, String> {
    let form = || format!("@mediaRange {s:?}, expected \"first-last\" byte offsets");
    let (a, b) = s.trim().split_once('-').ok_or_else(form)?;
    let (a, b): (u64, u64) = match (a.trim().parse(), b.trim().parse()) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return Err(form()),
    };
    if b < a {
        return Err(format!("@mediaRange {s:?}, which ends before it starts"));
    }
    (b - a).checked_add(1).ok_or_else(|| {
        format!("@mediaRange {s:?}, which spans 2^64 bytes: more than a segment can have")
    })
}

#[allow(clippy::type_complexity)]
fn list_timing(
    l: &SegmentList,
    rn: &str,
    total_ns: Option<u64>,
) -> Result<(Vec<u64>, Option<Vec<u64>>), String> {
    if l.href.is_some() {
        return Err(format!(
            "{rn}: remote SegmentList (xlink:href) is not supported"
        ));
    }
    if l.segment_urls.is_empty() {
        return Err(format!("{rn}: SegmentList has no SegmentURL"));
    }
    let n = l.segment_urls.len();
    check_count(n, rn)?;
    let ts = timescale(l.timescale, "SegmentList", rn)?;
    let durations = if let Some(tl) = &l.SegmentTimeline {
        let d = timeline_durations(tl, ts, "SegmentList", rn, total_ns)?;
        if d.len() != n {
            return Err(format!(
                "{rn}: SegmentList has {n} SegmentURLs but its SegmentTimeline describes {} segments",
                d.len()
            ));
        }
        d
    } else {
        let dur = l.duration.ok_or_else(|| {
            format!("{rn}: SegmentList has neither @duration nor a SegmentTimeline")
        })?;
        if dur == 0 {
            return Err(format!(
                "{rn}: SegmentList@duration must be greater than zero"
            ));
        }
        let seg_ns = ticks_ns(dur as u128, ts).max(1);
        let mut d = vec![seg_ns; n];
        if let Some(total) = total_ns {
            let before = seg_ns as u128 * (n as u128 - 1);
            if (total as u128) > before && (total as u128) < before + seg_ns as u128 {
                d[n - 1] = (total as u128 - before) as u64;
            }
        }
        d
    };
    let ranged = l
        .segment_urls
        .iter()
        .filter(|u| u.mediaRange.is_some())
        .count();
    let sizes = if ranged == n {
        let mut s = Vec::with_capacity(n);
        for (i, u) in l.segment_urls.iter().enumerate() {
            let r = u.mediaRange.as_deref().unwrap_or_default();
            s.push(parse_range(r).map_err(|e| format!("{rn}: SegmentURL #{i} has {e}"))?);
        }
        Some(s)
    } else {
        for (i, u) in l.segment_urls.iter().enumerate() {
            if let Some(r) = u.mediaRange.as_deref() {
                parse_range(r).map_err(|e| format!("{rn}: SegmentURL #{i} has {e}"))?;
            }
        }
        None
    };
    Ok((durations, sizes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn mpd(body: &str, attrs: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" {attrs}>
  <Period>{body}</Period>
</MPD>"#
        )
    }

    #[test]
    fn segment_template_with_number_gives_the_ladder_and_the_count() {
        let x = mpd(
            r#"<AdaptationSet mimeType="video/mp4">
                 <SegmentTemplate media="s_$Number$.m4s" timescale="96" duration="192" startNumber="1"/>
                 <Representation id="b" bandwidth="2000000"/>
                 <Representation id="a" bandwidth="1000000"/>
               </AdaptationSet>"#,
            r#"mediaPresentationDuration="PT9S""#,
        );
        let v = load_str(&x, "t", &MpdOptions::default()).unwrap();
        assert_eq!(v.bitrates_bps, vec![1_000_000, 2_000_000]);
        assert_eq!(v.durations_ns, vec![2 * S, 2 * S, 2 * S, 2 * S, S]);
        assert_eq!(v.size(1, 0), 500_000);
    }

    #[test]
    fn segment_timeline_and_segment_list_ranges() {
        let x = mpd(
            r#"<AdaptationSet contentType="video">
                 <Representation id="a" bandwidth="1000">
                   <SegmentTemplate media="$Time$.m4s" timescale="1000">
                     <SegmentTimeline><S t="0" d="2000" r="2"/><S d="1000"/></SegmentTimeline>
                   </SegmentTemplate>
                 </Representation>
               </AdaptationSet>"#,
            "",
        );
        let v = load_str(&x, "t", &MpdOptions::default()).unwrap();
        assert_eq!(v.durations_ns, vec![2 * S, 2 * S, 2 * S, S]);

        let y = mpd(
            r#"<AdaptationSet mimeType="video/mp4">
                 <Representation id="a" bandwidth="1000">
                   <SegmentList duration="4" timescale="2">
                     <SegmentURL media="a.mp4" mediaRange="0-99"/>
                     <SegmentURL media="a.mp4" mediaRange="100-349"/>
                   </SegmentList>
                 </Representation>
               </AdaptationSet>"#,
            "",
        );
        let v = load_str(&y, "t", &MpdOptions::default()).unwrap();
        assert_eq!(v.durations_ns, vec![2 * S, 2 * S]);
        assert_eq!(v.sizes_bytes, vec![vec![100, 250]]);
    }

    #[test]
    fn segment_base_is_cut_into_the_given_segment_duration() {
        let x = mpd(
            r#"<AdaptationSet mimeType="video/mp4">
                 <Representation id="a" bandwidth="8000"><BaseURL>a.mp4</BaseURL>
                   <SegmentBase indexRange="0-100"/></Representation>
               </AdaptationSet>"#,
            r#"mediaPresentationDuration="PT5S""#,
        );
        let e = load_str(&x, "t", &MpdOptions::default()).unwrap_err();
        assert!(e.contains("SegmentBase"), "{e}");
        let v = load_str(
            &x,
            "t",
            &MpdOptions {
                segment_ns: Some(2 * S),
            },
        )
        .unwrap();
        assert_eq!(v.durations_ns, vec![2 * S, 2 * S, S]);
    }
}
