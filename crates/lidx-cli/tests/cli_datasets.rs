//! A user's own data through the commands: a word list (text keys) and typed binaries through
//! `stats`, `bench`, `table create`, `join` and `ycsb` (every key type through the store API);
//! every key type through `build` and `bench --on-disk` (numbers on their u64 image, strings into
//! the byte-key indexes), an index of the other kind refused; the commands that take u64 keys refuse other types by name; a SOSD
//! `*_uint32` file read as u64 says which prefix to use.

mod common;

use std::path::Path;

use common::{json_lines, lidx, lidx_ok, text, without_progress};
use lidx_bench::records::KvRecord;
use lidx_bench::report::read_records;

/// Seeded word-like keys, as a word list would hold them: not in key order, a few repeated.
fn word_file(path: &Path, max_len: usize) -> Vec<Vec<u8>> {
    let mut words: Vec<Vec<u8>> = lidx_bench::words::generate(3000, 9)
        .into_iter()
        .filter(|w| w.len() <= max_len)
        .collect();
    words.reverse();
    let mut body = Vec::new();
    for w in words.iter().chain(words.iter().take(10)) {
        body.extend_from_slice(w);
        body.push(b'\n');
    }
    std::fs::write(path, body).unwrap();
    words.sort();
    words
}

fn sosd(path: &Path, width: usize, items: &[u64]) {
    let mut b = (items.len() as u64).to_le_bytes().to_vec();
    for &i in items {
        b.extend_from_slice(&i.to_le_bytes()[..width]);
    }
    std::fs::write(path, b).unwrap();
}

#[test]
fn stats_reads_text_and_typed_binaries() {
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("words.txt");
    let sorted = word_file(&words, 64);
    let out = lidx(&["stats", "--dataset", words.to_str().unwrap(), "--json"]);
    let v = &json_lines(&out)[0];
    assert_eq!(v["key_type"], "text");
    assert_eq!(v["size"], sorted.len() + 10);
    assert_eq!(v["duplicates"], 10);
    assert_eq!(v["min"], String::from_utf8(sorted[0].clone()).unwrap());
    assert!(v["shared_first_8_bytes"].as_f64().unwrap() > 0.2, "{v}");
    let notes = text(&out.stderr);
    assert!(notes.contains("not in key order"), "{notes}");

    let u32s = dir.path().join("keys_uint32");
    sosd(&u32s, 4, &[3, 8, 8, 4_000_000_000]);
    let spec = format!("sosd-u32:{}", u32s.display());
    let v = &json_lines(&lidx(&["stats", "--dataset", &spec, "--json"]))[0];
    assert_eq!(
        (
            v["key_type"].as_str(),
            v["size"].as_u64(),
            v["max"].as_str()
        ),
        (Some("u32"), Some(4), Some("4000000000"))
    );
    // The same file as a bare path (u64) says which prefix fits it.
    let out = lidx(&["stats", "--dataset", u32s.to_str().unwrap()]);
    let stderr = without_progress(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("sosd-u32:"), "{stderr}");
}

#[test]
fn commands_that_take_u64_name_the_key_type_they_got() {
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("w.txt");
    word_file(&words, 64);
    {
        let args = [
            "stats",
            "--zero-interval",
            "--dataset",
            words.to_str().unwrap(),
        ];
        let out = lidx(&args);
        let stderr = without_progress(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("holds text keys; this command takes u64 keys"),
            "{stderr}"
        );
    }
}

#[test]
fn bench_runs_the_string_indexes_on_a_word_list_and_checks_them() {
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("w.txt");
    word_file(&words, 64);
    let out_file = dir.path().join("r.jsonl");
    let out = lidx(&[
        "bench",
        "--dataset",
        words.to_str().unwrap(),
        "--queries",
        "2K",
        "--runs",
        "1",
        "--out",
        out_file.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for index in ["sorted", "head8:eps=32", "strings:eps=32:threshold=32"] {
        assert!(stdout.contains(index), "{stdout}");
    }
    let records = std::fs::read_to_string(&out_file).unwrap();
    assert_eq!(records.lines().count(), 3);
    let bad = lidx(&[
        "bench",
        "--dataset",
        words.to_str().unwrap(),
        "--index",
        "pgm",
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_word_list_becomes_string_tables_that_join() {
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("w.txt");
    let sorted = word_file(&words, 16);
    let mut distinct = sorted.clone();
    distinct.dedup();
    let out_dir = dir.path().join("t");
    let spec = format!("text:{}", words.display());
    let lines = json_lines(&lidx(&[
        "table",
        "create",
        "--from",
        &spec,
        "--ratio",
        "10",
        "--out",
        &format!("{}/", out_dir.display()),
    ]));
    assert_eq!(lines[0]["key_type"], "str16");
    assert_eq!(lines[0]["count"], distinct.len());
    let small = lines[1]["count"].as_u64().unwrap();
    assert_eq!(small, distinct.len() as u64 / 10);
    let t = |name: &str| out_dir.join(name).display().to_string();
    for algo in ["inlj-pgm", "sort-merge"] {
        let out = json_lines(&lidx(&[
            "join",
            "--algo",
            algo,
            "--left",
            &t("r10"),
            "--right",
            &t("large"),
            "--out",
            &t(&format!("out-{algo}")),
        ]));
        assert_eq!(out[0]["output_count"], small, "{algo}");
    }
}

#[test]
fn a_key_longer_than_a_table_key_is_named_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("w.txt");
    std::fs::write(&words, "short\nanother\nthis-key-is-longer-than-sixteen\n").unwrap();
    let out_dir = dir.path().join("t");
    let out = lidx(&[
        "table",
        "create",
        "--from",
        words.to_str().unwrap(),
        "--out",
        &format!("{}/", out_dir.display()),
    ]);
    let stderr = without_progress(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("this-key-is-longer-than-sixteen") && stderr.contains("31 bytes"),
        "{stderr}"
    );
    assert!(!out_dir.exists(), "no directory is left behind");
}

#[test]
fn an_empty_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let words = dir.path().join("w.txt");
    std::fs::write(&words, "a\nb\n\nc\n").unwrap();
    let out = lidx(&["stats", "--dataset", words.to_str().unwrap()]);
    let stderr = without_progress(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("line 3"), "{stderr}");
}

#[test]
fn gen_writes_word_like_keys_as_text_that_stats_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("words.txt");
    lidx_ok(&[
        "gen",
        "--dataset",
        "gen:words:2K",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 2000);
    let v = &json_lines(&lidx(&[
        "stats",
        "--dataset",
        out.to_str().unwrap(),
        "--json",
    ]))[0];
    assert_eq!(
        (v["key_type"].as_str(), v["size"].as_u64()),
        (Some("text"), Some(2000))
    );
    let bad = lidx(&[
        "gen",
        "--dataset",
        "gen:words:2K",
        "--out",
        dir.path().join("w.sosd").to_str().unwrap(),
    ]);
    assert_eq!(bad.status.code(), Some(2));
}

/// `gen:user` (YCSB-style keys of 16 to 64 bytes) is a string dataset every command that takes
/// string keys reads, and `lidx gen` writes it as text.
#[test]
fn gen_user_makes_ycsb_style_string_keys_of_16_to_64_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("user.txt");
    lidx_ok(&[
        "gen",
        "--dataset",
        "gen:user:3K",
        "--out",
        out.to_str().unwrap(),
    ]);
    let keys = std::fs::read_to_string(&out).unwrap();
    assert_eq!(keys.lines().count(), 3000);
    assert!(keys
        .lines()
        .all(|k| k.starts_with("user") && (16..=64).contains(&k.len())));
    let v = &json_lines(&lidx(&["stats", "--dataset", "gen:user:3K", "--json"]))[0];
    assert_eq!(v["size"].as_u64(), Some(3000), "{v}");
    let bad = lidx(&["stats", "--dataset", "gen:user:lots"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad.stderr));
}

#[test]
fn bench_runs_typed_numbers_on_their_image_and_str16_on_the_string_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let i64s = dir.path().join("keys_int64");
    let keys: Vec<i64> = (-2000..2000).map(|i| i * 37).collect();
    let items: Vec<u64> = keys.iter().map(|&k| k as u64).collect();
    sosd(&i64s, 8, &items);
    let spec = format!("sosd-i64:{}", i64s.display());
    let out = lidx_ok(&[
        "bench",
        "--dataset",
        &spec,
        "--index",
        "sorted,pgm",
        "--queries",
        "2K",
        "--runs",
        "1",
    ]);
    assert!(
        text(&out.stderr).contains("u64 image"),
        "{}",
        text(&out.stderr)
    );
    let s16 = dir.path().join("s16");
    let mut b = 2u64.to_le_bytes().to_vec();
    b.extend_from_slice(b"aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb");
    std::fs::write(&s16, b).unwrap();
    let out = lidx_ok(&[
        "bench",
        "--dataset",
        &format!("str16:{}", s16.display()),
        "--queries",
        "100",
        "--runs",
        "1",
    ]);
    assert!(
        text(&out.stdout).contains("strings:eps=32"),
        "{}",
        text(&out.stdout)
    );
}

/// Writes a dataset of each typed form (2,000 keys each) and a word list; returns their specs
/// and key type names.
fn typed_files(dir: &Path) -> Vec<(String, &'static str)> {
    let u32s: Vec<u64> = (0..2000u64).map(|i| i * 2_000_003).collect();
    let i64s: Vec<u64> = (-1000..1000i64).map(|i| (i * 7919) as u64).collect();
    let f64s: Vec<u64> = (-1000..1000)
        .map(|i| (f64::from(i) * 0.37).to_bits())
        .collect();
    let mut s16 = 2000u64.to_le_bytes().to_vec();
    for i in 0..2000u32 {
        s16.extend_from_slice(format!("key-{i:012}").as_bytes());
    }
    let paths = [("u32", 4, u32s), ("i64", 8, i64s), ("f64", 8, f64s)];
    let mut specs = Vec::new();
    for (name, width, items) in paths {
        let path = dir.join(format!("keys_{name}"));
        sosd(&path, width, &items);
        specs.push((format!("sosd-{name}:{}", path.display()), name));
    }
    let path = dir.join("keys_str16");
    std::fs::write(&path, s16).unwrap();
    specs.push((format!("str16:{}", path.display()), "str16"));
    let words = dir.join("words.txt");
    word_file(&words, 64);
    specs.push((words.display().to_string(), "text"));
    specs
}

/// `ycsb` used to refuse every key type but u64 by name: now the stores through the API take
/// each (keys as their order-preserving bytes), every read checked; the adapters still index
/// u64 values and say which stores take the type.
#[test]
fn ycsb_runs_every_key_type_through_the_store_api() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.jsonl");
    for (spec, type_name) in typed_files(dir.path()) {
        let result = lidx(&[
            "ycsb",
            "--dataset",
            &spec,
            "--store",
            "btree,hybrid",
            "--workload",
            "read-only,balanced",
            "--ops",
            "300",
            "--out",
            out.to_str().unwrap(),
            "--force",
        ]);
        let stderr = text(&result.stderr);
        assert!(result.status.success(), "{spec}: {stderr}");
        assert!(
            stderr.contains(&format!("{type_name} keys")),
            "{spec}: {stderr}"
        );
        let records: Vec<KvRecord> = read_records(&out).unwrap();
        assert_eq!(records.len(), 4, "{spec}");
        for r in &records {
            assert!(r.n_init > 1000 && r.reads > 0 && r.ops_per_s > 0.0, "{r:?}");
            assert!(r.store.starts_with("store:"), "{}", r.store);
        }

        let device_dir = dir.path().join(format!("refused-{type_name}"));
        let device = format!("file-buffered:{}", device_dir.display());
        let refused = lidx(&[
            "ycsb",
            "--dataset",
            &spec,
            "--store",
            "adapter:btree",
            "--device",
            &device,
        ]);
        let stderr = without_progress(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{spec}: {stderr}");
        assert!(!device_dir.exists(), "{spec}: a directory left behind");
        assert!(
            stderr.contains(&format!("holds {type_name} keys"))
                && stderr.contains("--store btree,hybrid"),
            "{spec}: {stderr}"
        );
    }
}

/// `build` and `bench --on-disk` used to refuse every key type but u64: typed numbers go on
/// disk on their order-preserving u64 image (a note says so), and the string forms (text,
/// str16), once refused with a pointer to the store, into the byte-key indexes; an index of the
/// other kind is refused by name as a usage error, with nothing written.
#[test]
fn build_and_bench_on_disk_take_every_key_type_and_refuse_the_other_kind_of_index() {
    let dir = tempfile::tempdir().unwrap();
    for (spec, type_name) in typed_files(dir.path()) {
        let strings = type_name == "str16" || type_name == "text";
        let (indexes, other, fits) = if strings {
            (
                "byte-table:eps=16,byte-btree",
                "btree",
                "byte-table[:eps=<e>] or byte-btree",
            )
        } else {
            ("btree,pgm:eps=16", "byte-table", "btree[:fill=<percent>]")
        };
        let refused_dir = dir.path().join(format!("refused-{type_name}"));
        let refused_device = format!("file-buffered:{}", refused_dir.display());
        for command in [
            [
                "build",
                "--buffered",
                "--dir",
                refused_dir.to_str().unwrap(),
            ],
            ["bench", "--on-disk", "--device", &refused_device],
        ] {
            let mut args = command.to_vec();
            args.extend(["--dataset", &spec, "--index", other]);
            let refused = lidx(&args);
            let stderr = without_progress(&refused.stderr);
            assert_eq!(refused.status.code(), Some(2), "{spec} {args:?}: {stderr}");
            assert!(
                stderr.contains(&format!("`{other}`")) && stderr.contains(fits),
                "{spec}: {stderr}"
            );
            assert!(!refused_dir.exists(), "{spec}: a directory left behind");
        }

        let index_dir = dir.path().join(format!("idx-{type_name}"));
        let build = lidx(&[
            "build",
            "--index",
            indexes,
            "--dataset",
            &spec,
            "--dir",
            index_dir.to_str().unwrap(),
            "--buffered",
        ]);
        let stderr = without_progress(&build.stderr);
        assert!(build.status.success(), "{spec}: {stderr}");
        let stdout = text(&build.stdout);
        if strings {
            for file in [
                "byte-table.eps=16.lidx",
                "byte-btree.lidx",
                "byte-btree.image.lidx",
            ] {
                assert!(index_dir.join(file).is_file(), "{spec}: {file} missing");
            }
        } else {
            assert!(stderr.contains("u64 image"), "{spec}: {stderr}");
        }
        if type_name != "text" {
            assert!(stdout.contains("2000 keys"), "{stdout}");
        }

        let file_device = format!("--device=file-buffered:{}", index_dir.display());
        let sim_dir = format!("--dir={}", index_dir.display());
        for (workload, device) in [
            ("lookup", ["--device=sim:nvme", &sim_dir]),
            ("scan:50", [&file_device, "--threads=2"]),
        ] {
            let mut args = vec!["bench", "--on-disk", "--dataset", &spec, "--index", indexes];
            args.extend(device);
            args.extend(["--workload", workload, "--queries", "500", "--runs", "1"]);
            let bench = lidx(&args);
            let stderr = without_progress(&bench.stderr);
            assert!(bench.status.success(), "{spec} {workload}: {stderr}");
            assert!(stderr.contains("reusing"), "{spec}: {stderr}");
            let stdout = text(&bench.stdout);
            let first = if strings { "byte-table:eps=16" } else { "pgm" };
            assert!(
                stdout.contains(workload) && stdout.contains(first),
                "{stdout}"
            );
            if strings {
                assert!(stdout.contains("byte-btree"), "{stdout}");
            }
        }
    }
}
