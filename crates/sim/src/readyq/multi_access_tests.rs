//! Tests of the multi-access mailboxes' protocols (DiBella et al. 1992, section 2.1), driven on a
//! word memory without a simulation.

use smpsched_policy::dibella::Direction;

use super::multi_access::*;
use super::multi_access_post::Post;
use super::spin::{release, Step, TestMemory};
use crate::outcome::WordOp;
use crate::program::Op;

fn post(m: &mut TestMemory, l: Layout, q: usize, v: u64, last: usize) -> Option<usize> {
    let mut p = Post::new(l, q, v, last, 8);
    m.drive(|o| p.resume(o)).0
}

#[test]
fn post_poll_take_reply_collect() {
    let l = Layout::new(1 << 12, 3, 4, 16);
    let mut m = TestMemory::default();
    assert_eq!(post(&mut m, l, 1, 11, 3), Some(0));
    assert_eq!(post(&mut m, l, 1, 12, 3), Some(1));
    assert_eq!(m.get(l.bitmap(1)), 0b11);
    // A scheduler remembering mailbox 0 finds mailbox 1 first.
    let mut p = Poll::new(l, 1, 0, Direction::LeftToRight, 8);
    assert_eq!(m.drive(|o| p.resume(o)).0, Some(1));
    assert_eq!(m.get(l.bitmap(1)), 0b01);
    let mut t = TakeRequest::new(&l, 1, 1, 8);
    assert_eq!(m.drive(|o| t.resume(o)).0, 12);
    assert_eq!(m.get(l.inbox(1, 1)), TAKEN, "the OUT-box is reserved");
    let mut r = PutReply::new(&l, 1, 1, 12, 8);
    m.drive(|o| r.resume(o));
    let mut c = CollectReply::new(&l, 1, 1, 8);
    assert_eq!(m.drive(|o| c.resume(o)).0, 12);
    assert_eq!(m.get(l.outbox(1, 1)), 0);
    assert_eq!(
        m.get(l.inbox(1, 1)),
        0,
        "collected: the mailbox is free again"
    );
    // Right to left from mailbox 0 wraps to the highest set bit.
    let mut p = Poll::new(l, 1, 0, Direction::RightToLeft, 8);
    assert_eq!(m.drive(|o| p.resume(o)).0, Some(0));
    let mut p = Poll::new(l, 1, 0, Direction::RightToLeft, 8);
    assert_eq!(m.drive(|o| p.resume(o)).0, None, "empty");
    for k in 0..3 {
        m.apply(&release(l.bitmap_lock(k)));
    }
}

#[test]
fn a_full_queue_refuses_and_a_reserved_inbox_is_skipped() {
    let l = Layout::new(0, 1, 2, 16);
    let mut m = TestMemory::default();
    assert_eq!(post(&mut m, l, 0, 1, 1), Some(0));
    assert_eq!(post(&mut m, l, 0, 2, 1), Some(1));
    assert_eq!(post(&mut m, l, 0, 3, 1), None, "every mailbox in use");
    // Reserved by a scheduler (bit reset) but not yet emptied: still not free.
    let mut p = Poll::new(l, 0, 1, Direction::LeftToRight, 8);
    assert_eq!(m.drive(|o| p.resume(o)).0, Some(0));
    assert_eq!(post(&mut m, l, 0, 3, 1), None);
    let mut t = TakeRequest::new(&l, 0, 0, 8);
    assert_eq!(m.drive(|o| t.resume(o)).0, 1);
    // Taken, but its OUT-box is reserved for the reply until the client collects it.
    assert_eq!(post(&mut m, l, 0, 3, 1), None);
    let mut r = PutReply::new(&l, 0, 0, 1, 8);
    m.drive(|o| r.resume(o));
    assert_eq!(post(&mut m, l, 0, 3, 1), None, "replied, not yet collected");
    let mut c = CollectReply::new(&l, 0, 0, 8);
    assert_eq!(m.drive(|o| c.resume(o)).0, 1);
    assert_eq!(post(&mut m, l, 0, 3, 1), Some(0));
}

#[test]
fn a_lost_recheck_lets_go_and_searches_on() {
    // Two schedulers read the bitmap without the lock and see the same bit; the second to
    // take the lock finds it reset, lets go, and reserves the other request.
    let l = Layout::new(0, 1, 8, 16);
    let mut m = TestMemory::default();
    post(&mut m, l, 0, 5, 7);
    post(&mut m, l, 0, 6, 7);
    let mut a = Poll::new(l, 0, 7, Direction::LeftToRight, 8);
    let mut b = Poll::new(l, 0, 7, Direction::LeftToRight, 8);
    // Both scan.
    let oa = match a.resume(None) {
        Step::Op(op) => m.apply(&op),
        Step::Done(_) => unreachable!(),
    };
    let ob = match b.resume(None) {
        Step::Op(op) => m.apply(&op),
        Step::Done(_) => unreachable!(),
    };
    // A runs to completion first.
    let mut o = oa;
    let got_a = loop {
        match a.resume(o.as_ref()) {
            Step::Op(op) => o = m.apply(&op),
            Step::Done(r) => break r,
        }
    };
    let mut o = ob;
    let got_b = loop {
        match b.resume(o.as_ref()) {
            Step::Op(op) => o = m.apply(&op),
            Step::Done(r) => break r,
        }
    };
    assert_eq!(got_a, Some(0));
    assert_eq!(got_b, Some(1));
    assert_eq!((a.lost, b.lost), (0, 1));
}

#[test]
fn a_holding_take_processes_the_request_under_the_inbox_lock() {
    let l = Layout::new(0, 1, 4, 16);
    let mut m = TestMemory::default();
    post(&mut m, l, 0, 9, 3);
    let mut p = Poll::new(l, 0, 3, Direction::LeftToRight, 8);
    assert_eq!(m.drive(|o| p.resume(o)).0, Some(0));
    let mut t = TakeRequest::new(&l, 0, 0, 8).holding(300);
    let mut outcome = None;
    let mut computed = Vec::new();
    let got = loop {
        match t.resume(outcome.as_ref()) {
            Step::Op(Op::Compute(c)) => {
                computed.push((c, m.get(l.inbox_lock(0, 0)), m.get(l.inbox(0, 0))));
                outcome = None;
            }
            Step::Op(op) => outcome = m.apply(&op),
            Step::Done(r) => break r,
        }
    };
    assert_eq!(got, 9);
    assert_eq!(computed, vec![(300, 1, TAKEN)], "taken, still locked, once");
    assert_eq!(m.get(l.inbox_lock(0, 0)), 0);
    // Without a hold the take issues no computation (once the reply is collected).
    let mut c = CollectReply::new(&l, 0, 0, 8);
    m.drive(|o| c.resume(o));
    post(&mut m, l, 0, 10, 3);
    let mut t = TakeRequest::new(&l, 0, 0, 8);
    let (v, ops) = m.drive(|o| t.resume(o));
    assert_eq!((v, ops), (10, 4));
}

#[test]
fn a_holding_post_processes_the_request_under_the_inbox_lock_before_its_bit_is_set() {
    let l = Layout::new(0, 1, 2, 16);
    let mut m = TestMemory::default();
    let mut p = Post::new(l, 0, 7, 1, 8).holding(200);
    let mut outcome = None;
    let mut computed = Vec::new();
    let got = loop {
        match p.resume(outcome.as_ref()) {
            Step::Op(Op::Compute(c)) => {
                let seen = (m.get(l.inbox_lock(0, 0)), m.get(l.inbox(0, 0)));
                computed.push((c, seen, m.get(l.bitmap(0))));
                outcome = None;
            }
            Step::Op(op) => outcome = m.apply(&op),
            Step::Done(r) => break r,
        }
    };
    assert_eq!(got, Some(0));
    assert_eq!(
        computed,
        vec![(200, (1, 7), 0)],
        "filled, locked, not yet announced"
    );
    assert_eq!((m.get(l.inbox_lock(0, 0)), m.get(l.bitmap(0))), (0, 1));
    // A post that finds its box in use under the lock processes nothing there: mailbox 1 is
    // filled by a racing poster after this post's peek, and mailbox 0 is in use.
    let mut p = Post::new(l, 0, 8, 0, 8).holding(200);
    let mut outcome = None;
    let mut holds = 0;
    let got = loop {
        match p.resume(outcome.as_ref()) {
            Step::Op(Op::Compute(c)) => {
                holds += c;
                outcome = None;
            }
            Step::Op(op) => {
                let locking_box_1 = matches!(op, Op::Word { addr, op: WordOp::TestAndSet }
                    if addr == l.inbox_lock(0, 1));
                if locking_box_1 {
                    let addr = l.inbox(0, 1);
                    m.apply(&Op::Word {
                        addr,
                        op: WordOp::Store(99),
                    });
                }
                outcome = m.apply(&op);
            }
            Step::Done(r) => break r,
        }
    };
    assert_eq!(
        (got, holds),
        (None, 0),
        "box 1 taken by another, box 0 in use: no hold"
    );
}

/// Every operation a protocol issues, driven to the end on `m`.
fn ops_of<T>(
    m: &mut TestMemory,
    mut resume: impl FnMut(Option<&crate::outcome::Outcome>) -> Step<T>,
) -> (T, Vec<Op>) {
    let (mut outcome, mut ops) = (None, Vec::new());
    loop {
        match resume(outcome.as_ref()) {
            Step::Done(t) => return (t, ops),
            Step::Op(op) => {
                outcome = m.apply(&op);
                ops.push(op);
            }
        }
    }
}

fn is_tas(op: &Op, addr: u64) -> bool {
    matches!(op, Op::Word { addr: a, op: WordOp::TestAndSet } if *a == addr)
}

#[test]
fn a_post_reads_an_inbox_before_locking_it_and_copies_its_request_under_the_lock() {
    let l = Layout::new(0, 1, 2, 16).with_request_words(4);
    let mut m = TestMemory::default();
    let mut p = Post::new(l, 0, 7, 1, 8);
    let (got, ops) = ops_of(&mut m, |o| p.resume(o));
    assert_eq!(got, Some(0));
    let peek = Op::Word {
        addr: l.inbox(0, 0),
        op: WordOp::Load,
    };
    let lock = ops.iter().position(|o| is_tas(o, l.inbox_lock(0, 0)));
    let copy = ops.iter().position(|o| matches!(o, Op::Mem(_)));
    let unlock = ops.iter().position(|o| *o == release(l.inbox_lock(0, 0)));
    assert_eq!(ops[1], peek, "the IN-box is read before its lock is tried");
    let (lock, copy, unlock) = (lock.unwrap(), copy.unwrap(), unlock.unwrap());
    assert!(
        lock < copy && copy < unlock,
        "copied while holding the IN-box lock"
    );
    let Op::Mem(b) = &ops[copy] else {
        unreachable!()
    };
    assert_eq!((b.base, b.len), (l.inbox_body(0, 0), 32));
    assert!(
        l.inbox_body(0, 1) >= l.inbox_body(0, 0) + 32,
        "bodies do not overlap"
    );
    // Mailbox 0 taken but not collected: the next post reads it, skips it without its lock.
    let mut s = Poll::new(l, 0, 1, Direction::LeftToRight, 8);
    assert_eq!(m.drive(|o| s.resume(o)).0, Some(0));
    let mut t = TakeRequest::new(&l, 0, 0, 8);
    let (v, ops) = ops_of(&mut m, |o| t.resume(o));
    assert_eq!(v, 7);
    assert!(ops
        .iter()
        .any(|o| matches!(o, Op::Mem(b) if b.base == l.inbox_body(0, 0))));
    let mut p = Post::new(l, 0, 8, 1, 8);
    let (got, ops) = ops_of(&mut m, |o| p.resume(o));
    assert_eq!(got, Some(1));
    assert!(!ops.iter().any(|o| is_tas(o, l.inbox_lock(0, 0))));
}

#[test]
fn a_post_that_finds_its_inbox_filled_after_reading_it_empty_copies_nothing() {
    let l = Layout::new(0, 1, 1, 16).with_request_words(2);
    let mut m = TestMemory::default();
    let mut p = Post::new(l, 0, 5, 0, 8);
    let mut outcome = None;
    let mut ops = Vec::new();
    let got = loop {
        match p.resume(outcome.as_ref()) {
            Step::Done(r) => break r,
            Step::Op(op) => {
                if is_tas(&op, l.inbox_lock(0, 0)) {
                    // Another client filled it between the read and the lock.
                    m.apply(&Op::Word {
                        addr: l.inbox(0, 0),
                        op: WordOp::Store(9),
                    });
                }
                outcome = m.apply(&op);
                ops.push(op);
            }
        }
    };
    assert_eq!(got, None);
    assert!(!ops.iter().any(|o| matches!(o, Op::Mem(_))));
    assert_eq!(m.get(l.inbox(0, 0)), 9);
}

/// The cycles of every `Compute` a protocol asks for, with its result.
fn computes<T>(
    m: &mut TestMemory,
    mut resume: impl FnMut(Option<&crate::outcome::Outcome>) -> Step<T>,
) -> (T, Vec<u64>) {
    let mut spent = Vec::new();
    let (t, _) = m.drive(|o| {
        let s = resume(o);
        if let Step::Op(Op::Compute(c)) = &s {
            spent.push(*c);
        }
        s
    });
    (t, spent)
}

#[test]
fn a_searching_poll_pays_for_each_bit_it_examines_before_the_lock() {
    let l = Layout::new(0, 1, 32, 16);
    let mut m = TestMemory::default();
    for v in 1..=3 {
        post(&mut m, l, 0, v, 31);
    }
    // Mailboxes 0, 1, 2 hold requests; a scheduler that last served mailbox 30 examines 31, 0.
    let mut p = Poll::new(l, 0, 30, Direction::LeftToRight, 8).searching(25);
    assert_eq!(computes(&mut m, |o| p.resume(o)), (Some(0), vec![50]));
    // Right to left from mailbox 0: 31 down to 2, thirty bits.
    let mut p = Poll::new(l, 0, 0, Direction::RightToLeft, 8).searching(25);
    assert_eq!(computes(&mut m, |o| p.resume(o)), (Some(2), vec![750]));
    let mut p = Poll::new(l, 0, 0, Direction::LeftToRight, 8).searching(25);
    assert_eq!(computes(&mut m, |o| p.resume(o)), (Some(1), vec![25]));
    // Empty now: the whole bitmap is examined, and nothing locked.
    let mut p = Poll::new(l, 0, 1, Direction::LeftToRight, 8).searching(25);
    assert_eq!(computes(&mut m, |o| p.resume(o)), (None, vec![800]));
    assert_eq!(m.get(l.bitmap_lock(0)), 0);
    // Without `searching` the search is free.
    post(&mut m, l, 0, 4, 31);
    let mut p = Poll::new(l, 0, 30, Direction::LeftToRight, 8);
    assert_eq!(computes(&mut m, |o| p.resume(o)).1, Vec::<u64>::new());
}

#[test]
fn a_searching_post_pays_for_each_bit_it_examines_before_the_in_box() {
    let l = Layout::new(0, 1, 32, 16);
    let mut m = TestMemory::default();
    for v in 1..=3 {
        post(&mut m, l, 0, v, 31);
    }
    // Mailboxes 0, 1, 2 hold requests; a client that last used mailbox 31 examines 0 to 3.
    let mut p = Post::new(l, 0, 4, 31, 8).searching(25);
    assert_eq!(computes(&mut m, |o| p.resume(o)), (Some(3), vec![100]));
    // From mailbox 3 the next bit is free: one bit.
    let mut p = Post::new(l, 0, 5, 3, 8).searching(25);
    assert_eq!(computes(&mut m, |o| p.resume(o)), (Some(4), vec![25]));
    // A free bit whose IN-box is still in use (a reply not yet collected) costs its bits, the
    // read, then the bits to the next: mailbox 5's IN-box holds a taken request.
    m.apply(&Op::Word {
        addr: l.inbox(0, 5),
        op: WordOp::Store(TAKEN),
    });
    let mut p = Post::new(l, 0, 6, 4, 8).searching(25);
    assert_eq!(computes(&mut m, |o| p.resume(o)), (Some(6), vec![25, 25]));
    // Every bit set: the whole bitmap is examined, and nothing locked.
    let full = Layout::new(0, 1, 4, 16);
    let mut m = TestMemory::default();
    for v in 1..=4 {
        post(&mut m, full, 0, v, 3);
    }
    let mut p = Post::new(full, 0, 9, 0, 8).searching(25);
    assert_eq!(computes(&mut m, |o| p.resume(o)), (None, vec![100]));
    assert_eq!(m.get(full.inbox_lock(0, 0)), 0);
    // Without `searching` the search is free.
    let mut p = Post::new(l, 0, 7, 6, 8);
    assert_eq!(computes(&mut m, |o| p.resume(o)).1, Vec::<u64>::new());
}
