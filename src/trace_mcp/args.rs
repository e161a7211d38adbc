//! Reading a tool call's arguments: known names only, typed values, and times given as RFC 3339
//! or as a span back from now (`-1h`). Every problem is a sentence the model can act on.

use serde_json::{Map, Value};

/// A tool's arguments, checked against the names it takes.
pub struct Args<'a> {
    tool: &'static str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// The arguments, or a message naming an argument the tool does not take.
    pub fn new(
        tool: &'static str,
        map: &'a Map<String, Value>,
        takes: &[&str],
    ) -> Result<Self, String> {
        if let Some(unknown) = map.keys().find(|key| !takes.contains(&key.as_str())) {
            let takes = if takes.is_empty() {
                "no arguments".to_owned()
            } else {
                format!("only {}", takes.join(", "))
            };
            return Err(format!(
                "Unknown argument ({unknown}): {tool} takes {takes}"
            ));
        }
        Ok(Args { tool, map })
    }

    fn present(&self, name: &str) -> Option<&'a Value> {
        self.map.get(name).filter(|value| !value.is_null())
    }

    /// An optional string argument (blank counts as absent).
    pub fn text(&self, name: &str) -> Result<Option<&'a str>, String> {
        match self.present(name) {
            None => Ok(None),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.trim())),
            Some(other) => Err(format!(
                "Argument {name} of {} must be a string, not {other}",
                self.tool
            )),
        }
    }

    /// A required string argument.
    pub fn required_text(&self, name: &str) -> Result<&'a str, String> {
        self.text(name)?
            .ok_or_else(|| format!("Argument ({name}) is required by {}", self.tool))
    }

    /// An optional whole number in `min..=max` (numbers written as strings are accepted).
    pub fn number(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, String> {
        let value = match self.present(name) {
            None => return Ok(None),
            Some(Value::Number(number)) => number.as_u64(),
            Some(Value::String(text)) => text.trim().parse::<u64>().ok(),
            Some(_) => None,
        };
        match value {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(format!(
                "Argument {name} of {} must be a whole number from {min} to {max}",
                self.tool
            )),
        }
    }

    /// An optional point in time: RFC 3339 (`2026-11-30T12:00:00Z`) or back from `now_ns`
    /// (`-1h`, `-30m`, `-2d`, `-90s`), as Unix nanoseconds.
    pub fn since(&self, name: &str, now_ns: i64) -> Result<Option<i64>, String> {
        let Some(text) = self.text(name)? else {
            return Ok(None);
        };
        parse_since(text, now_ns).map(Some).ok_or_else(|| {
            if out_of_range_year(text) {
                return format!(
                    "Argument {name} of {}: `{text}` is outside the times tracer records \
                     (from 1677 to April 2262)",
                    self.tool
                );
            }
            format!(
                "Argument {name} of {} must be an RFC 3339 time such as 2026-11-30T12:00:00Z, \
                 or a span back from now such as -1h, -30m or -2d; `{text}` is neither",
                self.tool
            )
        })
    }
}

/// Whether `text` starts as a date (`YYYY-`) whose year lies beyond Unix nanoseconds in an i64.
fn out_of_range_year(text: &str) -> bool {
    let text = text.trim();
    text.get(4..5) == Some("-")
        && text
            .get(..4)
            .and_then(|year| year.parse::<i64>().ok())
            .is_some_and(|year| !(1678..=2261).contains(&year))
}

/// A time as RFC 3339 or a span back from now, in Unix nanoseconds.
pub fn parse_since(text: &str, now_ns: i64) -> Option<i64> {
    let text = text.trim();
    let span = text.strip_prefix('-').unwrap_or(text);
    let unit_seconds = |unit: char| match unit {
        's' => Some(1.0),
        'm' => Some(60.0),
        'h' => Some(3600.0),
        'd' => Some(86_400.0),
        'w' => Some(604_800.0),
        _ => None,
    };
    if let Some(seconds) = span.chars().last().and_then(unit_seconds)
        && let Ok(amount) = span[..span.len() - 1].trim().parse::<f64>()
    {
        if !(amount.is_finite() && amount >= 0.0) {
            return None;
        }
        let back = amount * seconds * 1e9;
        // Further back than an i64 of nanoseconds reaches (year 1677) is no time at all.
        if back >= i64::MAX as f64 {
            return None;
        }
        return now_ns.checked_sub(back as i64);
    }
    tracer_wire::rfc3339::unix_ns(text)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_parse_as_rfc3339_or_spans() {
        let now = 1_800_000_000_000_000_000;
        assert_eq!(parse_since("-1h", now), Some(now - 3_600_000_000_000));
        assert_eq!(parse_since("30m", now), Some(now - 1_800_000_000_000));
        assert_eq!(
            parse_since("1970-01-01T00:00:01Z", now),
            Some(1_000_000_000)
        );
        assert_eq!(
            parse_since("1970-01-01T01:00:00.5+01:00", now),
            Some(500_000_000)
        );
        assert_eq!(
            parse_since("2000-03-01", now),
            Some(951_868_800_000_000_000)
        );
        assert_eq!(parse_since("yesterday", now), None);
        assert_eq!(parse_since("2026-13-01T00:00:00Z", now), None);
    }

    #[test]
    fn a_date_past_2262_is_said_to_be_out_of_range_not_malformed() {
        assert!(out_of_range_year("2300-01-01T00:00:00Z"));
        assert!(out_of_range_year("9999-12-31T23:59:59Z"));
        assert!(!out_of_range_year("2026-11-30T12:00:00Z"));
        assert!(!out_of_range_year("-1h"));
    }

    #[test]
    fn impossible_dates_and_times_past_2262_are_refused() {
        let now = 1_800_000_000_000_000_000;
        for text in [
            "2026-02-30",
            "2026-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "1900-02-29",
            "2026-06-01T25:00:00Z",
            "2026-06-01T12:00:00+24:00",
            "2262-04-12T00:00:00Z",
            "3000-01-01T00:00:00Z",
            "99999999999-01-01",
            "1600-01-01",
            "-1000000w",
            "-1e300d",
        ] {
            assert_eq!(parse_since(text, now), None, "{text}");
        }
        assert_eq!(
            parse_since("2024-02-29", now),
            Some(1_709_164_800_000_000_000)
        );
        assert_eq!(
            parse_since("2262-04-11T00:00:00Z", now),
            Some(9_223_286_400_000_000_000)
        );
    }

    #[test]
    fn arguments_are_checked_by_name_and_type() {
        let map = json!({"limit": 5, "text": "milk"});
        let map = map.as_object().unwrap();
        let args = Args::new("list_traces", map, &["limit", "text"]).unwrap();
        assert_eq!(args.number("limit", 1, 100).unwrap(), Some(5));
        assert_eq!(args.text("text").unwrap(), Some("milk"));
        assert!(
            args.required_text("id")
                .unwrap_err()
                .contains("(id) is required")
        );
        let error = Args::new("get_trace", map, &["id"]).err().unwrap();
        assert_eq!(error, "Unknown argument (limit): get_trace takes only id");
        let bad = json!({"limit": 0});
        let bad = Args::new("x", bad.as_object().unwrap(), &["limit"]).unwrap();
        assert!(bad.number("limit", 1, 100).is_err());
    }
}
