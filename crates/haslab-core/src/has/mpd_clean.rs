//! Leniency before an MPD reaches the typed parser ([`super::mpd`]): one pass over the XML
//! events (quick-xml) that keeps the document as it is except for what the simulator never
//! reads and real players ignore.
//!
//! - An attribute with an empty value (`startWithSAP=""`, `sampleRate=""`) is dropped: it
//!   says nothing (ISO/IEC 23009-1 gives no attribute a meaning for the empty string, and
//!   dash.js and Shaka skip what they cannot parse), so it is read as absent. Where the
//!   simulator needs the attribute (`@bandwidth`, `@media`, `@duration`, …) the usual
//!   "has no @…" error follows.
//! - An audio or text AdaptationSet (its own `@contentType` is `audio`/`text`, or its
//!   `@mimeType` is `audio/*`, `text/*` or `application/ttml+xml`) is kept with only the
//!   attributes that classify it (`@id`, `@contentType`, `@mimeType`, `@codecs`, `@lang`) and
//!   its Representations with the same; every other descendant is dropped. Nothing in such a
//!   set can then make the MPD fail.
//!
//! - An `xs:duration` attribute the simulator does not use (`MPD@minBufferTime`,
//!   `@timeShiftBufferDepth`, `Period@start`, …) that is malformed, negative or longer than
//!   10^15 s is dropped.
//!
//! Strict: malformed XML (with the byte where it stops), a root element other than `<MPD>`, a
//! DOCTYPE that declares entities (MPDs have no DTD; entity expansion is refused rather than
//! performed), and an `MPD@mediaPresentationDuration` or `Period@duration` that is not an
//! `xs:duration`, is negative or zero, or is longer than the longest run
//! ([`crate::sim::units::MAX_DURATION_NS`]) are errors naming the attribute and its value.

use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, Writer};

/// The cleaned document.
#[derive(Debug)]
pub struct Cleaned {
    pub xml: String,
    /// attributes dropped because their value was empty
    pub empty_attributes: usize,
    /// audio/text AdaptationSets reduced to their classifying attributes
    pub reduced_sets: usize,
}

/// `xs:duration` attributes: (element, attribute, used by the simulator).
const DURATIONS: [(&str, &str, bool); 9] = [
    ("MPD", "mediaPresentationDuration", true),
    ("MPD", "minimumUpdatePeriod", false),
    ("MPD", "minBufferTime", false),
    ("MPD", "timeShiftBufferDepth", false),
    ("MPD", "suggestedPresentationDelay", false),
    ("MPD", "maxSegmentDuration", false),
    ("MPD", "maxSubsegmentDuration", false),
    ("Period", "start", false),
    ("Period", "duration", true),
];
/// Longest unused duration handed to the parser (it multiplies without overflow checks).
const MAX_UNUSED_DURATION_NS: u128 = 1_000_000_000_000_000 * 1_000_000_000;

/// Shows at most 40 characters of an input value.
fn shown(v: &str) -> String {
    if v.chars().count() > 40 {
        format!("{:?}…", v.chars().take(40).collect::<String>())
    } else {
        format!("{v:?}")
    }
}

/// Whether an `xs:duration` attribute is kept: an error for a bad one the simulator uses.
fn check_duration(elem: &str, key: &str, value: &str) -> Result<bool, String> {
    let Some(&(_, _, used)) = DURATIONS.iter().find(|(e, k, _)| *e == elem && *k == key) else {
        return Ok(true);
    };
    let parsed = super::xs_duration::parse_ns(value);
    if !used {
        return Ok(matches!(parsed, Ok(Some(ns)) if ns <= MAX_UNUSED_DURATION_NS));
    }
    let max = crate::sim::units::MAX_DURATION_NS;
    let what = format!("{elem}@{key} {}", shown(value));
    match parsed {
        Err(e) => Err(format!(
            "{what} is not an xs:duration such as PT10M30S: {e}"
        )),
        Ok(None) => Err(format!(
            "{what} is negative: a length must be greater than zero"
        )),
        Ok(Some(0)) => Err(format!(
            "{what} is zero: a length must be greater than zero"
        )),
        Ok(Some(ns)) if ns > max as u128 => Err(format!(
            "{what} is {} s: at most {} s ({} days) are supported",
            ns / 1_000_000_000,
            max / 1_000_000_000,
            max / 86_400_000_000_000
        )),
        Ok(Some(_)) => Ok(true),
    }
}

const KEEP_IN_UNUSED: [&str; 5] = ["id", "contentType", "mimeType", "codecs", "lang"];

fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

fn attr_value(e: &BytesStart, key: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| local(a.key.as_ref()) == key)
        .map(|a| a.value.into_owned())
}

/// Whether an AdaptationSet's own attributes mark it as audio or text.
fn unused_set(e: &BytesStart) -> bool {
    let ct = attr_value(e, "contentType").unwrap_or_default();
    let mime = attr_value(e, "mimeType").unwrap_or_default();
    ct == "audio"
        || ct == "text"
        || mime.starts_with("audio/")
        || mime.starts_with("text/")
        || mime == "application/ttml+xml"
}

/// A copy of `e` with the attributes `keep` accepts (and non-empty values).
fn filtered(
    e: &BytesStart,
    keep: impl Fn(&str) -> bool,
    empty: &mut usize,
) -> Result<BytesStart<'static>, String> {
    let mut out = BytesStart::new(e.name().as_ref().to_string());
    let elem = local(e.name().as_ref()).to_string();
    for a in e.attributes() {
        let a = a.map_err(|err| format!("not a valid MPD: malformed attribute: {err}"))?;
        if a.value.trim().is_empty() {
            *empty += 1;
            continue;
        }
        let key = local(a.key.as_ref());
        if keep(key) && check_duration(&elem, key, &a.value)? {
            out.push_attribute(a);
        }
    }
    Ok(out)
}

/// Cleans `xml` as the module describes.
pub fn clean(xml: &str) -> Result<Cleaned, String> {
    let mut reader = Reader::from_str(xml);
    let mut writer = Writer::new(Vec::with_capacity(xml.len()));
    let mut root_seen = false;
    let mut depth = 0usize;
    // depth of the audio/text AdaptationSet being reduced
    let mut unused_at: Option<usize> = None;
    // depth of an element being dropped with its subtree
    let mut skip_at: Option<usize> = None;
    let mut empty = 0usize;
    let mut reduced = 0usize;
    let write = |w: &mut Writer<Vec<u8>>, ev: Event| {
        w.write_event(ev)
            .map_err(|e| format!("cannot rewrite the MPD: {e}"))
    };
    loop {
        let pos = reader.buffer_position();
        let ev = reader.read_event().map_err(|e| {
            format!(
                "not a valid MPD: malformed XML at byte {}: {e}",
                reader.error_position().max(pos)
            )
        })?;
        match ev {
            Event::Eof => break,
            Event::DocType(t) => {
                if t.contains("<!ENTITY") {
                    return Err(
                        "the MPD declares entities in its DOCTYPE (<!ENTITY …>): not supported \
                                (an MPD has no DTD; entities are not expanded)"
                            .into(),
                    );
                }
            }
            Event::Start(ref e) | Event::Empty(ref e) => {
                let is_start = matches!(ev, Event::Start(_));
                if !root_seen {
                    root_seen = true;
                    let name = local(e.name().as_ref()).to_string();
                    if name != "MPD" {
                        return Err(format!(
                            "not an MPD: the root element is <{name}>, expected <MPD>"
                        ));
                    }
                }
                let d = depth + 1;
                if is_start {
                    depth = d;
                }
                if skip_at.is_some() {
                    continue;
                }
                let name = local(e.name().as_ref()).to_string();
                let out = match unused_at {
                    Some(u) if d == u + 1 && name == "Representation" => {
                        filtered(e, |k| KEEP_IN_UNUSED.contains(&k), &mut empty)?
                    }
                    Some(_) => {
                        if is_start {
                            skip_at = Some(d);
                        }
                        continue;
                    }
                    None if name == "AdaptationSet" && unused_set(e) => {
                        reduced += 1;
                        if is_start {
                            unused_at = Some(d);
                        }
                        filtered(e, |k| KEEP_IN_UNUSED.contains(&k), &mut empty)?
                    }
                    None => filtered(e, |_| true, &mut empty)?,
                };
                write(
                    &mut writer,
                    if is_start {
                        Event::Start(out)
                    } else {
                        Event::Empty(out)
                    },
                )?;
            }
            Event::End(e) => {
                let d = depth;
                depth = depth.saturating_sub(1);
                if let Some(s) = skip_at {
                    if d == s {
                        skip_at = None;
                    }
                    continue;
                }
                if unused_at == Some(d) {
                    unused_at = None;
                }
                write(&mut writer, Event::End(e))?;
            }
            other => {
                if skip_at.is_some() || unused_at.is_some() {
                    continue;
                }
                write(&mut writer, other)?;
            }
        }
    }
    if !root_seen {
        return Err("not an MPD: no XML root element found".into());
    }
    let xml = String::from_utf8(writer.into_inner())
        .map_err(|_| "not a valid MPD: the rewritten document is not UTF-8".to_string())?;
    Ok(Cleaned {
        xml,
        empty_attributes: empty,
        reduced_sets: reduced,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_attributes_and_audio_sets_are_dropped_and_the_rest_kept() {
        let x = r#"<?xml version="1.0"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" minBufferTime="">
 <Period><AdaptationSet mimeType="video/mp4" startWithSAP="">
   <Representation id="v" bandwidth="1000"/></AdaptationSet>
  <AdaptationSet contentType="audio" lang="en" startWithSAP="1" sampleRate="x">
   <AudioChannelConfiguration value=""/>
   <Representation id="a" bandwidth="" audioSamplingRate="bad"><BaseURL>a.mp4</BaseURL></Representation>
  </AdaptationSet></Period></MPD>"#;
        let c = clean(x).unwrap();
        assert_eq!((c.empty_attributes, c.reduced_sets), (3, 1), "{}", c.xml);
        assert!(
            c.xml
                .contains(r#"<AdaptationSet contentType="audio" lang="en">"#),
            "{}",
            c.xml
        );
        assert!(c.xml.contains(r#"<Representation id="a">"#), "{}", c.xml);
        assert!(!c.xml.contains("AudioChannelConfiguration") && !c.xml.contains("a.mp4"));
        assert!(c.xml.contains(r#"<AdaptationSet mimeType="video/mp4">"#));
        assert!(c
            .xml
            .contains(r#"<Representation id="v" bandwidth="1000"/>"#));
    }

    #[test]
    fn roots_doctypes_and_broken_xml_have_their_own_messages() {
        let e = clean("<html><body/></html>").unwrap_err();
        assert_eq!(e, "not an MPD: the root element is <html>, expected <MPD>");
        assert_eq!(clean("<dash:MPD xmlns:dash='x'/>").unwrap().reduced_sets, 0);
        let e = clean("<?xml version='1.0'?><!-- only -->").unwrap_err();
        assert_eq!(e, "not an MPD: no XML root element found");
        let e = clean(r#"<!DOCTYPE MPD [<!ENTITY a "aaaa">]><MPD>&a;</MPD>"#).unwrap_err();
        assert!(e.contains("declares entities"), "{e}");
        assert!(clean("<!DOCTYPE MPD><MPD/>").is_ok());
        let e = clean("<MPD><Period></MPD>").unwrap_err();
        assert!(
            e.starts_with("not a valid MPD: malformed XML at byte"),
            "{e}"
        );
    }
}
