//! Calendar dates of recorded times (UTC), and the rule every listing shares: a time is shown
//! with its date when the times listed fall on more than one day, or on a day that is not today.

/// Nanoseconds in a day.
const DAY_NS: i64 = 86_400_000_000_000;

/// The UTC day number (days since 1970-01-01) of a Unix-nanosecond time.
pub(crate) fn day_of(unix_ns: i64) -> i64 {
    unix_ns.div_euclid(DAY_NS)
}

/// `2026-11-30` (UTC) of a Unix-nanosecond time.
pub fn utc_date(unix_ns: i64) -> String {
    // Howard Hinnant's civil-from-days.
    let z = day_of(unix_ns) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Whether times listed together need their dates: they fall on more than one day, or (when
/// `today_ns` is given) on a day other than today's.
pub fn needs_dates(times: impl IntoIterator<Item = i64>, today_ns: Option<i64>) -> bool {
    let mut days = times.into_iter().map(day_of);
    let Some(first) = days.next() else {
        return false;
    };
    today_ns.is_some_and(|now| day_of(now) != first) || days.any(|day| day != first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_when_they_are_needed() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(1_709_164_800_000_000_000), "2024-02-29");
        assert_eq!(utc_date(-1), "1969-12-31");
        let noon = 1_709_208_000_000_000_000;
        assert!(!needs_dates([noon, noon + 3_600_000_000_000], None));
        assert!(needs_dates([noon, noon + DAY_NS], None));
        assert!(!needs_dates([noon], Some(noon + 1)));
        assert!(needs_dates([noon], Some(noon + DAY_NS)));
        assert!(!needs_dates([], Some(noon)));
    }
}
