//! RFC 3339 times (`2026-12-07T15:43:19.167Z`, `…+02:00`, or a bare date) as Unix nanoseconds:
//! what `tracer mcp`'s `since` and Claude Code's transcripts write. Pure.

/// `YYYY-MM-DD[Tt ]HH:MM:SS[.frac](Z|±HH:MM)`, or a bare date (midnight UTC), in Unix ns.
pub fn unix_ns(text: &str) -> Option<i64> {
    let (date, rest) = match text.find(['T', 't', ' ']) {
        Some(at) => (&text[..at], &text[at + 1..]),
        None => (text, "00:00:00Z"),
    };
    let mut parts = date.split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    if parts.next().is_some()
        || !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
    {
        return None;
    }
    let (clock, offset_seconds) = if let Some(clock) = rest.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else {
        let at = rest.rfind(['+', '-'])?;
        let (clock, offset) = rest.split_at(at);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = offset[1..].split_once(':')?;
        let hours: i64 = hours.parse().ok()?;
        let minutes: i64 = minutes.parse().ok()?;
        if hours > 23 || minutes > 59 {
            return None;
        }
        (clock, sign * (hours * 3600 + minutes * 60))
    };
    let (whole, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut hms = whole.split(':');
    let hour: i64 = hms.next()?.parse().ok()?;
    let minute: i64 = hms.next()?.parse().ok()?;
    let second: i64 = hms.next()?.parse().ok()?;
    if hms.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let nanos: i64 = if fraction.is_empty() {
        0
    } else if fraction.bytes().all(|b| b.is_ascii_digit()) {
        let digits: String = fraction
            .chars()
            .chain("000000000".chars())
            .take(9)
            .collect();
        digits.parse().ok()?
    } else {
        return None;
    };
    // Years far out of range would overflow the day count itself.
    if !(1..=9999).contains(&year) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds;
    // Unix nanoseconds in an i64 end in April 2262 (and begin in 1677): beyond, no time.
    seconds
        .checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(nanos))
}

/// How many days a month of a year has (the Gregorian leap rule).
fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_times_read_to_the_nanosecond() {
        assert_eq!(unix_ns("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            unix_ns("2026-12-07T15:43:19.167Z"),
            Some(1_796_658_199_167_000_000)
        );
        assert_eq!(
            unix_ns("2000-02-29T00:00:01.5Z"),
            Some(951_782_401_500_000_000)
        );
        assert_eq!(
            unix_ns("2026-12-07T17:43:19+02:00"),
            Some(1_796_658_199_000_000_000)
        );
        assert_eq!(unix_ns("2026-02-30T00:00:00Z"), None);
        assert_eq!(unix_ns("garbage"), None);
    }
}
