//! `lidx kv torture`, the store's crash test, on a short seeded subset for each engine, with and
//! without the simulated power loss: a writer child killed at random points (merges,
//! checkpoints and batches included), each kill followed by a reopen that must show every
//! acknowledged write, nothing else, and no batch half-applied. The command itself exits 1 on
//! any violation; the counts it reports show the cycles did what they must to mean something.

mod common;

use common::{json_lines, lidx, text};

fn torture(engine: &str, power_loss: bool, seed: &str) -> serde_json::Value {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let db = root.path().join("db");
    let mut args = vec![
        "kv",
        "torture",
        "--db",
        db.to_str().unwrap(),
        "--engine",
        engine,
        "--cycles",
        "8",
        "--seed",
        seed,
        "--json",
    ];
    if power_loss {
        args.push("--power-loss");
    }
    let out = lidx(&args);
    assert!(
        out.status.success(),
        "{engine} (power loss {power_loss}): {}",
        text(&out.stderr)
    );
    json_lines(&out).pop().unwrap()
}

#[test]
fn every_engine_survives_kills_and_power_loss() {
    for engine in ["hybrid", "btree", "log:btree", "log:trie:btree"] {
        for (power_loss, seed) in [(false, "11"), (true, "12")] {
            let r = torture(engine, power_loss, seed);
            let case = format!("{engine}, power loss {power_loss}: {r}");
            assert_eq!(r["cycles"], 8, "{case}");
            assert_eq!(
                (r["lost"].as_u64(), r["phantoms"].as_u64()),
                (Some(0), Some(0))
            );
            assert!(r["acknowledged"].as_u64().unwrap() > 300, "{case}");
            // The log engine has no merges or checkpoints: its log is its data.
            if !engine.starts_with("log") {
                assert!(r["merges_seen"].as_u64().unwrap() > 0, "{case}");
            }
            assert!(r["in_flight"].as_u64().unwrap() >= 1, "{case}");
            if power_loss {
                assert!(r["log_bytes_cut"].as_u64().unwrap() > 0, "{case}");
            }
        }
    }
}

#[test]
fn torture_refuses_an_existing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = lidx(&[
        "kv",
        "torture",
        "--db",
        dir.path().to_str().unwrap(),
        "--cycles",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(
        text(&out.stderr).contains("does not exist yet"),
        "{}",
        text(&out.stderr)
    );
}
