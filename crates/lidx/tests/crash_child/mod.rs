//! Shared by the crash tests (`kv_crash`, `kv_hybrid_crash`): run this test binary's
//! `child_entry` test in a child process, SIGKILL it after a delay, and keep what it printed.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

/// What libtest prints before it runs `child_entry` with `--test-threads=1`.
const TEST_START: &str = "test child_entry ... ";

/// Runs the test `child_entry` of the current test binary with `envs`, kills it after `delay`
/// and returns every line it printed whole (without its newline or libtest's prefix). A line cut by the kill has no
/// newline: it was not fully reported, and is left out. The child's output is read while it
/// runs, so that it never blocks on a full pipe. Panics if the child exited by itself.
pub fn run_and_kill<V: AsRef<OsStr>>(envs: &[(&str, V)], delay: Duration) -> Vec<String> {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["child_entry", "--exact", "--nocapture", "--test-threads=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, value) in envs {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut r = BufReader::new(stdout);
        let mut line = String::new();
        while r.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(whole) = line.strip_suffix('\n') {
                // libtest prints `test child_entry ... ` before it runs the test, without a
                // newline: the child's first line follows it on the same line.
                let whole = whole.strip_prefix(TEST_START).unwrap_or(whole);
                lines.push(whole.to_string());
            }
            line.clear();
        }
        lines
    });
    std::thread::sleep(delay);
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "the child must die by the kill, not exit"
    );
    reader.join().unwrap()
}
