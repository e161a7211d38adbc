//! What /proc says about a process: peak and current RSS (VmHWM, VmRSS) and CPU time, for a
//! process with its direct children (nginx's workers) and per thread name (tracer's runtime vs
//! its SQLite thread).

/// VmHWM of a process plus its direct children (nginx's workers), in KiB.
pub fn tree_peak_rss_kib(pid: u32) -> Option<u64> {
    let own = peak_rss_of(pid)?;
    let children: u64 = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|child| child.parse().ok())
        .filter_map(peak_rss_of)
        .sum();
    Some(own + children)
}

fn peak_rss_of(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// VmRSS of one process (its resident memory now), in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

/// A `kB` field of /proc/PID/status.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find(|line| line.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Linux's USER_HZ: the unit of the CPU times in /proc/*/stat.
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU seconds (user + system) used so far by a process and its direct children.
pub fn tree_cpu_seconds(pid: u32) -> Option<f64> {
    let own = cpu_ticks(&format!("/proc/{pid}/stat"))?;
    let children: u64 = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|child| cpu_ticks(&format!("/proc/{child}/stat")))
        .sum();
    Some((own + children) as f64 / TICKS_PER_SECOND)
}

/// CPU seconds per thread name (digits at the end dropped, so a pool's threads add up).
pub fn cpu_seconds_by_thread(pid: u32) -> Vec<(String, f64)> {
    let mut totals: Vec<(String, f64)> = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return totals;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let name = name
            .trim()
            .trim_end_matches(|c: char| c.is_ascii_digit() || c == '-');
        let Some(ticks) = cpu_ticks(&path.join("stat").to_string_lossy()) else {
            continue;
        };
        let seconds = ticks as f64 / TICKS_PER_SECOND;
        match totals.iter_mut().find(|(known, _)| known == name) {
            Some((_, total)) => *total += seconds,
            None => totals.push((name.to_string(), seconds)),
        }
    }
    totals.sort_by(|a, b| b.1.total_cmp(&a.1));
    totals
}

/// utime + stime of one /proc stat file (fields 14 and 15, counted after the `(comm)`).
fn cpu_ticks(stat_path: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(stat_path).ok()?;
    let after_comm = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}
