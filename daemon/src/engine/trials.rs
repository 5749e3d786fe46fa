//! Sharing the cores among callers' header searches.
//!
//! A header search is a list of trials (one key derivation each, from
//! milliseconds to tens of seconds). Every running trial holds one of a
//! fixed number of permits (one per core); a free permit goes to the
//! waiting caller served least recently, so a user's mount waits at most
//! for one trial of another user's to end, however many searches that
//! user started. Searches themselves are counted per caller and in all,
//! and one over the policy's bounds is refused at once (`Busy`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How often a waiting trial looks at its search's cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

#[derive(Default)]
struct State {
    free: usize,
    /// (caller, ticket) of the trials waiting for a permit.
    waiting: Vec<(u32, u64)>,
    /// Tickets given a permit, not yet taken up by their thread.
    granted: Vec<u64>,
    /// When each caller last got a permit (a logical clock).
    served: HashMap<u32, u64>,
    clock: u64,
    next_ticket: u64,
    /// Searches running, per caller and in all.
    searches: HashMap<u32, u32>,
    total: u32,
}

struct Inner {
    state: Mutex<State>,
    wake: Condvar,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The permits and search counts of one engine.
#[derive(Clone)]
pub struct Trials {
    inner: Arc<Inner>,
}

/// Bounds on how many searches run at once.
#[derive(Debug, Clone, Copy)]
pub struct SearchBounds {
    pub per_caller: u32,
    pub total: u32,
}

/// One running search; the count goes down when it is dropped.
pub struct SearchSlot {
    inner: Arc<Inner>,
    caller: u32,
    /// Counted against the bounds (not for administrators).
    counted: bool,
}

/// A running trial's permit; handed on when dropped.
pub struct Permit<'a> {
    inner: &'a Inner,
}

impl Trials {
    /// `permits` trials run at once (at least one).
    pub fn new(permits: usize) -> Trials {
        Trials {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    free: permits.max(1),
                    ..State::default()
                }),
                wake: Condvar::new(),
            }),
        }
    }

    /// Counts a search of `caller`'s, or says why it may not start now
    /// (`bounds` None: an administrator's, neither bounded nor counted).
    pub fn begin_search(
        &self,
        caller: u32,
        bounds: Option<SearchBounds>,
    ) -> std::result::Result<SearchSlot, String> {
        let mut s = self.inner.lock();
        let mine = s.searches.get(&caller).copied().unwrap_or(0);
        let Some(b) = bounds else {
            return Ok(SearchSlot {
                inner: Arc::clone(&self.inner),
                caller,
                counted: false,
            });
        };
        if mine >= b.per_caller {
            return Err(format!(
                "you already run {mine} header searches, the most allowed at once (policy: searches_per_user)"
            ));
        }
        if s.total >= b.total {
            return Err(format!(
                "the daemon already runs {} header searches, the most allowed at once (policy: searches)",
                s.total
            ));
        }
        s.searches.insert(caller, mine + 1);
        s.total += 1;
        Ok(SearchSlot {
            inner: Arc::clone(&self.inner),
            caller,
            counted: true,
        })
    }

    /// Waits for a permit to run one trial of `caller`'s; None once
    /// `cancel` is set.
    pub fn acquire(&self, caller: u32, cancel: &AtomicBool) -> Option<Permit<'_>> {
        let inner = &*self.inner;
        let mut s = inner.lock();
        let ticket = s.next_ticket;
        s.next_ticket += 1;
        s.waiting.push((caller, ticket));
        loop {
            dispatch(&mut s);
            if let Some(i) = s.granted.iter().position(|t| *t == ticket) {
                s.granted.swap_remove(i);
                return Some(Permit { inner });
            }
            if cancel.load(Ordering::Relaxed) {
                s.waiting.retain(|(_, t)| *t != ticket);
                return None;
            }
            s = inner
                .wake
                .wait_timeout(s, CANCEL_POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

/// Gives free permits to waiting trials, the caller served least recently
/// first (then in order of arrival).
fn dispatch(s: &mut State) {
    let mut changed = false;
    while s.free > 0 && !s.waiting.is_empty() {
        let served = &s.served;
        let Some(i) = (0..s.waiting.len()).min_by_key(|&i| {
            let (caller, ticket) = s.waiting[i];
            (served.get(&caller).copied().unwrap_or(0), ticket)
        }) else {
            break;
        };
        let (caller, ticket) = s.waiting.remove(i);
        s.free -= 1;
        s.clock += 1;
        let now = s.clock;
        s.served.insert(caller, now);
        s.granted.push(ticket);
        changed = true;
    }
    if changed && s.served.len() > 256 {
        // Forget callers with nothing running or waiting (the map stays
        // as small as the machine's active users).
        let State {
            served,
            waiting,
            searches,
            ..
        } = s;
        served.retain(|c, _| searches.contains_key(c) || waiting.iter().any(|(w, _)| w == c));
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut s = self.inner.lock();
        s.free += 1;
        dispatch(&mut s);
        drop(s);
        self.inner.wake.notify_all();
    }
}

impl Drop for SearchSlot {
    fn drop(&mut self) {
        if !self.counted {
            return;
        }
        let mut s = self.inner.lock();
        if let Some(n) = s.searches.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                s.searches.remove(&self.caller);
            }
        }
        s.total = s.total.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_are_bounded_per_caller_and_in_all_but_not_for_administrators() {
        let t = Trials::new(2);
        let b = Some(SearchBounds {
            per_caller: 2,
            total: 3,
        });
        let a1 = t.begin_search(1, b).unwrap();
        let _a2 = t.begin_search(1, b).unwrap();
        assert!(t.begin_search(1, b).is_err(), "a third of user 1's");
        let _b1 = t.begin_search(2, b).unwrap();
        assert!(t.begin_search(3, b).is_err(), "a fourth in all");
        let _root = t.begin_search(0, None).unwrap();
        drop(a1);
        assert!(t.begin_search(1, b).is_ok(), "room again once one ended");
    }

    #[test]
    fn a_free_permit_goes_to_the_caller_served_least_recently() {
        let t = Trials::new(1);
        let never = AtomicBool::new(false);
        let first = t.acquire(1, &never).unwrap();
        // User 1 queues three more trials, then user 2 one.
        let order = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for caller in [1, 1, 1, 2] {
                let (t, order, never) = (&t, &order, &never);
                s.spawn(move || {
                    let p = t.acquire(caller, never).unwrap();
                    order.lock().unwrap().push(caller);
                    std::thread::sleep(Duration::from_millis(20));
                    drop(p);
                });
                std::thread::sleep(Duration::from_millis(30));
            }
            drop(first);
        });
        let order = order.into_inner().unwrap();
        assert_eq!(
            order[0], 2,
            "user 2 waited behind one trial only: {order:?}"
        );
    }

    #[test]
    fn a_cancelled_wait_gives_up() {
        let t = Trials::new(1);
        let never = AtomicBool::new(false);
        let _held = t.acquire(1, &never).unwrap();
        let cancel = AtomicBool::new(true);
        assert!(t.acquire(2, &cancel).is_none());
    }
}
