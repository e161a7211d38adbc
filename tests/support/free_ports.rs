//! Free ports for a test binary's processes, never the same one twice in the binary's life.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::{Mutex, PoisonError};

static HANDED_OUT: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// A free port on 127.0.0.1 that no other test of this binary was given. `bind(0)` then drop can
/// hand the same port to the next caller (a test once started `tracer up` with its MCP port equal
/// to its internal agent port, and it could not bind); remembering what was handed out stops that.
pub fn free_port() -> u16 {
    let mut handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
    let seen = handed_out.get_or_insert_with(HashSet::new);
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("a bound port").port();
        if seen.insert(port) {
            return port;
        }
    }
}

/// `n` distinct free ports, as strings for a command line.
pub fn distinct_ports(n: usize) -> Vec<String> {
    (0..n).map(|_| free_port().to_string()).collect()
}
