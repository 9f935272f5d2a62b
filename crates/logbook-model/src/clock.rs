//! The one place the library reads the clock, so tests can fix "now"
//! (`LOGBOOK_NOW`), and the one timestamp format it writes.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The instant of every time Logbook records (jiff's), for the faces.
pub use jiff::Timestamp;
use jiff::tz::TimeZone;

/// Environment variable that, when set to an RFC 3339 timestamp, replaces the
/// system clock. Display names depend on "now", so tests need to pin it.
pub const NOW_ENV: &str = "LOGBOOK_NOW";

/// Where "now" comes from: the system clock, or an instant fixed by a test
/// or by `LOGBOOK_NOW`. It is the only reader of the system's time in
/// Logbook (wall-clock time; `Instant` measures how long a call took), so a
/// test that needs a file to age moves the clock instead of sleeping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Clock {
    fixed: Option<Timestamp>,
}

impl Clock {
    /// The system clock.
    pub const SYSTEM: Clock = Clock { fixed: None };

    /// A clock that always answers `at`.
    pub fn fixed(at: Timestamp) -> Clock {
        Clock { fixed: Some(at) }
    }

    /// `LOGBOOK_NOW` when it is set to a valid timestamp, else the system
    /// clock: what every process starts with.
    pub fn from_env() -> Clock {
        Clock {
            fixed: std::env::var(NOW_ENV).ok().and_then(|s| parse(&s)),
        }
    }

    /// The current instant.
    pub fn now(&self) -> Timestamp {
        self.fixed.unwrap_or_else(Timestamp::now)
    }

    /// The current instant in the wire format every file uses.
    pub fn now_string(&self) -> String {
        format(self.now())
    }

    /// The current instant as the OS's time, for comparing with a file's
    /// modification time.
    pub fn system_time(&self) -> std::time::SystemTime {
        let now = self.now();
        let since = Duration::new(
            u64::try_from(now.as_second()).unwrap_or(0),
            u32::try_from(now.subsec_nanosecond()).unwrap_or(0),
        );
        std::time::UNIX_EPOCH + since
    }
}

/// The current instant: `LOGBOOK_NOW` if set and valid, else the system
/// clock ([`Clock::from_env`]), for code that has no [`Clock`] handed to it.
pub fn now() -> Timestamp {
    Clock::from_env().now()
}

/// The current instant in the wire format every file uses.
pub fn now_string() -> String {
    format(now())
}

/// Formats an instant as UTC RFC 3339 with milliseconds and `Z`
/// (`2025-10-05T23:01:45.123Z`), the only timestamp form Logbook writes.
pub fn format(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `ts` in nanoseconds since the epoch as the index stores them (an i64:
/// 1677 to 2262), held at the ends of that range rather than wrapped, so
/// a start or a `--since` far out of it still orders right.
pub fn order_ns(ts: Timestamp) -> i64 {
    let ns = ts.as_nanosecond();
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

/// Parses a timestamp another tool may have written: RFC 3339 with any
/// offset, or a bare date/datetime taken as UTC. Returns `None` when
/// unparseable so callers can stay lenient.
pub fn parse(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if let Ok(ts) = s.parse::<Timestamp>() {
        return Some(ts);
    }
    if let Ok(dt) = s.parse::<jiff::civil::DateTime>() {
        return dt.to_zoned(TimeZone::UTC).ok().map(|z| z.timestamp());
    }
    if let Ok(d) = s.parse::<jiff::civil::Date>() {
        return d.to_zoned(TimeZone::UTC).ok().map(|z| z.timestamp());
    }
    None
}

/// The local time zone for display (`TZ`, else the system's, else UTC).
pub fn local_zone() -> TimeZone {
    if std::env::var_os("TZ").is_none()
        && let Some(tz) = localtime()
    {
        return tz;
    }
    TimeZone::try_system().unwrap_or(TimeZone::UTC)
}

/// How long [`localtime`] trusts what it read, as jiff does its own.
const LOCALTIME_TTL: Duration = Duration::from_secs(5 * 60);

/// The zone `/etc/localtime` links to, read as it is. jiff looks the link's
/// name up in its zoneinfo database instead, and the first look-up lists
/// every folder under `/usr/share/zoneinfo`: a millisecond of each
/// command's run, more than a whole `find` through the index.
fn localtime() -> Option<TimeZone> {
    static READ: Mutex<Option<(Instant, TimeZone)>> = Mutex::new(None);
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((at, tz)) = read.as_ref()
        && at.elapsed() < LOCALTIME_TTL
    {
        return Some(tz.clone());
    }
    let tz = linked_zone(Path::new("/etc/localtime"))?;
    *read = Some((Instant::now(), tz.clone()));
    Some(tz)
}

/// The zone a symlink into a zoneinfo folder names, with its data read
/// through the link; `None` if `link` is no such link.
fn linked_zone(link: &Path) -> Option<TimeZone> {
    let target = std::fs::read_link(link).ok()?;
    let (_, name) = target.to_str()?.rsplit_once("zoneinfo/")?;
    TimeZone::tzif(name, &std::fs::read(link).ok()?).ok()
}

/// A stored timestamp as people read it: in local time (`TZ`), to the
/// second, with the zone's abbreviation (`2025-01-16 08:30:00 JST`). Text
/// that is not a timestamp is shown as it is.
pub fn display(stored: &str) -> String {
    match parse(stored) {
        Some(ts) => ts
            .to_zoned(local_zone())
            .strftime("%Y-%m-%d %H:%M:%S %Z")
            .to_string(),
        None => stored.to_string(),
    }
}

/// The local date (`TZ`) of a stored timestamp, `2025-01-16`; text that is
/// not a timestamp is shown as it is.
pub fn display_date(stored: &str) -> String {
    match parse(stored) {
        Some(ts) => ts.to_zoned(local_zone()).strftime("%Y-%m-%d").to_string(),
        None => stored.to_string(),
    }
}

/// A short human age such as `45s`, `12m`, `2h`, `3 days`, used in listings.
pub fn age(from: Timestamp, now: Timestamp) -> String {
    let secs = now.as_second().saturating_sub(from.as_second()).max(0);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        3600..86400 => format!("{}h", secs / 3600),
        _ => {
            let days = secs / 86400;
            if days == 1 {
                "1 day".to_string()
            } else {
                format!("{days} days")
            }
        }
    }
}

/// A duration such as `2h 15m` or `3d 4h`, for "Duration:" lines.
pub fn duration(from: Timestamp, now: Timestamp) -> String {
    let secs = now.as_second().saturating_sub(from.as_second()).max(0);
    let (d, h, m) = (secs / 86400, secs % 86400 / 3600, secs % 3600 / 60);
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else {
        format!("{m}m")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_millis_and_z() {
        let ts: Timestamp = "2025-10-05T23:01:45.123456Z".parse().unwrap();
        assert_eq!(format(ts), "2025-10-05T23:01:45.123Z");
        let ts: Timestamp = "2025-10-05T23:01:45Z".parse().unwrap();
        assert_eq!(format(ts), "2025-10-05T23:01:45.000Z");
    }

    #[test]
    fn parses_lenient_forms() {
        assert!(parse("2025-01-15T10:30:00Z").is_some());
        assert!(parse("2025-01-15T10:30:00+02:00").is_some());
        assert!(parse("2025-01-15T10:30:00").is_some());
        assert!(parse("2025-01-15").is_some());
        assert!(parse("yesterday").is_none());
    }

    #[test]
    fn display_is_local() {
        let tokyo = jiff::tz::TimeZone::get("Asia/Tokyo").unwrap();
        let ts = parse("2025-01-15T23:30:00.000Z").unwrap();
        assert_eq!(
            ts.to_zoned(tokyo)
                .strftime("%Y-%m-%d %H:%M:%S %Z")
                .to_string(),
            "2025-01-16 08:30:00 JST"
        );
        assert_eq!(display("not a time"), "not a time");
        assert_eq!(display_date("not a time"), "not a time");
    }

    #[test]
    fn a_link_into_zoneinfo_is_read_as_the_zone_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let zones = Path::new("/usr/share/zoneinfo");
        for (link, target) in [
            ("absolute", zones.join("America/New_York")),
            (
                "relative",
                // Up from the temp folder to `/`, then down.
                (1..dir.path().components().count())
                    .fold(std::path::PathBuf::new(), |p, _| p.join(".."))
                    .join(zones.strip_prefix("/").unwrap())
                    .join("America/New_York"),
            ),
        ] {
            let link = dir.path().join(link);
            std::os::unix::fs::symlink(&target, &link).unwrap();
            let ours = linked_zone(&link).unwrap();
            let jiffs = TimeZone::get("America/New_York").unwrap();
            assert_eq!(ours.iana_name(), Some("America/New_York"));
            for at in [
                "2025-01-15T12:00:00Z",
                "2025-07-15T12:00:00Z",
                "2025-03-09T07:30:00Z",
            ] {
                let at: Timestamp = at.parse().unwrap();
                assert_eq!(ours.to_offset(at), jiffs.to_offset(at), "{at}");
            }
        }
        // Not a link, or a link elsewhere: left to jiff.
        let file = dir.path().join("file");
        std::fs::copy(zones.join("UTC"), &file).unwrap();
        assert!(linked_zone(&file).is_none());
        let elsewhere = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&file, &elsewhere).unwrap();
        assert!(linked_zone(&elsewhere).is_none());
    }

    #[test]
    fn ages() {
        let a: Timestamp = "2025-01-15T10:00:00Z".parse().unwrap();
        let b: Timestamp = "2025-01-15T12:05:00Z".parse().unwrap();
        assert_eq!(age(a, b), "2h");
        assert_eq!(duration(a, b), "2h 5m");
        let c: Timestamp = "2025-01-18T12:05:00Z".parse().unwrap();
        assert_eq!(age(a, c), "3 days");
    }
}
