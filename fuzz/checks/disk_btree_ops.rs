//! Model-based check of the disk B+-tree (`DiskBTree<u64>`, 8-byte payloads, 512-byte blocks
//! so that a few dozen keys split leaves and grow the tree): the input picks a bulk load (size,
//! fill factor, resident levels), then a sequence of inserts, deletes, gets, lower bounds,
//! scans, flushes, reopens (with any resident mode) and armed faults, run against a
//! `BTreeMap<u64, [u8; 8]>`.
//!
//! Until a fault is armed every answer must be the model's, and the tree reopened at the end
//! must hold the model. The tree has no log, so after a fault its contents are not defined
//! (see `lidx::raw::disk::btree::update`): from then on every operation, reopens included, must
//! only return or give an error with a message, never panic; a reopen that fails ends the run.

use std::collections::BTreeMap;

use lidx::disk::DiskIndex;
use lidx::disk::{DiskBTree, DiskBTreeParams, Resident};
use lidx::io::{FaultPlan, SimProfile, Storage};

use super::input::{arm, Input, MAX_OPS};

const NAME: &str = "tree";
const RESIDENT: [Resident; 4] = [
    Resident::None,
    Resident::AllInner,
    Resident::TopLevels(1),
    Resident::TopLevels(2),
];

type Model = BTreeMap<u64, [u8; 8]>;

enum Op {
    Insert(u64),
    Delete(u64),
    Get(u64),
    LowerBound(u64),
    Scan(u64, usize),
    Flush,
    Reopen(Resident),
    Fault(u8, u8),
}

/// Multiples of 5 up to 1235 (the bulk load's keys are multiples of 10), or the largest keys.
fn key(input: &mut Input) -> Option<u64> {
    let b = input.byte()?;
    Some(if b >= 0xf8 {
        u64::MAX - u64::from(b - 0xf8)
    } else {
        u64::from(b) * 5
    })
}

fn op(input: &mut Input) -> Option<Op> {
    Some(match input.byte()? % 12 {
        0..=3 => Op::Insert(key(input)?),
        4 | 5 => Op::Delete(key(input)?),
        6 => Op::Get(key(input)?),
        7 => Op::LowerBound(key(input)?),
        8 => Op::Scan(key(input)?, usize::from(input.byte()?)),
        9 => Op::Flush,
        10 => Op::Reopen(RESIDENT[usize::from(input.byte()? % 4)]),
        _ => Op::Fault(input.byte()?, input.byte()?),
    })
}

/// The model's first `limit` entries from `start`, as a scan gives them.
fn expected_scan(model: &Model, start: u64, limit: usize) -> (Vec<u64>, Vec<u8>) {
    let entries = model.range(start..).take(limit);
    let keys = entries.clone().map(|(k, _)| *k).collect();
    let payloads = entries.flat_map(|(_, p)| *p).collect();
    (keys, payloads)
}

/// An answer after a fault: any value, or an error that says something.
fn said<T>(r: lidx::Result<T>) {
    if let Err(e) = r {
        assert!(!e.to_string().is_empty());
    }
}

struct Run {
    storage: Storage,
    plan: std::sync::Arc<FaultPlan>,
    /// `None` once a reopen after a fault failed.
    tree: Option<DiskBTree<u64>>,
    model: Model,
    /// No fault was armed: answers are checked against the model.
    checked: bool,
}

impl Run {
    /// Does `op`; false when the tree could not be reopened after a fault.
    fn step(&mut self, op: Op, payload: [u8; 8]) -> bool {
        if !self.checked {
            return self.unchecked(op, payload);
        }
        let mut buf = [0u8; 8];
        let tree = self.tree.as_mut().expect("an open tree");
        match op {
            Op::Insert(k) => {
                let replaced = tree.insert(k, &payload).expect("insert");
                assert_eq!(
                    replaced,
                    self.model.insert(k, payload).is_some(),
                    "insert {k}"
                );
            }
            Op::Delete(k) => {
                let removed = tree.delete(&k).expect("delete");
                assert_eq!(removed, self.model.remove(&k).is_some(), "delete {k}");
            }
            Op::Get(k) => {
                let found = tree.get(&k, &mut buf).expect("get");
                assert_eq!(found.then_some(buf), self.model.get(&k).copied(), "get {k}");
            }
            Op::LowerBound(k) => {
                let found = tree.lower_bound(&k, &mut buf).expect("lower_bound");
                let want = self.model.range(k..).next().map(|(k, p)| (*k, *p));
                assert_eq!(found.map(|f| (f, buf)), want, "lower_bound {k}");
            }
            Op::Scan(k, limit) => {
                let (mut keys, mut payloads) = (Vec::new(), Vec::new());
                let n = tree
                    .scan(&k, limit, &mut keys, &mut payloads)
                    .expect("scan");
                assert_eq!(n, keys.len());
                assert_eq!(
                    (keys, payloads),
                    expected_scan(&self.model, k, limit),
                    "scan {k}"
                );
            }
            Op::Flush => tree.flush().expect("flush"),
            Op::Reopen(resident) => {
                self.reopen(resident).expect("reopen");
                let len = self.tree.as_ref().map_or(0, |t| t.len());
                assert_eq!(len, self.model.len() as u64, "entries after a reopen");
            }
            Op::Fault(after, how) => {
                arm(&self.plan, after, how);
                self.checked = false;
            }
        }
        true
    }

    fn unchecked(&mut self, op: Op, payload: [u8; 8]) -> bool {
        let mut buf = [0u8; 8];
        let tree = self.tree.as_mut().expect("an open tree");
        match op {
            Op::Insert(k) => said(tree.insert(k, &payload)),
            Op::Delete(k) => said(tree.delete(&k)),
            Op::Get(k) => said(tree.get(&k, &mut buf)),
            Op::LowerBound(k) => said(tree.lower_bound(&k, &mut buf)),
            Op::Scan(k, limit) => said(tree.scan(&k, limit, &mut Vec::new(), &mut Vec::new())),
            Op::Flush => said(tree.flush()),
            Op::Reopen(resident) => {
                if let Err(e) = self.reopen(resident) {
                    assert!(!e.to_string().is_empty());
                    return false;
                }
            }
            Op::Fault(after, how) => arm(&self.plan, after, how),
        }
        true
    }

    /// Drops the tree (which writes its header when something changed) and opens it again.
    fn reopen(&mut self, resident: Resident) -> lidx::Result<()> {
        drop(self.tree.take());
        self.tree = Some(DiskBTree::open(&self.storage, NAME, resident, true)?);
        Ok(())
    }
}

/// Runs the operations `data` decodes to on a bulk-loaded tree; see the module docs.
pub fn check(data: &[u8]) {
    let mut input = Input::new(data);
    let Some(setup) = input.byte() else {
        return;
    };
    let plan = FaultPlan::new();
    let storage = Storage::in_memory(SimProfile::named("ram").expect("a built-in profile"), 512)
        .expect("a 512-byte block storage")
        .with_faults(std::sync::Arc::clone(&plan));
    let keys: Vec<u64> = (0..u64::from(setup >> 3) * 8).map(|i| i * 10).collect();
    let params = DiskBTreeParams {
        payload_size: 8,
        fill_factor: if setup & 4 == 4 { 0.5 } else { 1.0 },
        resident: RESIDENT[usize::from(setup % 4)],
    };
    let loaded = |i: usize| (u64::MAX - i as u64).to_le_bytes();
    let tree = DiskBTree::build(
        &storage,
        NAME,
        &keys,
        |i, _, out| out.copy_from_slice(&loaded(i)),
        params,
    )
    .expect("a bulk load");
    let model = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, loaded(i)))
        .collect();
    let mut run = Run {
        storage,
        plan,
        tree: Some(tree),
        model,
        checked: true,
    };
    for n in 0..MAX_OPS {
        let Some(op) = op(&mut input) else {
            break;
        };
        if !run.step(op, (n as u64).to_le_bytes()) {
            return;
        }
    }
    if run.checked {
        run.reopen(Resident::AllInner).expect("the final reopen");
        let (keys, payloads) = expected_scan(&run.model, 0, usize::MAX);
        let (mut got_keys, mut got_payloads) = (Vec::new(), Vec::new());
        let tree = run.tree.as_ref().expect("a reopened tree");
        tree.scan(&0, usize::MAX, &mut got_keys, &mut got_payloads)
            .expect("the final scan");
        assert_eq!(
            (got_keys, got_payloads),
            (keys, payloads),
            "the tree after a reopen"
        );
        assert_eq!(tree.len(), run.model.len() as u64);
    }
}
