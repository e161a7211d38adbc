//! Legacy (handshake-era) HTTP sessions: ids minted by `initialize`, the version each negotiated,
//! idle expiry, and a bound on how many are kept.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One live session.
#[derive(Debug, Clone)]
struct Session {
    protocol_version: String,
    last_seen: Instant,
}

/// The sessions of one server. Lookups refresh a session; an idle session expires.
#[derive(Debug)]
pub struct SessionTable {
    sessions: Mutex<HashMap<String, Session>>,
    idle_timeout: Duration,
    capacity: usize,
}

impl SessionTable {
    pub fn new(idle_timeout: Duration, capacity: usize) -> Self {
        SessionTable {
            sessions: Mutex::new(HashMap::new()),
            idle_timeout,
            capacity: capacity.max(1),
        }
    }

    /// Starts a session for a negotiated version and returns its id (32 random hex digits).
    /// When the table is full the least recently used session is dropped.
    pub fn create(&self, protocol_version: &str) -> String {
        let id = format!("{:032x}", rand::random::<u128>());
        let now = Instant::now();
        let mut sessions = self.lock();
        sessions.retain(|_, session| now.duration_since(session.last_seen) < self.idle_timeout);
        if sessions.len() >= self.capacity
            && let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, session)| session.last_seen)
                .map(|(id, _)| id.clone())
        {
            sessions.remove(&oldest);
        }
        let session = Session {
            protocol_version: protocol_version.to_owned(),
            last_seen: now,
        };
        sessions.insert(id.clone(), session);
        id
    }

    /// The negotiated version of a live session (refreshing it), or `None` if unknown or expired.
    pub fn touch(&self, id: &str) -> Option<String> {
        let now = Instant::now();
        let mut sessions = self.lock();
        let session = sessions.get_mut(id)?;
        if now.duration_since(session.last_seen) >= self.idle_timeout {
            sessions.remove(id);
            return None;
        }
        session.last_seen = now;
        Some(session.protocol_version.clone())
    }

    /// Ends a session; false if it was unknown or already expired.
    pub fn end(&self, id: &str) -> bool {
        let now = Instant::now();
        match self.lock().remove(id) {
            Some(session) => now.duration_since(session.last_seen) < self.idle_timeout,
            None => false,
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding this lock cannot leave the map inconsistent: take it back.
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_created_found_and_ended() {
        let table = SessionTable::new(Duration::from_secs(60), 10);
        let id = table.create("2025-11-25");
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(table.touch(&id).as_deref(), Some("2025-11-25"));
        assert!(table.end(&id));
        assert!(!table.end(&id));
        assert_eq!(table.touch(&id), None);
    }

    #[test]
    fn idle_sessions_expire() {
        let table = SessionTable::new(Duration::from_millis(20), 10);
        let id = table.create("2025-06-18");
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(table.touch(&id), None);
        assert!(table.is_empty());
    }

    #[test]
    fn a_full_table_drops_the_least_recently_used() {
        let table = SessionTable::new(Duration::from_secs(60), 2);
        let first = table.create("2025-11-25");
        std::thread::sleep(Duration::from_millis(2));
        let second = table.create("2025-11-25");
        std::thread::sleep(Duration::from_millis(2));
        assert!(table.touch(&first).is_some());
        let third = table.create("2025-11-25");
        assert_eq!(table.len(), 2);
        assert!(table.touch(&second).is_none());
        assert!(table.touch(&first).is_some() && table.touch(&third).is_some());
    }
}
