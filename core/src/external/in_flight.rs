//! The bound on requests in flight at once (`[links.external].max_concurrency`): a
//! counting semaphore whose permit a request holds from its start to its answer, and
//! never while it waits for its host's turn.

use std::sync::{Condvar, Mutex};

/// At most `max` permits out at once.
#[derive(Debug)]
pub struct InFlight {
    max: usize,
    used: Mutex<usize>,
    freed: Condvar,
}

/// One request's place among those in flight; given back when dropped.
#[derive(Debug)]
pub struct Permit<'a>(&'a InFlight);

impl InFlight {
    /// A bound of `max` requests (at least 1).
    pub fn new(max: usize) -> InFlight {
        InFlight {
            max: max.max(1),
            used: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Blocks until fewer than `max` permits are out, then takes one.
    pub fn acquire(&self) -> Permit<'_> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        while *used >= self.max {
            used = self.freed.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        *used += 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut used = self.0.used.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(1);
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn no_more_than_max_permits_are_out() {
        let bound = InFlight::new(2);
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|scope| {
            for _ in 0..6 {
                scope.spawn(|| {
                    for _ in 0..20 {
                        let _permit = bound.acquire();
                        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(n, Ordering::SeqCst);
                        std::thread::yield_now();
                        now.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert!(most.load(Ordering::SeqCst) <= 2);
    }
}
