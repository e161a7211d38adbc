//! Which process on this machine opened a forward-proxy connection (best effort, Linux): the
//! client's socket found in `/proc/net/tcp{,6}` by its address and tracer's, its owner found among
//! `/proc/*/fd`; the answer, `process:PID:START` (START the process's start time in clock ticks,
//! so a reused pid is another process), keeps separate programs' hops out of one session.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use tracer_wire::hop::CLIENT_PROCESS_PREFIX as PROCESS_PREFIX;

/// A forward-proxy request's client process, carried in the request's extensions to the hop.
#[derive(Debug, Clone)]
pub(crate) struct ClientProcess(pub(crate) String);

/// Most connections remembered at once; past it the memory starts again.
const REMEMBERED: usize = 4096;

/// The processes of the forward proxy's open connections, by the client's address.
#[derive(Debug, Default)]
pub(crate) struct ClientProcesses {
    /// The forward listener's own address (the remote end of the client's socket); None when
    /// clients are not looked up.
    listen: Option<SocketAddr>,
    known: Mutex<HashMap<SocketAddr, Option<String>>>,
}

impl ClientProcesses {
    /// Looks up the clients of the listener at `listen`; `None` looks up nothing.
    pub(crate) fn new(listen: Option<SocketAddr>) -> Self {
        Self {
            listen,
            known: Mutex::new(HashMap::new()),
        }
    }

    /// A new connection from `peer`: what was known of an earlier one from that port is gone.
    pub(crate) fn connected(&self, peer: SocketAddr) {
        if self.listen.is_some()
            && let Ok(mut known) = self.known.lock()
        {
            known.remove(&peer);
        }
    }

    /// The process of the connection from `peer`, looked up once per connection (off the
    /// runtime's threads).
    pub(crate) async fn of(self: &Arc<Self>, peer: SocketAddr) -> Option<String> {
        let listen = self.listen?;
        if let Some(found) = self.known.lock().ok()?.get(&peer) {
            return found.clone();
        }
        let found = tokio::task::spawn_blocking(move || lookup(peer, listen))
            .await
            .ok()
            .flatten();
        if let Ok(mut known) = self.known.lock() {
            if known.len() >= REMEMBERED {
                known.clear();
            }
            known.insert(peer, found.clone());
        }
        found
    }

    /// What `of` found for `peer`, without looking.
    pub(crate) fn known(&self, peer: SocketAddr) -> Option<String> {
        self.known.lock().ok()?.get(&peer).cloned().flatten()
    }
}

/// The process holding the client end of a loopback connection from `peer` to `listen`.
fn lookup(peer: SocketAddr, listen: SocketAddr) -> Option<String> {
    if !peer.ip().is_loopback() {
        return None;
    }
    let table = match peer {
        SocketAddr::V4(_) => "/proc/net/tcp",
        SocketAddr::V6(_) => "/proc/net/tcp6",
    };
    let text = std::fs::read_to_string(table).ok()?;
    let inode = socket_inode(&text, peer, listen)?;
    let pid = owner_of(inode)?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let start = start_ticks(&stat)?;
    Some(format!("{PROCESS_PREFIX}{pid}:{start}"))
}

/// The inode of the socket whose local end is `local` and remote end `remote`, in the text of
/// `/proc/net/tcp` or `tcp6`.
fn socket_inode(table: &str, local: SocketAddr, remote: SocketAddr) -> Option<u64> {
    let (local, remote) = (proc_address(local), proc_address(remote));
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let matches = fields
            .get(1)
            .is_some_and(|f| f.eq_ignore_ascii_case(&local))
            && fields
                .get(2)
                .is_some_and(|f| f.eq_ignore_ascii_case(&remote));
        if !matches {
            return None;
        }
        fields.get(9)?.parse().ok().filter(|inode| *inode != 0)
    })
}

/// An address as the kernel prints it there: each 32-bit word of the address in host (little
/// endian) order, in hex, then the port.
fn proc_address(address: SocketAddr) -> String {
    let words: Vec<[u8; 4]> = match address.ip() {
        IpAddr::V4(ip) => vec![ip.octets()],
        IpAddr::V6(ip) => ip
            .octets()
            .chunks(4)
            .map(|w| [w[0], w[1], w[2], w[3]])
            .collect(),
    };
    let mut text = String::new();
    for word in words {
        text.push_str(&format!("{:08X}", u32::from_le_bytes(word)));
    }
    format!("{text}:{:04X}", address.port())
}

/// The process (not tracer itself) that has `socket:[inode]` open.
fn owner_of(inode: u64) -> Option<u32> {
    let wanted = format!("socket:[{inode}]");
    let own = std::process::id();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == own {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue; // another user's process: not ours to look at
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|target| target.as_os_str() == &*wanted) {
                return Some(pid);
            }
        }
    }
    None
}

/// Field 22 of `/proc/PID/stat` (after the command name in parentheses, which may hold spaces).
fn start_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_the_kernel_prints_them() {
        let v4: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(proc_address(v4), "0100007F:1F90");
        let v6: SocketAddr = "[::1]:443".parse().unwrap();
        assert_eq!(proc_address(v6), "00000000000000000000000001000000:01BB");
        let stat = "42 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 123456 99";
        assert_eq!(start_ticks(stat), Some(123_456));
    }

    #[test]
    fn a_loopback_client_is_found_by_its_socket() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let listen = listener.local_addr().unwrap();
        // A child process holds the client socket: python3 connects and waits.
        let Ok(mut child) = std::process::Command::new("python3")
            .args([
                "-c",
                &format!(
                    "import socket,sys,time; s=socket.create_connection(('127.0.0.1',{})); \
                     time.sleep(30)",
                    listen.port()
                ),
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
        else {
            eprintln!("skipping: no python3");
            return;
        };
        let (_server_end, peer) = listener.accept().unwrap();
        let found = lookup(peer, listen);
        let pid = child.id();
        let _ = child.kill();
        let _ = child.wait();
        let found = found.expect("the child's process");
        assert!(
            found.starts_with(&format!("{PROCESS_PREFIX}{pid}:")),
            "{found} (pid {pid})"
        );
    }
}
