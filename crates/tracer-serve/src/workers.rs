//! Connection workers: one single-threaded runtime per core, each serving the connections
//! handed to it, so that a request's tasks, wake-ups and allocations stay on one thread.
//!
//! Started once per process, on first use, and kept for its life (like the main runtime, they
//! end with the process). A connection placed on a worker runs there until it closes; the
//! upstream pools that serve it are the worker's own (see tracer-record's `proxy::server`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::runtime::Handle;

/// Most workers, whatever the core count.
const MAX_WORKERS: usize = 16;

/// The process's connection workers.
#[derive(Debug)]
pub struct Workers {
    handles: Vec<Handle>,
    /// Connections open on each worker.
    open: Vec<AtomicUsize>,
}

/// One connection's place on a worker: counted there until dropped.
#[derive(Debug)]
pub(crate) struct Seat {
    workers: &'static Workers,
    index: usize,
}

impl Seat {
    /// The worker this connection is on.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// That worker's runtime.
    pub(crate) fn handle(&self) -> &'static Handle {
        self.workers.handle(self.index)
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        if let Some(open) = self.workers.open.get(self.index) {
            open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Workers {
    /// The process's workers (one per core, at most 16), started on first use. An error says
    /// why none could start (no thread or runtime could be made).
    pub fn shared() -> Result<&'static Workers, String> {
        static WORKERS: OnceLock<Result<Workers, String>> = OnceLock::new();
        WORKERS
            .get_or_init(|| {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                Workers::start(cores.clamp(1, MAX_WORKERS))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Starts `count` workers, each a thread driving its own current-thread runtime forever.
    fn start(count: usize) -> Result<Workers, String> {
        let mut handles = Vec::with_capacity(count);
        for index in 0..count {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name(format!("tracer-conn-{index}"))
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    match runtime {
                        Ok(runtime) => {
                            let _ = tx.send(Ok(runtime.handle().clone()));
                            runtime.block_on(std::future::pending::<()>());
                        }
                        Err(error) => {
                            let _ = tx.send(Err(format!("starting a connection worker: {error}")));
                        }
                    }
                })
                .map_err(|e| format!("starting a connection worker thread: {e}"))?;
            let handle = rx
                .recv()
                .map_err(|_| "a connection worker ended before it started".to_string())??;
            handles.push(handle);
        }
        let open = handles.iter().map(|_| AtomicUsize::new(0)).collect();
        Ok(Workers { handles, open })
    }

    /// How many workers there are (at least one).
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Never true: there is always at least one worker.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// A seat for a new connection on the worker with the fewest open (the first of those):
    /// connections made one after another share one worker, and so one upstream pool, while
    /// connections open together are spread over every worker.
    pub(crate) fn seat(&'static self) -> Seat {
        let index = self
            .open
            .iter()
            .enumerate()
            .min_by_key(|(_, open)| open.load(Ordering::Relaxed))
            .map_or(0, |(index, _)| index);
        if let Some(open) = self.open.get(index) {
            open.fetch_add(1, Ordering::Relaxed);
        }
        Seat {
            workers: self,
            index,
        }
    }

    /// Worker `index`'s runtime (counted around: `index` modulo [`Workers::len`]).
    pub(crate) fn handle(&self, index: usize) -> &Handle {
        &self.handles[index % self.handles.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_open_together_are_spread_and_those_made_in_turn_share_a_worker() {
        let workers = Box::leak(Box::new(Workers::start(3).unwrap()));
        let together: Vec<Seat> = (0..6).map(|_| workers.seat()).collect();
        let mut on: Vec<usize> = together.iter().map(Seat::index).collect();
        on.sort_unstable();
        assert_eq!(on, [0, 0, 1, 1, 2, 2]);
        drop(together);
        let in_turn: Vec<usize> = (0..4).map(|_| workers.seat().index()).collect();
        assert_eq!(
            in_turn,
            [0, 0, 0, 0],
            "each seat is given back before the next"
        );
    }

    #[tokio::test]
    async fn each_worker_runs_what_it_is_given_on_its_own_thread() {
        let workers = Workers::shared().unwrap();
        assert!(!workers.is_empty());
        let mut threads = std::collections::HashSet::new();
        for index in 0..workers.len() {
            let name = workers
                .handle(index)
                .spawn(async { std::thread::current().name().map(str::to_string) })
                .await
                .unwrap()
                .unwrap();
            assert_eq!(name, format!("tracer-conn-{index}"));
            threads.insert(name);
        }
        assert_eq!(threads.len(), workers.len());
        assert!((0..3 * workers.len()).all(|_| workers.seat().index() < workers.len()));
    }
}
