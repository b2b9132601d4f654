//! DASH MPDs: a DASH-dataset-style MPD (SegmentTemplate, 20 Representations) loads with the
//! right ladder and timing and plays; every malformed MPD in `tests/bad_mpds/` is refused with
//! its own clear error. Each bad file starts with `<!-- expect: <substring> -->` (after an
//! optional XML declaration).

use haslab_core::has::mpd::{load_file, MpdOptions};
use haslab_core::scenario::plan_from_toml_in;
use haslab_core::{run_plan, RunOptions};
use std::collections::HashMap;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_dash_dataset_style_mpd_loads_and_plays() {
    let path = root().join("../../examples/bbb_2s.mpd");
    let v = load_file(&path, &MpdOptions::default()).unwrap();
    assert_eq!(v.levels(), 20);
    assert_eq!(v.bitrates_bps[0], 45_652);
    assert_eq!(*v.bitrates_bps.last().unwrap(), 4_219_897);
    assert!(v.bitrates_bps.windows(2).all(|w| w[0] < w[1]));
    // 596.46 s in 2 s segments (timescale 96, duration 192): 298 full ones and 0.46 s
    assert_eq!(v.segments(), 299);
    assert_eq!(v.segment_ns(), 2_000_000_000);
    assert_eq!(*v.durations_ns.last().unwrap(), 460_000_000);
    assert_eq!(v.total_ns(), 596_460_000_000);

    // played by a scenario that names it relative to its own folder
    let text = r#"
duration = "40s"
[dumbbell]
pairs = 1
bottleneck_rate = "20Mbps"
bottleneck_delay = "20ms"
[[player]]
client = "right0"
server = "left0"
abr = "bola"
video = { mpd = "bbb_2s.mpd" }
"#;
    let plan = plan_from_toml_in(text, Some(&root().join("../../examples"))).unwrap();
    let r = run_plan(&plan, &RunOptions::default()).unwrap();
    let p = &r.players[0];
    assert!(p.segments >= 15, "{} segments", p.segments);
    assert_eq!(p.stalls, 0);
    assert!(p.avg_bitrate_bps > 1e6, "{}", p.avg_bitrate_bps);
    assert_eq!(p.video, plan.players[0].video.name);
}

#[test]
fn every_malformed_mpd_gets_its_own_clear_error() {
    let dir = root().join("tests/bad_mpds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "mpd"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "only {} malformed MPDs", files.len());
    let mut failures = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let expect = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("<!-- expect:"))
            .map(|l| l.trim_end_matches("-->").trim().to_string());
        let Some(expect) = expect else {
            failures.push(format!("{name}: no expect comment"));
            continue;
        };
        match load_file(path, &MpdOptions::default()) {
            Ok(v) => failures.push(format!("{name}: accepted ({} segments)", v.segments())),
            Err(e) => {
                println!("{name}: {e}");
                if !e.contains(&expect) {
                    failures.push(format!("{name}: error {e:?} lacks {expect:?}"));
                }
                if let Some(other) = seen.insert(e.clone(), name.clone()) {
                    failures.push(format!("{name}: same error as {other}: {e}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An MPD as packagers write them: an audio AdaptationSet with empty attributes
/// (`startWithSAP=""`, `sampleRate=""`) and values the typed parser cannot read, attributes
/// nobody needs left empty, a subtitle set, a DOCTYPE without entities. The simulator uses
/// only the video set, so it loads (the DASH spec gives an empty value no meaning, and dash.js
/// and Shaka skip what they do not use); an empty attribute the simulator needs is still an
/// error naming it.
#[test]
fn empty_and_unused_attributes_outside_the_video_set_are_ignored() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE MPD>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" profiles="" minBufferTime="not a duration"
     mediaPresentationDuration="PT6S">
  <Period id="" start="PT0S">
    <AdaptationSet mimeType="video/mp4" segmentAlignment="true" startWithSAP="" par="">
      <SegmentTemplate media="v_$Number$.m4s" timescale="1000" duration="2000" startNumber="1"/>
      <Representation id="v1" bandwidth="1000000" width="" height="720"/>
      <Representation id="v0" bandwidth="500000" codecs=""/>
    </AdaptationSet>
    <AdaptationSet mimeType="audio/mp4" lang="en" startWithSAP="" sampleRate="">
      <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value=""/>
      <SegmentTemplate media="a_$Number$.m4s" timescale="" duration="oops"/>
      <Representation id="a" bandwidth="" audioSamplingRate="48kHz"/>
    </AdaptationSet>
    <AdaptationSet contentType="text" mimeType="text/vtt" lang="fr">
      <Representation id="t" bandwidth="x"><BaseURL>fr.vtt</BaseURL></Representation>
    </AdaptationSet>
  </Period>
</MPD>"#;
    let v = haslab_core::has::mpd::load_str(xml, "t", &MpdOptions::default()).unwrap();
    assert_eq!(v.bitrates_bps, vec![500_000, 1_000_000]);
    assert_eq!(v.durations_ns, vec![2_000_000_000; 3]);

    let needed = xml.replace(r#"bandwidth="500000""#, r#"bandwidth="""#);
    let e = haslab_core::has::mpd::load_str(&needed, "t", &MpdOptions::default()).unwrap_err();
    assert_eq!(e, "Representation \"v0\" has no @bandwidth");
    let bad = xml.replace(r#"bandwidth="500000""#, r#"bandwidth="500k""#);
    let e = haslab_core::has::mpd::load_str(&bad, "t", &MpdOptions::default()).unwrap_err();
    assert!(
        e.starts_with("not a valid MPD:") && e.contains("bandwidth"),
        "{e}"
    );
}

/// Two Representations with the same @id break ISO/IEC 23009-1 (5.3.5.2: unique within a
/// Period), but haslab tells levels apart by @bandwidth: the MPD loads with both levels and a
/// warning that names the rule, and a run reports it in its warnings, naming the field.
#[test]
fn duplicate_representation_ids_load_with_a_warning() {
    let xml = r#"<?xml version="1.0"?>
<MPD type="static" mediaPresentationDuration="PT4S"><Period><AdaptationSet mimeType="video/mp4">
<SegmentTemplate media="$Number$.m4s" duration="2"/>
<Representation id="a" bandwidth="1000"/><Representation id="a" bandwidth="2000"/>
</AdaptationSet></Period></MPD>"#;
    let dir = std::env::temp_dir().join(format!("haslab-dup-ids-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("dup.mpd"), xml).unwrap();
    let v = load_file(&dir.join("dup.mpd"), &MpdOptions::default()).unwrap();
    assert_eq!(v.bitrates_bps, [1000, 2000]);
    assert_eq!(v.warnings.len(), 1);
    assert!(v.warnings[0].contains("Representations #0 and #1 have the same @id \"a\""));
    assert!(v.warnings[0].contains("ISO/IEC 23009-1, 5.3.5.2"));
    let text = r#"
duration = "5s"
[dumbbell]
pairs = 2
bottleneck_rate = "10Mbps"
[[player]]
name = "p{i}"
count = 2
client = "right{i}"
server = "left{i}"
abr = "bba"
video = { mpd = "dup.mpd" }
"#;
    let plan = plan_from_toml_in(text, Some(&dir)).unwrap();
    let r = run_plan(&plan, &RunOptions::default()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    // one warning, although two players play the video
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].starts_with("player[0].video.mpd: dup.mpd: Representations #0 and #1"));
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["warnings"][0], serde_json::json!(r.warnings[0]));
    assert_eq!(r.players.len(), 2);
}
