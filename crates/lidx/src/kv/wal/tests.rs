//! Unit tests of the log: codec, replay, torn tails, group commit, rotation.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::*;
use crate::error::{Error, Result};
use crate::key::Key;

static SYNC_DELAY_US: AtomicU64 = AtomicU64::new(0);

/// Makes every fsync of the unit tests take at least the configured time, so that
/// concurrent appenders overlap deterministically enough to form groups.
pub(super) fn sync_delay() {
    let us = SYNC_DELAY_US.load(Ordering::Relaxed);
    if us > 0 {
        std::thread::sleep(Duration::from_micros(us));
    }
}

fn put(k: u64, v: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut key = vec![0u8; 8];
    k.write_to(&mut key);
    (key, v.to_vec())
}

/// A replayed record: sequence number, key, value (`None` for a delete).
type Logged = (Seq, Vec<u8>, Option<Vec<u8>>);

fn collect(dir: &Path) -> Result<(Vec<Logged>, ReplayReport)> {
    let mut out = Vec::new();
    let report = replay(dir, |seq, r| {
        let value = match r {
            Record::Put { value, .. } => Some(value.to_vec()),
            Record::Delete { .. } => None,
            Record::Batch { ops } => Some(ops.to_vec()),
        };
        out.push((seq, r.key().to_vec(), value));
        Ok(())
    })?;
    Ok((out, report))
}

fn write_some(dir: &Path, n: u64) {
    let (wal, _) = Wal::open(dir, WalOptions::default(), |_, _| Ok(())).unwrap();
    for i in 0..n {
        let (k, v) = put(i, &vec![i as u8; (i % 5) as usize]);
        let rec = if i % 4 == 3 {
            Record::Delete { key: &k }
        } else {
            Record::Put { key: &k, value: &v }
        };
        assert_eq!(wal.append(&[rec]).unwrap(), i + 1);
    }
}

#[test]
fn round_trip_reopen_and_key_decoding() {
    let dir = tempfile::tempdir().unwrap();
    write_some(dir.path(), 10);
    let (recs, report) = collect(dir.path()).unwrap();
    assert_eq!(report.records, 10);
    assert_eq!((report.first_seq, report.next_seq), (1, 11));
    assert_eq!(report.torn_tail, None);
    for (i, (seq, key, value)) in recs.iter().enumerate() {
        let i = i as u64;
        assert_eq!(*seq, i + 1);
        let r = Record::Delete { key };
        assert_eq!(r.key_as::<u64>().unwrap(), i);
        assert!(matches!(
            r.key_as::<[u8; 16]>(),
            Err(Error::KeyTypeMismatch { .. })
        ));
        let want = (i % 4 != 3).then(|| vec![i as u8; (i % 5) as usize]);
        assert_eq!(*value, want);
    }
    // Reopen continues the sequence in the same segment.
    let (wal, report) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
    assert_eq!(report.next_seq, 11);
    assert_eq!(wal.append(&[Record::Delete { key: b"x" }]).unwrap(), 11);
    assert_eq!(wal.segments().len(), 1);
}

#[test]
fn torn_tail_at_every_offset_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    write_some(dir.path(), 4);
    let seg = segment_path(dir.path(), 1);
    let full = fs::read(&seg).unwrap();
    // The last record (seq 4) is a delete of an 8-byte key.
    let start = full.len() - Record::Delete { key: &[0; 8] }.encoded_len();
    assert_eq!(decode_record("t", 0, &full[start..]).unwrap().0, 4);
    for cut in start + 1..full.len() {
        fs::write(&seg, &full[..cut]).unwrap();
        let (got, report) = collect(dir.path()).unwrap();
        assert_eq!(got.len(), 3, "cut at {cut}");
        assert_eq!(report.next_seq, 4);
        let torn = report.torn_tail.expect("torn tail reported");
        assert_eq!(torn.offset, start as u64);
        assert_eq!(torn.bytes, (cut - start) as u64);
        assert_eq!(fs::metadata(&seg).unwrap().len(), start as u64, "truncated");
        // A second replay sees a clean log.
        assert_eq!(collect(dir.path()).unwrap().1.torn_tail, None);
    }
    // A garbled (not just short) last record is a torn tail too.
    let mut garbled = full.clone();
    let n = garbled.len();
    garbled[n - 3] ^= 0x40;
    fs::write(&seg, &garbled).unwrap();
    let (got, report) = collect(dir.path()).unwrap();
    assert_eq!(
        (got.len(), report.torn_tail.unwrap().offset),
        (3, start as u64)
    );
}

#[test]
fn corrupt_middle_record_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    write_some(dir.path(), 6);
    let seg = segment_path(dir.path(), 1);
    let full = fs::read(&seg).unwrap();
    // Every byte of records 1..=4 (of 6): flipping it must give Corrupt, never fewer records.
    let mut off = SEGMENT_HEADER_BYTES;
    let mut bounds = Vec::new();
    while off < full.len() {
        let (_, _, n) = decode_record("t", 0, &full[off..]).unwrap();
        bounds.push((off, off + n));
        off += n;
    }
    for &(a, b) in &bounds[..4] {
        for at in a..b {
            let mut bad = full.clone();
            bad[at] ^= 0x01;
            fs::write(&seg, &bad).unwrap();
            let got = collect(dir.path());
            assert!(
                matches!(got, Err(Error::Corrupt { .. })),
                "flip at {at}: {got:?}"
            );
        }
    }
    // A bad segment header is typed.
    let mut bad = full.clone();
    bad[0] ^= 1;
    fs::write(&seg, &bad).unwrap();
    assert!(matches!(collect(dir.path()), Err(Error::BadMagic { .. })));
    let mut bad = full.clone();
    bad[8] = 9;
    fs::write(&seg, &bad).unwrap();
    assert!(matches!(
        collect(dir.path()),
        Err(Error::UnsupportedVersion { got: 9, .. })
    ));
    fs::write(&seg, &full[..20]).unwrap();
    assert!(matches!(collect(dir.path()), Err(Error::Truncated { .. })));
}

#[test]
fn rotation_and_removal() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
    let (k, v) = put(1, b"v");
    let rec = Record::Put { key: &k, value: &v };
    wal.append(&[rec, rec]).unwrap();
    assert_eq!(wal.rotate().unwrap(), 3);
    assert_eq!(wal.rotate().unwrap(), 3, "empty active segment stays");
    wal.append(&[rec]).unwrap();
    assert_eq!(wal.rotate().unwrap(), 4);
    wal.append(&[rec, rec]).unwrap();
    assert_eq!(wal.segments().len(), 3);
    drop(wal);
    let (recs, report) = collect(dir.path()).unwrap();
    assert_eq!((recs.len(), report.segments, report.next_seq), (5, 3, 6));

    let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
    assert_eq!(wal.remove_up_to(2).unwrap(), 1);
    assert_eq!(wal.remove_up_to(2).unwrap(), 0);
    assert_eq!(
        wal.remove_up_to(u64::MAX).unwrap(),
        1,
        "the active segment stays"
    );
    assert_eq!(wal.append(&[rec]).unwrap(), 6);
    drop(wal);
    let (recs, report) = collect(dir.path()).unwrap();
    assert_eq!(recs.iter().map(|r| r.0).collect::<Vec<_>>(), vec![4, 5, 6]);
    assert_eq!(report.first_seq, 4);

    // A missing segment in the middle is detected.
    let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
    wal.rotate().unwrap();
    wal.append(&[rec]).unwrap();
    wal.rotate().unwrap();
    wal.append(&[rec]).unwrap();
    let middle = wal.segments()[1].clone();
    drop(wal);
    fs::remove_file(middle).unwrap();
    assert!(matches!(collect(dir.path()), Err(Error::Corrupt { .. })));
}

#[test]
fn group_commit_one_fsync_per_group() {
    let dir = tempfile::tempdir().unwrap();
    let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
    SYNC_DELAY_US.store(2000, Ordering::Relaxed);
    let per_thread = 40u64;
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let wal = &wal;
            s.spawn(move || {
                for i in 0..per_thread {
                    let (k, v) = put(t << 32 | i, b"value");
                    wal.append(&[Record::Put { key: &k, value: &v }]).unwrap();
                }
            });
        }
    });
    SYNC_DELAY_US.store(0, Ordering::Relaxed);
    let s = wal.stats();
    assert_eq!(s.appends, 4 * per_thread);
    assert_eq!(s.syncs, s.groups, "one fsync per group write");
    assert!(
        s.groups * 2 < s.appends,
        "4 threads behind a 2 ms fsync must share fsyncs: {s:?}"
    );
    assert_eq!(wal.synced_seq(), 4 * per_thread);
    drop(wal);
    let (recs, _) = collect(dir.path()).unwrap();
    let mut keys: Vec<u64> = recs
        .iter()
        .map(|r| Record::Delete { key: &r.1 }.key_as::<u64>().unwrap())
        .collect();
    keys.sort_unstable();
    let mut want: Vec<u64> = (0..4u64)
        .flat_map(|t| (0..per_thread).map(move |i| t << 32 | i))
        .collect();
    want.sort_unstable();
    assert_eq!(keys, want);
}

#[test]
fn policies_without_fsync_on_append() {
    for policy in [FsyncPolicy::EveryMs(1), FsyncPolicy::Never] {
        let dir = tempfile::tempdir().unwrap();
        let opts = WalOptions { fsync: policy };
        let (wal, _) = Wal::open(dir.path(), opts, |_, _| Ok(())).unwrap();
        for i in 0..20 {
            let (k, v) = put(i, b"v");
            wal.append(&[Record::Put { key: &k, value: &v }]).unwrap();
        }
        assert_eq!(wal.stats().groups, 20);
        if policy == FsyncPolicy::Never {
            assert_eq!(wal.stats().syncs, 0);
        } else {
            let t = std::time::Instant::now();
            while wal.synced_seq() < 20 && t.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(1));
            }
            assert_eq!(wal.synced_seq(), 20, "background sync");
        }
        assert_eq!(wal.sync().unwrap(), 20);
        drop(wal);
        assert_eq!(collect(dir.path()).unwrap().1.records, 20);
    }
    let dir = tempfile::tempdir().unwrap();
    let opts = WalOptions {
        fsync: FsyncPolicy::EveryMs(0),
    };
    assert!(matches!(
        Wal::open(dir.path(), opts, |_, _| Ok(())),
        Err(Error::InvalidParameter { .. })
    ));
}

#[test]
fn a_batch_is_one_record_and_a_torn_batch_is_cut_whole() {
    let dir = tempfile::tempdir().unwrap();
    let ops = vec![7u8; 300];
    {
        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        wal.append(&[Record::Put {
            key: b"a",
            value: b"1",
        }])
        .unwrap();
        assert_eq!(wal.append(&[Record::Batch { ops: &ops }]).unwrap(), 2);
    }
    let (logged, _) = collect(dir.path()).unwrap();
    assert_eq!(logged[1], (2, Vec::new(), Some(ops.clone())));
    let seg = super::replay::segment_path(dir.path(), 1);
    let len = std::fs::metadata(&seg).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&seg).unwrap();
    f.set_len(len - 100).unwrap();
    let (logged, report) = collect(dir.path()).unwrap();
    assert_eq!(logged.len(), 1, "the torn batch is dropped whole");
    assert!(report.torn_tail.is_some());
}
