//! `2026-12-07T15:43:19.167Z` (the transcript's times) as Unix nanoseconds.

/// An RFC 3339 UTC time with a `Z` (fractions of a second to the nanosecond), or None.
pub fn unix_ns(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut date = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (date.next()??, date.next()??, date.next()??);
    let (hms, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut hms = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (h, min, s) = (hms.next()??, hms.next()??, hms.next()??);
    let digits: String = fraction.chars().take(9).collect();
    let nanos = if digits.is_empty() {
        0
    } else {
        digits.parse::<i64>().ok()? * 10i64.pow(9 - digits.len() as u32)
    };
    let seconds = days_from_civil(y, m, d) * 86_400 + h * 3600 + min * 60 + s;
    Some(seconds * 1_000_000_000 + nanos)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
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
        assert_eq!(unix_ns("2026-12-07 15:43:19"), None);
        assert_eq!(unix_ns("garbage"), None);
    }
}
