//! CPU contention on purpose: busy threads beside what a test measures, for as long as a guard lives.

use std::sync::Arc;

/// Busy threads beside the proxy while this lives: CPU contention on purpose (the machine has
/// two cores; three spinning threads leave the proxy, its grouper and the host fighting for them).
pub struct Contention {
    stop: Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Contention {
    pub fn start(busy: usize) -> Contention {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..busy)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        Contention { stop, threads }
    }
}

impl Drop for Contention {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
