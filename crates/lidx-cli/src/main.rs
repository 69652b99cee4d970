//! `lidx`: the command line of lidx. One file per subcommand in `cmd/` (its arguments, then
//! `run`); this file only parses the command line and turns errors into one line on stderr and
//! an exit code: 2 for a usage error (a bad argument or spec, a parameter the library refuses,
//! a missing input file, a count the machine's memory cannot hold, an unknown experiment or an
//! output `lidx repro` will not replace, as clap does for its own), 1
//! for anything else.

/// `eprintln!` that never panics: while a run holds files it must remove (SIGPIPE ignored,
/// see `cmd::cleanup`), a line on stderr (progress, a note, a warning) whose reader went away
/// (`lidx build ... 2>&1 | head -1`) is dropped and the command finishes its work; otherwise
/// the closed pipe's SIGPIPE ends the command quietly, as it does other Unix tools.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cmd;
mod huge_pages;

#[global_allocator]
static ALLOCATOR: huge_pages::HugePageAlloc = huge_pages::HugePageAlloc;

use std::process::ExitCode;

use clap::Parser;
use lidx_bench::BenchError;

/// lidx: learned and classic ordered indexes, benchmarked on real and generated data.
#[derive(Debug, Parser)]
#[command(name = "lidx", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: cmd::Command,
}

fn main() -> ExitCode {
    // A closed stdout (`lidx repro list | head -1`) ends the process quietly, as it does other
    // Unix tools, instead of a panic with a backtrace on the failed write (Rust ignores
    // SIGPIPE by default). Outputs are renamed into place before a command's last line on
    // stdout, and while a run holds files it must remove SIGPIPE is ignored again
    // (`cmd::cleanup`), so this cannot leave a staged file (issue 30, class 10).
    // SAFETY: called first thing in `main`, before any thread starts; SIG_DFL is a valid action.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = Cli::parse();
    // The in-memory benchmarks time structures that allocate and free blocks of every size;
    // every other command keeps its freed memory bounded (`huge_pages` module docs).
    if !matches!(
        cli.command,
        cmd::Command::Bench(_) | cmd::Command::Dims(_) | cmd::Command::Start(_)
    ) {
        huge_pages::fix_mmap_threshold();
    }
    match cmd::run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            note!("error: {error:#}");
            // A parameter the library refuses (`rs:bits=99`, `btree:leaf=1`) or a spec the
            // catalog does not know is the user's input too, however deep it was found.
            let refused = |e: &lidx::Error| matches!(e, lidx::Error::InvalidParameter { .. });
            let usage = error.chain().any(|cause| {
                matches!(
                    cause.downcast_ref(),
                    Some(
                        BenchError::BadSpec { .. }
                            | BenchError::NoSuchFile { .. }
                            | BenchError::TooLarge { .. }
                            | BenchError::UnknownExperiment { .. }
                            | BenchError::OutputExists { .. }
                    )
                ) || matches!(cause.downcast_ref(), Some(BenchError::Index(e)) if refused(e))
                    || cause.downcast_ref::<lidx::Error>().is_some_and(refused)
                    || cause.is::<lidx::catalog::BadSpec>()
            });
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}
