//! XML Schema durations (`xs:duration`, W3C XML Schema Part 2 §3.2.6), as MPDs use them
//! (`@mediaPresentationDuration`, `Period@duration`, …): `[-]P[nY][nM][nW][nD][T[nH][nM][n[.f]S]]`
//! with at least one component. Years count 365 days and months 30 days, as the `dash-mpd-core`
//! crate does. Every step is checked, so no value can overflow.

/// The value in nanoseconds (None when negative), or a message saying what is wrong.
pub fn parse_ns(text: &str) -> Result<Option<u128>, String> {
    let s = text.trim();
    let (negative, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let rest = s
        .strip_prefix('P')
        .ok_or("an xs:duration starts with P (e.g. PT10S)")?;
    const DAY: u128 = 86_400;
    let date_units: [(char, u128); 4] = [
        ('Y', 365 * DAY),
        ('M', 30 * DAY),
        ('W', 7 * DAY),
        ('D', DAY),
    ];
    let time_units: [(char, u128); 3] = [('H', 3600), ('M', 60), ('S', 1)];
    let mut total_ns: u128 = 0;
    let mut any = false;
    let too_long = || "too long (more than 10^20 s)".to_string();
    let mut take = |part: &mut &str, units: &[(char, u128)]| -> Result<(), String> {
        let mut next_unit = 0;
        while !part.is_empty() {
            let end = part
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .ok_or("a number without its unit letter")?;
            let (num, tail) = part.split_at(end);
            let unit = tail.chars().next().expect("found above");
            let idx = units[next_unit..]
                .iter()
                .position(|(u, _)| *u == unit)
                .map(|i| i + next_unit)
                .ok_or(format!(
                    "unexpected {unit:?} (components go Y M W D T H M S)"
                ))?;
            next_unit = idx + 1;
            let (whole, frac) = match num.split_once('.') {
                Some((w, f)) if units[idx].0 == 'S' => (w, f),
                Some(_) => return Err("only seconds may have a fraction".into()),
                None => (num, ""),
            };
            if whole.is_empty() || whole.len() > 20 || !frac.chars().all(|c| c.is_ascii_digit()) {
                return Err(if whole.len() > 20 {
                    too_long()
                } else {
                    format!("{num:?} is not a number")
                });
            }
            let w: u128 = whole
                .parse()
                .map_err(|_| format!("{num:?} is not a number"))?;
            let mut ns = w
                .checked_mul(units[idx].1 * 1_000_000_000)
                .ok_or_else(too_long)?;
            if !frac.is_empty() {
                let digits: String = frac.chars().take(9).collect();
                let f: u128 = format!("{digits:0<9}").parse().expect("nine digits");
                ns += f;
            }
            total_ns = total_ns.checked_add(ns).ok_or_else(too_long)?;
            any = true;
            *part = &tail[1..];
        }
        Ok(())
    };
    let (mut date, mut time) = match rest.split_once('T') {
        Some((d, t)) => {
            if t.is_empty() {
                return Err("a T with no time after it".into());
            }
            (d, t)
        }
        None => (rest, ""),
    };
    take(&mut date, &date_units)?;
    take(&mut time, &time_units)?;
    if !any {
        return Err("no component (e.g. PT10S)".into());
    }
    if total_ns > 100_000_000_000_000_000_000_000_000_000 {
        return Err(too_long());
    }
    Ok(if negative && total_ns > 0 {
        None
    } else {
        Some(total_ns)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u128 = 1_000_000_000;

    #[test]
    fn durations_parse_to_nanoseconds() {
        assert_eq!(parse_ns("PT10S"), Ok(Some(10 * S)));
        assert_eq!(parse_ns("PT9M56.46S"), Ok(Some(596_460_000_000)));
        assert_eq!(parse_ns("P1DT1H"), Ok(Some(90_000 * S)));
        assert_eq!(parse_ns("P1Y"), Ok(Some(365 * 86_400 * S)));
        assert_eq!(parse_ns("PT0S"), Ok(Some(0)));
        assert_eq!(parse_ns("-PT0S"), Ok(Some(0)));
        assert_eq!(parse_ns("-PT10S"), Ok(None));
        assert_eq!(parse_ns("PT0.0000000001S"), Ok(Some(0)));
    }

    #[test]
    fn malformed_and_huge_durations_say_why() {
        for (t, want) in [
            ("10s", "starts with P"),
            ("P", "no component"),
            ("PT", "a T with no time"),
            ("PT1e308S", "unexpected 'e'"),
            ("PT10", "without its unit"),
            ("P1S", "unexpected 'S'"),
            ("PT1S2M", "unexpected 'M'"),
            ("P1.5Y", "only seconds"),
            ("PT1..5S", "is not a number"),
            ("P99999999999999999999999Y", "too long"),
            ("P99999999999999999999Y", "too long"),
        ] {
            let e = parse_ns(t).unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        }
    }
}
