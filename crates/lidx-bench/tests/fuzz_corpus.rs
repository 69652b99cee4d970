//! Replays every fuzz target's corpus (`fuzz/corpus/<target>/`) through the target's check as
//! an ordinary test, so CI covers the fuzzers' findings without libFuzzer or a nightly
//! toolchain. The checks are the fuzz crate's own (`fuzz/checks/`), included by path; this
//! crate is the one that reaches everything they use (`sosd_decode` needs `lidx-bench`).
//!
//! A target without a corpus directory, an empty corpus, or a corpus of a target that does
//! not exist fails, so a deleted or forgotten corpus is noticed; a file that panics fails
//! with its name.

#[path = "../../../fuzz/checks/mod.rs"]
mod checks;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The names of the files in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Fails with the names of the files in `target`'s corpus that panicked, `None` when all
/// passed.
fn replay(target: &str, check: fn(&[u8])) -> Option<String> {
    let dir = fuzz_dir().join("corpus").join(target);
    let files = names(&dir);
    assert!(!files.is_empty(), "{}: an empty corpus", dir.display());
    let failed: Vec<&String> = files
        .iter()
        .filter(|name| {
            let data = std::fs::read(dir.join(name)).unwrap();
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .collect();
    (!failed.is_empty()).then(|| {
        format!(
            "{target}: {} of {} inputs failed: {failed:?}",
            failed.len(),
            files.len()
        )
    })
}

#[test]
fn every_corpus_passes_its_check() {
    let targets: Vec<String> = checks::TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        names(&fuzz_dir().join("fuzz_targets"))
            .iter()
            .filter_map(|n| n.strip_suffix(".rs").map(str::to_string))
            .collect::<Vec<_>>(),
        targets,
        "targets without a check"
    );
    assert_eq!(
        names(&fuzz_dir().join("corpus")),
        targets,
        "corpora without a target or targets without one"
    );
    // One thread a target: the store targets spend most of their time waiting for their
    // merge threads and the file system.
    let failed: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = checks::TARGETS
            .iter()
            .map(|&(target, check)| s.spawn(move || replay(target, check)))
            .collect();
        runs.into_iter()
            .filter_map(|run| run.join().expect("a replay's own assertions"))
            .collect()
    });
    assert!(failed.is_empty(), "{failed:#?}");
}
