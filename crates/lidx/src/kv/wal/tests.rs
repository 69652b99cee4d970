//! Unit tests of the log: codec, replay, torn tails, group commit, rotation.

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::replay::replay_read_only;
use super::*;
use crate::error::{Error, Result};
use crate::key::Key;
use crate::kv::stamp::le_u32;

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
    collect_with(dir, WalRecovery::default())
}

fn collect_with(dir: &Path, mode: WalRecovery) -> Result<(Vec<Logged>, ReplayReport)> {
    let mut out = Vec::new();
    let report = replay(dir, mode, |seq, r| {
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
    assert_eq!(report.dropped, None);
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
        let torn = report.dropped.expect("torn tail reported");
        assert_eq!(torn.offset, start as u64);
        assert_eq!(torn.bytes, (cut - start) as u64);
        assert_eq!(fs::metadata(&seg).unwrap().len(), start as u64, "truncated");
        // A second replay sees a clean log.
        assert_eq!(collect(dir.path()).unwrap().1.dropped, None);
    }
    // The file system grew the file but the data never reached the disk: zeros where the
    // record is (all of it, or its tail), incomplete too; its bytes are kept all the same.
    for from in [start, start + 10] {
        let mut zeros = full[..from].to_vec();
        zeros.resize(full.len() + 24, 0);
        fs::write(&seg, &zeros).unwrap();
        let (got, report) = collect(dir.path()).unwrap();
        let dropped = report.dropped.unwrap();
        assert_eq!((got.len(), dropped.kind), (3, DamageKind::ZeroFilled));
        let kept = dropped.kept_in.unwrap();
        assert_eq!(fs::read(&kept).unwrap(), &zeros[start..]);
        fs::remove_file(kept).unwrap();
    }
}

/// Issue 13: a complete last record whose checksum fails was cut as a torn tail, even under
/// `FsyncPolicy::Always`, where it may have been acknowledged. Now the default refuses it, and
/// the modes that drop it keep a copy.
#[test]
fn a_complete_damaged_last_record_is_refused_unless_the_mode_drops_it() {
    let dir = tempfile::tempdir().unwrap();
    write_some(dir.path(), 4);
    let seg = segment_path(dir.path(), 1);
    let full = fs::read(&seg).unwrap();
    let start = full.len() - Record::Delete { key: &[0; 8] }.encoded_len();
    let mut garbled = full.clone();
    let n = garbled.len();
    garbled[n - 3] ^= 0x40;
    for mode in [WalRecovery::AbsoluteConsistency, WalRecovery::TornTail] {
        fs::write(&seg, &garbled).unwrap();
        match collect_with(dir.path(), mode) {
            Err(Error::Corrupt { what, .. }) => {
                assert!(what.contains("complete but damaged"), "{what}");
                assert!(what.contains("tolerate-corrupted-tail"), "{what}");
            }
            other => panic!("{mode}: {other:?}"),
        }
        assert_eq!(fs::read(&seg).unwrap(), garbled, "{mode} changes nothing");
    }
    for mode in [WalRecovery::TolerateCorruptedTail, WalRecovery::PointInTime] {
        fs::write(&seg, &garbled).unwrap();
        let (got, report) = collect_with(dir.path(), mode).unwrap();
        let dropped = report.dropped.expect("reported");
        assert_eq!(got.len(), 3, "{mode}");
        assert_eq!(
            (dropped.kind, dropped.offset, dropped.first_seq),
            (DamageKind::Corrupt, start as u64, 4)
        );
        let kept = dropped.kept_in.expect("a copy is kept");
        assert_eq!(fs::read(&kept).unwrap(), &garbled[start..]);
        assert_eq!(fs::metadata(&seg).unwrap().len(), start as u64);
        fs::remove_file(kept).unwrap();
    }
}

#[test]
fn absolute_consistency_refuses_even_a_torn_tail_and_read_only_cuts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_some(dir.path(), 4);
    let seg = segment_path(dir.path(), 1);
    let full = fs::read(&seg).unwrap();
    let torn = &full[..full.len() - 3];
    fs::write(&seg, torn).unwrap();
    let got = collect_with(dir.path(), WalRecovery::AbsoluteConsistency);
    assert!(
        matches!(&got, Err(Error::Corrupt { what, .. }) if what.contains("incomplete")),
        "{got:?}"
    );
    let mut seen = 0;
    let report = replay_read_only(dir.path(), WalRecovery::TornTail, |_, _| {
        seen += 1;
        Ok(())
    })
    .unwrap();
    let dropped = report.dropped.unwrap();
    assert_eq!(
        (seen, dropped.cut, dropped.kind),
        (3, false, DamageKind::Incomplete)
    );
    assert_eq!(
        fs::read(&seg).unwrap(),
        torn,
        "a read-only replay changes no file"
    );
}

#[test]
fn point_in_time_stops_at_the_first_damage_and_sets_the_rest_aside() {
    let dir = tempfile::tempdir().unwrap();
    let (k, v) = put(1, b"value");
    let rec = Record::Put { key: &k, value: &v };
    {
        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        wal.append(&[rec, rec, rec]).unwrap();
        wal.rotate().unwrap();
        wal.append(&[rec, rec]).unwrap();
        wal.rotate().unwrap();
        wal.append(&[rec]).unwrap();
    }
    let first = segment_path(dir.path(), 1);
    let full = fs::read(&first).unwrap();
    // Damage record 2 of the first segment: valid records follow it.
    let at = SEGMENT_HEADER_BYTES + rec.encoded_len() + 20;
    let mut bad = full.clone();
    bad[at] ^= 1;
    fs::write(&first, &bad).unwrap();
    for mode in [WalRecovery::TornTail, WalRecovery::TolerateCorruptedTail] {
        assert!(matches!(
            collect_with(dir.path(), mode),
            Err(Error::Corrupt { .. })
        ));
    }
    let (got, report) = collect_with(dir.path(), WalRecovery::PointInTime).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!((report.next_seq, report.segments), (2, 1));
    let dropped = report.dropped.unwrap();
    assert_eq!((dropped.kind, dropped.first_seq), (DamageKind::Corrupt, 2));
    assert_eq!(dropped.segments.len(), 2);
    for s in &dropped.segments {
        assert!(s.to_string_lossy().ends_with(".log.dropped"), "{s:?}");
        assert!(s.exists());
    }
    assert_eq!(
        fs::read(dropped.kept_in.unwrap()).unwrap(),
        &bad[SEGMENT_HEADER_BYTES + rec.encoded_len()..]
    );
    // The log goes on from record 2 in the first segment.
    let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
    assert_eq!(wal.append(&[rec]).unwrap(), 2);
    drop(wal);
    let (got, report) = collect(dir.path()).unwrap();
    assert_eq!((got.len(), report.dropped), (2, None));
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
        let opts = WalOptions {
            fsync: policy,
            ..WalOptions::default()
        };
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
        ..WalOptions::default()
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
    assert!(report.dropped.is_some());
}

/// Replay maps segments: a segment another handle holds (a reader's replay holds a shared lock
/// on the segment it maps) is not cut under it; the cut is refused as `Locked` and the file
/// stays whole, and it goes ahead once the reader is done.
#[test]
fn a_torn_tail_is_not_cut_while_another_replay_maps_the_segment() {
    let dir = tempfile::tempdir().unwrap();
    write_some(dir.path(), 4);
    let seg = segment_path(dir.path(), 1);
    let full = fs::read(&seg).unwrap();
    fs::write(&seg, &full[..full.len() - 3]).unwrap();
    let reader = fs::File::open(&seg).unwrap();
    reader.lock_shared().unwrap();
    let err = collect(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    assert_eq!(
        fs::metadata(&seg).unwrap().len(),
        full.len() as u64 - 3,
        "not cut"
    );
    let files = fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(files, 1, "no copy of the tail left aside");
    drop(reader);
    let (got, report) = collect(dir.path()).unwrap();
    assert_eq!((got.len(), report.next_seq), (3, 4));
}

/// Options of a log that seals its segments without an fsync.
fn sealing_unsynced() -> WalOptions {
    WalOptions {
        fsync: FsyncPolicy::Never,
        seal_unsynced: true,
        ..WalOptions::default()
    }
}

#[test]
fn under_never_a_sealing_log_fsyncs_sealed_segments_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (k, v) = put(1, b"value");
    let rec = Record::Put { key: &k, value: &v };
    let (wal, _) = Wal::open(dir.path(), sealing_unsynced(), |_, _| Ok(())).unwrap();
    wal.append(&[rec, rec]).unwrap();
    wal.rotate().unwrap();
    wal.append(&[rec]).unwrap();
    wal.rotate().unwrap();
    assert_eq!(
        wal.stats().syncs,
        0,
        "no segment was fsynced at its sealing"
    );
    assert_eq!(wal.synced_seq(), 0);
    for path in wal.segments() {
        let bytes = fs::read(&path).unwrap();
        assert_eq!(le_u32(&bytes, 12), SEALED_UNSYNCED, "{path:?}");
    }
    // A removed sealed segment is not synced later; the other sealed one and the active are.
    wal.remove_up_to(2).unwrap();
    assert_eq!(wal.sync().unwrap(), 3);
    assert_eq!((wal.stats().syncs, wal.synced_seq()), (2, 3));
    drop(wal);

    // The same options under `Always` (or `seal_unsynced` off) fsync at every sealing, and
    // their segments say nothing of it.
    for options in [
        WalOptions {
            seal_unsynced: true,
            ..WalOptions::default()
        },
        WalOptions {
            fsync: FsyncPolicy::Never,
            ..WalOptions::default()
        },
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (wal, _) = Wal::open(dir.path(), options, |_, _| Ok(())).unwrap();
        wal.append(&[rec]).unwrap();
        let syncs = wal.stats().syncs;
        wal.rotate().unwrap();
        assert_eq!(wal.stats().syncs, syncs + 1, "{options:?}");
        assert_eq!(wal.synced_seq(), 1);
        let bytes = fs::read(&wal.segments()[1]).unwrap();
        assert_eq!(le_u32(&bytes, 12), 0);
    }
}

#[test]
fn a_torn_end_of_a_segment_sealed_unsynced_is_cut_and_the_later_segments_set_aside() {
    let (k, v) = put(1, b"value");
    let rec = Record::Put { key: &k, value: &v };
    for sealing in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let options = if sealing {
            sealing_unsynced()
        } else {
            WalOptions::default()
        };
        {
            let (wal, _) = Wal::open(dir.path(), options, |_, _| Ok(())).unwrap();
            wal.append(&[rec, rec, rec]).unwrap();
            wal.rotate().unwrap();
            wal.append(&[rec, rec]).unwrap();
        }
        // A power loss wrote the later segment back but not the end of the first one.
        let first = segment_path(dir.path(), 1);
        let full = fs::read(&first).unwrap();
        let keep = SEGMENT_HEADER_BYTES + rec.encoded_len() + 7;
        fs::write(&first, &full[..keep]).unwrap();
        if !sealing {
            // A segment fsynced at its sealing cannot end torn: that is damage.
            assert!(matches!(collect(dir.path()), Err(Error::Corrupt { .. })));
            continue;
        }
        assert!(matches!(
            collect_with(dir.path(), WalRecovery::AbsoluteConsistency),
            Err(Error::Corrupt { .. })
        ));
        let (got, report) = collect(dir.path()).unwrap();
        assert_eq!(got.len(), 1, "the longest valid prefix");
        assert_eq!(report.next_seq, 2);
        let dropped = report.dropped.unwrap();
        assert_eq!(
            (dropped.kind, dropped.first_seq),
            (DamageKind::Incomplete, 2)
        );
        assert_eq!(dropped.segments.len(), 1);
        assert!(
            dropped.segments[0].exists(),
            "the later segment is kept aside"
        );
        // The log goes on from record 2.
        let (wal, _) = Wal::open(dir.path(), options, |_, _| Ok(())).unwrap();
        assert_eq!(wal.append(&[rec]).unwrap(), 2);
        drop(wal);
        let (got, report) = collect(dir.path()).unwrap();
        assert_eq!((got.len(), report.dropped), (2, None));
    }
}

#[test]
fn a_version_2_segment_is_read_and_appended_to() {
    let dir = tempfile::tempdir().unwrap();
    write_some(dir.path(), 3);
    let seg = segment_path(dir.path(), 1);
    let mut bytes = fs::read(&seg).unwrap();
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    let crc = crc32c::crc32c(&bytes[..40]);
    bytes[40..44].copy_from_slice(&crc.to_le_bytes());
    fs::write(&seg, &bytes).unwrap();
    let (wal, _) = Wal::open(dir.path(), sealing_unsynced(), |_, _| Ok(())).unwrap();
    let (k, v) = put(9, b"v");
    assert_eq!(
        wal.append(&[Record::Put { key: &k, value: &v }]).unwrap(),
        4
    );
    // The open sealed the version 2 segment (fsynced: its header does not say otherwise) and
    // appends to a new, flagged, version 3 one.
    let segments = wal.segments();
    assert_eq!(segments.len(), 2);
    let header = |path: &Path| {
        let b = fs::read(path).unwrap();
        (le_u32(&b, 8), le_u32(&b, 12))
    };
    assert_eq!(header(&segments[0]), (2, 0));
    assert_eq!(header(&segments[1]), (3, SEALED_UNSYNCED));
    drop(wal);
    assert_eq!(collect(dir.path()).unwrap().0.len(), 4);
    // A version 2 header with a flag set is damage, not a flag.
    bytes[12] = 1;
    let crc = crc32c::crc32c(&bytes[..40]);
    bytes[40..44].copy_from_slice(&crc.to_le_bytes());
    fs::write(&seg, &bytes).unwrap();
    assert!(matches!(collect(dir.path()), Err(Error::Corrupt { .. })));
}

#[test]
fn a_segment_sealed_unsynced_that_a_power_loss_left_short_at_a_record_boundary_ends_the_log() {
    let (k, v) = put(1, b"value");
    let rec = Record::Put { key: &k, value: &v };
    for kept in [0usize, 1, 3] {
        let dir = tempfile::tempdir().unwrap();
        {
            let (wal, _) = Wal::open(dir.path(), sealing_unsynced(), |_, _| Ok(())).unwrap();
            wal.append(&[rec, rec, rec]).unwrap();
            wal.rotate().unwrap();
            wal.append(&[rec, rec]).unwrap();
        }
        // The first segment's header (fsynced at its creation) and `kept` whole records of it
        // reached the disk, and the later segment was written back.
        let first = segment_path(dir.path(), 1);
        let full = fs::read(&first).unwrap();
        fs::write(
            &first,
            &full[..SEGMENT_HEADER_BYTES + kept * rec.encoded_len()],
        )
        .unwrap();
        if kept == 3 {
            // Nothing lost: the log is whole.
            assert_eq!(collect(dir.path()).unwrap().0.len(), 5);
            continue;
        }
        assert!(matches!(
            collect_with(dir.path(), WalRecovery::AbsoluteConsistency),
            Err(Error::Corrupt { .. })
        ));
        let read_only = replay_read_only(dir.path(), WalRecovery::TornTail, |_, _| Ok(())).unwrap();
        assert!(!read_only.dropped.unwrap().cut);
        assert!(
            segment_path(dir.path(), 4).exists(),
            "a read-only replay changes nothing"
        );
        let (got, report) = collect(dir.path()).unwrap();
        assert_eq!(got.len(), kept, "the longest prefix");
        let dropped = report.dropped.unwrap();
        assert_eq!(
            (dropped.first_seq, dropped.bytes, dropped.segments.len()),
            (kept as u64 + 1, 0, 1)
        );
        assert!(dropped.segments[0]
            .to_string_lossy()
            .ends_with(".log.dropped"));
        let (wal, _) = Wal::open(dir.path(), sealing_unsynced(), |_, _| Ok(())).unwrap();
        assert_eq!(wal.append(&[rec]).unwrap(), kept as u64 + 1);
    }
    // The same gap after a segment fsynced at its sealing is damage.
    let dir = tempfile::tempdir().unwrap();
    {
        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        wal.append(&[rec, rec, rec]).unwrap();
        wal.rotate().unwrap();
        wal.append(&[rec]).unwrap();
    }
    let first = segment_path(dir.path(), 1);
    let full = fs::read(&first).unwrap();
    fs::write(&first, &full[..SEGMENT_HEADER_BYTES + rec.encoded_len()]).unwrap();
    assert!(matches!(collect(dir.path()), Err(Error::Corrupt { .. })));
}

#[test]
fn records_appended_under_another_policy_never_go_into_a_segment_sealed_unsynced() {
    let (k, v) = put(1, b"value");
    let rec = Record::Put { key: &k, value: &v };
    let flags = |path: &Path| le_u32(&fs::read(path).unwrap(), 12);
    let dir = tempfile::tempdir().unwrap();
    {
        let (wal, _) = Wal::open(dir.path(), sealing_unsynced(), |_, _| Ok(())).unwrap();
        wal.append(&[rec]).unwrap();
    }
    // Reopened under `Always`: the flagged segment, which holds a record, is fsynced and
    // sealed, and the acknowledged records go to a new segment without the flag.
    {
        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        assert_eq!(wal.append(&[rec, rec]).unwrap(), 3);
        let segments = wal.segments();
        assert_eq!(segments.len(), 2);
        assert_eq!(flags(&segments[0]), SEALED_UNSYNCED);
        assert_eq!(flags(&segments[1]), 0);
    }
    // Damage cutting the acknowledged records short is an error, not a cut.
    let second = segment_path(dir.path(), 2);
    let full = fs::read(&second).unwrap();
    let mut bad = full.clone();
    bad[SEGMENT_HEADER_BYTES + 3] ^= 1;
    fs::write(&second, &bad).unwrap();
    assert!(matches!(collect(dir.path()), Err(Error::Corrupt { .. })));
    fs::write(&second, &full).unwrap();
    // Back under `Never`: the empty segment an open makes does not keep the wrong flag; one
    // with no record is made again with it.
    {
        let (wal, _) = Wal::open(dir.path(), sealing_unsynced(), |_, _| Ok(())).unwrap();
        let segments = wal.segments();
        assert_eq!(flags(segments.last().unwrap()), SEALED_UNSYNCED);
    }
    {
        let (wal, _) = Wal::open(dir.path(), WalOptions::default(), |_, _| Ok(())).unwrap();
        let segments = wal.segments();
        assert_eq!(
            segments.len(),
            3,
            "an empty segment is made again, not sealed"
        );
        assert_eq!(flags(segments.last().unwrap()), 0);
    }
    assert_eq!(collect(dir.path()).unwrap().0.len(), 3);
}
