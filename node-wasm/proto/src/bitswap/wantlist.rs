//! A peer's wantlist as the server keeps it: what the peer asked for, capped in size, plus the
//! queue of responses that are ready to go, highest priority first and FIFO within a priority.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};

use cid::Cid;

use super::message::{WantEntry, WantType};

/// What the server will answer for one want.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    Block,
    Have,
    DontHave,
}

#[derive(Debug, Clone, Copy)]
struct Want {
    want_type: WantType,
    priority: i32,
    send_dont_have: bool,
    /// Key of the queued response, if one is queued.
    queued: Option<TaskKey>,
    /// DONT_HAVE already went out; the want stays in case the block arrives.
    dont_have_sent: bool,
}

type TaskKey = (Reverse<i32>, u64);

/// A ready response and the bytes it will take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task {
    pub cid: Cid,
    pub response: Response,
    pub size: usize,
}

/// Result of adding an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    /// New want, or a want-have upgraded to want-block: it needs an answer.
    Changed,
    /// Already there with the same or a stronger type.
    Unchanged,
    /// The wantlist is full.
    Refused,
}

#[derive(Debug)]
pub struct Wantlist {
    cap: usize,
    wants: HashMap<Cid, Want>,
    queue: BTreeMap<TaskKey, Task>,
    seq: u64,
    queued_block_bytes: usize,
}

impl Wantlist {
    pub fn new(cap: usize) -> Self {
        Self { cap, wants: HashMap::new(), queue: BTreeMap::new(), seq: 0, queued_block_bytes: 0 }
    }

    pub fn len(&self) -> usize {
        self.wants.len()
    }

    pub fn has_tasks(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Bytes of blocks queued and not yet handed out: the `pendingBytes` a response reports.
    pub fn queued_block_bytes(&self) -> usize {
        self.queued_block_bytes
    }

    pub fn want_type(&self, cid: &Cid) -> Option<WantType> {
        self.wants.get(cid).map(|w| w.want_type)
    }

    pub fn sends_dont_have(&self, cid: &Cid) -> bool {
        self.wants.get(cid).is_some_and(|w| w.send_dont_have && !w.dont_have_sent)
    }

    pub fn add(&mut self, e: &WantEntry) -> Added {
        if let Some(w) = self.wants.get_mut(&e.cid) {
            if w.want_type == WantType::Have && e.want_type == WantType::Block {
                w.want_type = WantType::Block;
                w.priority = e.priority;
                w.send_dont_have = e.send_dont_have;
                return Added::Changed;
            }
            return Added::Unchanged;
        }
        if self.wants.len() >= self.cap {
            return Added::Refused;
        }
        let want = Want {
            want_type: e.want_type,
            priority: e.priority,
            send_dont_have: e.send_dont_have,
            queued: None,
            dont_have_sent: false,
        };
        self.wants.insert(e.cid, want);
        Added::Changed
    }

    /// Drops the want and any response queued for it.
    pub fn remove(&mut self, cid: &Cid) {
        if let Some(w) = self.wants.remove(cid) {
            self.unqueue(w.queued);
        }
    }

    pub fn clear(&mut self) {
        self.wants.clear();
        self.queue.clear();
        self.queued_block_bytes = 0;
    }

    /// Queues `response` for the want on `cid`, replacing a response queued before.
    pub fn queue(&mut self, cid: Cid, response: Response, size: usize) {
        let Some(w) = self.wants.get_mut(&cid) else { return };
        let old = w.queued.take();
        self.seq += 1;
        let key = (Reverse(w.priority), self.seq);
        w.queued = Some(key);
        self.unqueue(old);
        if response == Response::Block {
            self.queued_block_bytes += size;
        }
        self.queue.insert(key, Task { cid, response, size });
    }

    fn unqueue(&mut self, key: Option<TaskKey>) {
        if let Some(task) = key.and_then(|k| self.queue.remove(&k)) {
            if task.response == Response::Block {
                self.queued_block_bytes -= task.size;
            }
        }
    }

    /// The next response, without taking it.
    pub fn peek(&self) -> Option<Task> {
        self.queue.first_key_value().map(|(_, t)| *t)
    }

    /// Takes the next response. A block or HAVE answers the want, which is dropped; after a
    /// DONT_HAVE the want stays so the block can still be sent if it arrives.
    pub fn pop(&mut self) -> Option<Task> {
        let (_, task) = self.queue.pop_first()?;
        if task.response == Response::Block {
            self.queued_block_bytes -= task.size;
        }
        match task.response {
            Response::Block | Response::Have => {
                self.wants.remove(&task.cid);
            }
            Response::DontHave => {
                if let Some(w) = self.wants.get_mut(&task.cid) {
                    w.queued = None;
                    w.dont_have_sent = true;
                }
            }
        }
        Some(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitswap::verify::raw_cid;

    fn cid(i: u32) -> Cid {
        raw_cid(&i.to_le_bytes())
    }

    #[test]
    fn orders_by_priority_then_fifo() {
        let mut wl = Wantlist::new(10);
        for (i, prio) in [(1, 1), (2, 5), (3, 5), (4, 9)] {
            wl.add(&WantEntry::want(cid(i), WantType::Block, prio, false));
            wl.queue(cid(i), Response::Block, 10);
        }
        let order: Vec<_> = std::iter::from_fn(|| wl.pop()).map(|t| t.cid).collect();
        assert_eq!(order, vec![cid(4), cid(2), cid(3), cid(1)]);
        assert_eq!(wl.len(), 0);
    }

    #[test]
    fn caps_wants_and_upgrades_have_to_block() {
        let mut wl = Wantlist::new(2);
        assert_eq!(wl.add(&WantEntry::want(cid(1), WantType::Have, 1, true)), Added::Changed);
        assert_eq!(wl.add(&WantEntry::want(cid(1), WantType::Have, 1, true)), Added::Unchanged);
        assert_eq!(wl.add(&WantEntry::want(cid(1), WantType::Block, 1, true)), Added::Changed);
        assert_eq!(wl.want_type(&cid(1)), Some(WantType::Block));
        assert_eq!(wl.add(&WantEntry::want(cid(2), WantType::Block, 1, true)), Added::Changed);
        assert_eq!(wl.add(&WantEntry::want(cid(3), WantType::Block, 1, true)), Added::Refused);
    }

    #[test]
    fn dont_have_keeps_the_want_and_cancel_drops_the_task() {
        let mut wl = Wantlist::new(4);
        wl.add(&WantEntry::want(cid(1), WantType::Block, 1, true));
        wl.queue(cid(1), Response::DontHave, 40);
        assert_eq!(wl.pop().map(|t| t.response), Some(Response::DontHave));
        assert_eq!(wl.len(), 1);
        assert!(!wl.sends_dont_have(&cid(1)));
        wl.queue(cid(1), Response::Block, 100);
        assert_eq!(wl.queued_block_bytes(), 100);
        wl.remove(&cid(1));
        assert_eq!(wl.queued_block_bytes(), 0);
        assert_eq!(wl.pop(), None);
    }
}
