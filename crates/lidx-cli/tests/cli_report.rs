//! `lidx report` end to end: small real runs of `lidx bench`, `lidx bench --on-disk`,
//! `lidx ycsb` and `lidx join`, the result files and findings in `docs/results/`, one page;
//! the page refuses to replace itself without `--force`; and, where Chromium is installed
//! (`.ci/install-chromium`, which `.ci/run` calls), the page opened headless: every table is in
//! the DOM it builds, and in a screenshot every chart's frame is found with a drawing inside
//! (the palette's colours, not a blank area). Without Chromium the browser half is skipped with
//! a message on stderr, and fails instead when `LIDX_REQUIRE_CHROMIUM` is set (`.ci/run` sets
//! it once it installed one). `LIDX_REPORT_SHOTS=<dir>` keeps the page and its screenshot
//! there, to look at.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{lidx, text};

/// The page's chart frame colour and line width (`lidx_bench::page::FRAME_COLOR`, `FRAME_PX`).
const FRAME: [u8; 3] = [0x11, 0x22, 0x33];
const FRAME_PX: usize = 3;
/// A chart's drawn width on the page (`lidx_bench::page::CHART_WIDTH`).
const CHART_WIDTH: usize = 600;
/// The browser window: wide enough for two charts side by side, tall enough for the page.
const WINDOW: (usize, usize) = (1280, 4200);

fn results(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/results")
        .join(name)
        .display()
        .to_string()
}

fn run_ok(args: &[&str]) {
    let out = lidx(args);
    assert!(out.status.success(), "lidx {args:?}: {}", text(&out.stderr));
}

/// The result files of three small runs, in `dir`.
fn small_runs(dir: &Path) -> Vec<String> {
    let path = |name: &str| dir.join(name).display().to_string();
    let (bench, disk, ycsb) = (path("bench.jsonl"), path("disk.jsonl"), path("ycsb.csv"));
    run_ok(&[
        "bench",
        "--dataset",
        "gen:lognormal:20K",
        "--queries",
        "2K",
        "--runs",
        "1",
        "--out",
        &bench,
    ]);
    run_ok(&[
        "bench",
        "--on-disk",
        "--dataset",
        "gen:lognormal:20K",
        "--queries",
        "1K",
        "--runs",
        "1",
        "--out",
        &disk,
    ]);
    run_ok(&[
        "ycsb",
        "--workload",
        "read-only",
        "--dataset",
        "gen:lognormal:20K",
        "--ops",
        "1K",
        "--out",
        &ycsb,
    ]);
    // `lidx join` prints its record; saved with `>` it is a JSON lines file.
    let tables = format!("{}/", dir.display());
    run_ok(&[
        "table",
        "create",
        "--from",
        "gen:lognormal:20K",
        "--ratio",
        "1,10",
        "--out",
        &tables,
    ]);
    let mut joins = String::new();
    for algo in ["sort-merge", "inlj-pgm"] {
        let out = common::join(
            algo,
            &path("r10"),
            &path("large"),
            &path(&format!("out-{algo}")),
            &[],
        );
        assert!(out.status.success(), "join: {}", text(&out.stderr));
        joins.push_str(&text(&out.stdout));
    }
    let join = path("join.jsonl");
    std::fs::write(&join, joins).unwrap();
    vec![bench, disk, ycsb, join]
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// The `id`s of the page's tables.
fn table_ids(html: &str) -> Vec<String> {
    html.split("<table id=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').expect("a closing quote")].to_string())
        .collect()
}

#[test]
fn report_page_from_real_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = small_runs(dir.path());
    inputs.push(results("ycsb-curve-balanced-lognormal-10m.csv"));
    inputs.push(results("dims-insert-lognormal-10m.csv"));
    inputs.push(results("paper001.md"));
    let page = dir.path().join("report.html");
    let page_arg = page.display().to_string();
    let joins = results("joins-50m.md");
    let mut args: Vec<&str> = vec!["report"];
    args.extend(inputs.iter().map(String::as_str));
    args.extend(["--findings", &joins, "--out", &page_arg]);
    run_ok(&args);
    let html = std::fs::read_to_string(&page).unwrap();

    // Never replaced without --force; replaced with it.
    let out = lidx(&args);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--force"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&page).unwrap(), html);
    args.push("--force");
    run_ok(&args);

    // What the page holds: the commands of the new records, every kind's table, the charts.
    assert!(!html.contains("<script"), "no JavaScript");
    assert!(
        html.contains("<code>lidx bench --dataset gen:lognormal:20K"),
        "commands named"
    );
    assert!(html.contains("Machine: "));
    let ids = table_ids(&html);
    for id in [
        "table-summary",
        "findings-1",
        "records-bench",
        "records-disk",
        "records-ycsb",
        "records-curve",
        "records-dims-update",
        "records-join",
    ] {
        assert!(ids.iter().any(|i| i == id), "table {id} missing: {ids:?}");
    }
    let findings = ids.iter().filter(|i| i.starts_with("findings-")).count();
    assert!(findings >= 2, "paper001.md and joins-50m.md have tables");
    let charts = count(&html, "<figure class=\"chart\"");
    for id in [
        "throughput-bench",
        "throughput-disk",
        "throughput-ycsb",
        "blocks-disk",
        "blocks-ycsb",
        "latency-bench",
        "latency-disk",
        "latency-ycsb",
        "speedup-bench",
        "speedup-ycsb",
    ] {
        assert!(html.contains(&format!("id=\"chart-{id}\"")), "chart {id}");
    }
    assert_eq!(count(&html, "<svg"), charts);

    browser_check(dir.path(), &page, &ids, charts);
}

#[test]
fn report_refuses_bad_inputs_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let page = path("page.html");
    let newer = path("newer.jsonl");
    std::fs::write(&newer, "{\"schema\":\"disk/9\",\"dataset\":\"x\"}\n").unwrap();
    let out = lidx(&["report", &newer, "--out", &page]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("`schema`") && stderr.contains("disk/9"),
        "{stderr}"
    );
    // Its own input as the output: refused before anything is read or written.
    let out = lidx(&["report", &newer, "--out", &newer, "--force"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not an input"));
    let md = path("notes.md");
    std::fs::write(&md, "no table here\n").unwrap();
    let out = lidx(&["report", &md, "--out", &page]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("no markdown table"));
    assert!(!Path::new(&page).exists());
}

/// Chromium on PATH, if any.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|p| p.is_file())
}

/// Runs Chromium headless on `page` with `extra` flags; its stdout. Killed after a minute.
fn headless(chromium: &Path, profile: &Path, page: &Path, extra: &[String]) -> Vec<u8> {
    let stdout = profile.with_extension("out");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium {extra:?} exited with {status}");
            return std::fs::read(&stdout).unwrap();
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("chromium {extra:?} ran over a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn browser_check(dir: &Path, page: &Path, ids: &[String], charts: usize) {
    let Some(chromium) = chromium() else {
        let message = "SKIPPED the browser half of report_page_from_real_runs: no chromium on \
                       PATH (install it with .ci/install-chromium)";
        if std::env::var_os("LIDX_REQUIRE_CHROMIUM").is_some() {
            panic!("{message}, but LIDX_REQUIRE_CHROMIUM is set");
        }
        eprintln!("{message}");
        return;
    };

    // Every table is in the DOM the browser built, and every chart's SVG.
    let dom = text(&headless(
        &chromium,
        &dir.join("profile-dom"),
        page,
        &["--dump-dom".to_string()],
    ));
    for id in ids {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "table {id} not in the DOM"
        );
    }
    assert_eq!(count(&dom, "<figure class=\"chart\""), charts);
    assert_eq!(count(&dom, "<svg"), charts);

    // Every chart's frame is in the screenshot, with a drawing inside.
    let shot = dir.join("page.png");
    headless(
        &chromium,
        &dir.join("profile-shot"),
        page,
        &[
            format!("--screenshot={}", shot.display()),
            format!("--window-size={},{}", WINDOW.0, WINDOW.1),
        ],
    );
    if let Some(keep) = std::env::var_os("LIDX_REPORT_SHOTS") {
        // For a person to look at: the page and its screenshot.
        let keep = Path::new(&keep);
        std::fs::create_dir_all(keep).unwrap();
        std::fs::copy(page, keep.join("report.html")).unwrap();
        std::fs::copy(&shot, keep.join("report.png")).unwrap();
    }
    let frames = chart_frames(&shot);
    assert_eq!(
        frames.len(),
        charts,
        "chart frames found in {}: {frames:?}",
        shot.display()
    );
    for frame in &frames {
        assert!(
            frame.colored >= 20 && frame.drawn * 50 >= frame.area,
            "a blank chart at ({}, {}) in {}: {frame:?}",
            frame.left,
            frame.top,
            shot.display()
        );
    }
}

/// One chart frame found in a screenshot, and what is drawn inside it.
#[derive(Debug)]
struct Frame {
    top: usize,
    left: usize,
    /// Pixels inside the frame.
    area: usize,
    /// Pixels that are not white.
    drawn: usize,
    /// Pixels of a saturated colour (the series' palette, not grey text or grid).
    colored: usize,
}

/// The chart frames of the screenshot `png`: bands of [`FRAME_PX`] rows of the frame colour at
/// least half a chart wide, paired top and bottom at the same columns.
fn chart_frames(png: &Path) -> Vec<Frame> {
    let decoder = png::Decoder::new(std::fs::File::open(png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (w, h) = (info.width as usize, info.height as usize);
    let step = info.color_type.samples();
    assert!(step >= 3, "an RGB screenshot, got {:?}", info.color_type);
    let px = |x: usize, y: usize| -> [u8; 3] {
        let i = (y * w + x) * step;
        [buf[i], buf[i + 1], buf[i + 2]]
    };
    // Horizontal runs of the frame colour, as (row, first column, last column).
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for y in 0..h {
        let mut x = 0;
        while x < w {
            if px(x, y) != FRAME {
                x += 1;
                continue;
            }
            let start = x;
            while x < w && px(x, y) == FRAME {
                x += 1;
            }
            if x - start >= CHART_WIDTH / 2 {
                runs.push((y, start, x - 1));
            }
        }
    }
    // Per column span, the first rows of its bands of consecutive rows: top, bottom, top, ...
    let mut spans: Vec<((usize, usize), Vec<usize>)> = Vec::new();
    for &(y, a, b) in &runs {
        let bands = match spans.iter_mut().find(|(s, _)| *s == (a, b)) {
            Some((_, bands)) => bands,
            None => {
                spans.push(((a, b), Vec::new()));
                &mut spans.last_mut().unwrap().1
            }
        };
        if runs.contains(&(y.wrapping_sub(1), a, b)) {
            continue;
        }
        bands.push(y);
    }
    let mut frames = Vec::new();
    for ((a, b), bands) in spans {
        for pair in bands.chunks_exact(2) {
            let (top, bottom) = (pair[0] + FRAME_PX, pair[1]);
            let (left, right) = (a + FRAME_PX, b + 1 - FRAME_PX);
            let mut frame = Frame {
                top,
                left,
                area: (bottom - top) * (right - left),
                drawn: 0,
                colored: 0,
            };
            for y in top..bottom {
                for x in left..right {
                    let [r, g, b] = px(x, y);
                    if [r, g, b] != [255, 255, 255] {
                        frame.drawn += 1;
                    }
                    if r.max(g).max(b) - r.min(g).min(b) > 80 {
                        frame.colored += 1;
                    }
                }
            }
            frames.push(frame);
        }
    }
    frames
}
