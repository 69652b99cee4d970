//! Issue 13's bad input, consistently: counts the machine's memory cannot hold ended the
//! program with an abort (exit code 134) when the allocation failed; now they are usage errors
//! (exit code 2) that say what fits, checked before anything is allocated. A parameter the
//! library refuses (`rs:bits=99`, `btree:leaf=1`, `rmi:leaves=0`) exited 1 like a failed run;
//! it is the user's input, so it exits 2 like every other bad spec.

mod common;

use common::{lidx, text};

fn usage_error(args: &[&str], says: &str) {
    let out = lidx(args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: {err}");
    assert_eq!(err.matches(says).count(), 1, "said once: {err}");
}

#[test]
fn counts_beyond_memory_are_usage_errors_that_say_what_fits() {
    let fits = "give at most about";
    usage_error(
        &["stats", "--dataset", "gen:lognormal:99999999999999"],
        fits,
    );
    usage_error(&["stats", "--dataset", "gen:words:99999999999"], fits);
    usage_error(&["stats", "--dataset", "gen:user:99999999999"], fits);
    let huge_queries = [
        "bench",
        "--dataset",
        "gen:lognormal:1000",
        "--queries",
        "100000000000000",
    ];
    usage_error(&huge_queries, fits);
    usage_error(
        &[
            "ycsb",
            "--dataset",
            "gen:lognormal:1000",
            "--ops",
            "99999999999999",
        ],
        fits,
    );
    usage_error(
        &[
            "ycsb",
            "--dataset",
            "gen:lognormal:1000",
            "--cache-blocks",
            "100000000000",
        ],
        fits,
    );
    let cache = [
        "bench",
        "--on-disk",
        "--dataset",
        "gen:lognormal:1000",
        "--device",
        "sim:nvme",
        "--cache-blocks",
        "100000000000",
    ];
    usage_error(&cache, fits);
}

#[test]
fn parameters_the_library_refuses_are_usage_errors() {
    for (index, says) in [
        ("rs:bits=99", "radix_bits = 99"),
        ("btree:leaf=1", "leaf_slots = 1"),
        ("rmi:leaves=0", "leaves = 0"),
    ] {
        let args = [
            "bench",
            "--dataset",
            "gen:lognormal:1000",
            "--index",
            index,
            "--queries",
            "100",
        ];
        usage_error(&args, says);
    }
}

/// `--threads 0` was refused by `ycsb` but ran one thread under `bench --on-disk`: both refuse
/// it now, as a usage error.
#[test]
fn zero_threads_are_refused_by_every_command() {
    let disk = [
        "bench",
        "--on-disk",
        "--dataset",
        "gen:lognormal:1000",
        "--device",
        "sim:nvme",
        "--threads",
        "0",
    ];
    usage_error(&disk, "--threads");
    usage_error(
        &["ycsb", "--dataset", "gen:lognormal:1000", "--threads", "0"],
        "--threads",
    );
}
