//! Which runner a `lidx bench` invocation goes to: the role its indexes play, decided from the
//! dataset, the workload, the index list and two flags, before anything is read or built.
//!
//! The decision is the bench's, not the command line's: a dataset of string keys runs the
//! string indexes ([`crate::string_runner`]) or, on disk, the byte-key indexes
//! ([`crate::byte_disk_runner`]); `--workload insert` runs the in-memory maps
//! ([`crate::map_runner`]); on disk, a write workload, an index only the updatable registry
//! knows or `--updatable` runs paper 003's updatable indexes ([`crate::updatable_runner`]);
//! everything else runs the static indexes, in memory ([`crate::runner`]) or on disk
//! ([`crate::disk_runner`]). Each route names its [`Role`] in the catalog, whose default list
//! applies when no `--index` is given.

use lidx::catalog::{DiskMapSpec, Role};

use crate::keyfile::{parse_spec, Format};
use crate::map_runner::INSERT_WORKLOAD;
use crate::update_workload::UpdateWorkload;

/// True for the datasets of string keys: `text:`, a `.txt` path, `gen:words:`, `gen:user:`,
/// `str16:`. Decided from the spec alone, so a command can check its arguments before reading
/// data.
pub fn is_string_dataset(spec: &str) -> bool {
    spec.starts_with("gen:words:")
        || spec.starts_with("gen:user:")
        || matches!(parse_spec(spec).0, Format::Text | Format::Str16)
}

/// What a `lidx bench` invocation asks for, as the routing reads it.
#[derive(Debug, Clone, Copy)]
pub struct BenchAsk<'a> {
    /// `--dataset`.
    pub dataset: &'a str,
    /// `--workload`.
    pub workload: &'a str,
    /// `--index`, when given.
    pub index: Option<&'a str>,
    /// `--on-disk`.
    pub on_disk: bool,
    /// `--updatable`.
    pub updatable: bool,
}

/// The runner an invocation goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchRoute {
    /// Lookups on static indexes in memory ([`Role::StaticIndex`]).
    Lookups,
    /// Inserts into in-memory maps ([`Role::Map`]).
    Inserts,
    /// Lookups on string indexes in memory ([`Role::StringIndex`]).
    Strings,
    /// Read-only on-disk indexes over numeric keys ([`Role::DiskIndex`]).
    Disk,
    /// Read-only on-disk indexes over byte-string keys ([`Role::ByteDiskIndex`]).
    DiskBytes,
    /// Paper 003's updatable on-disk indexes ([`Role::DiskMap`]).
    Updatable,
}

impl BenchRoute {
    /// The route of `ask`.
    pub fn of(ask: &BenchAsk<'_>) -> BenchRoute {
        let strings = is_string_dataset(ask.dataset);
        match (ask.on_disk, strings) {
            (true, _) if wants_updatable(ask) => BenchRoute::Updatable,
            (true, true) => BenchRoute::DiskBytes,
            (true, false) => BenchRoute::Disk,
            (false, true) => BenchRoute::Strings,
            (false, false) if ask.workload.trim() == INSERT_WORKLOAD => BenchRoute::Inserts,
            (false, false) => BenchRoute::Lookups,
        }
    }

    /// The catalog role whose structures the route runs.
    pub fn role(self) -> Role {
        match self {
            BenchRoute::Lookups => Role::StaticIndex,
            BenchRoute::Inserts => Role::Map,
            BenchRoute::Strings => Role::StringIndex,
            BenchRoute::Disk => Role::DiskIndex,
            BenchRoute::DiskBytes => Role::ByteDiskIndex,
            BenchRoute::Updatable => Role::DiskMap,
        }
    }

    /// The index list to run: `index` when given, else the role's default.
    pub fn index_list(self, index: Option<&str>) -> &str {
        index.unwrap_or(self.role().default_list())
    }
}

/// True when an on-disk run goes to the updatable runner: a write workload, an index only the
/// updatable registry knows, or `--updatable`.
fn wants_updatable(ask: &BenchAsk<'_>) -> bool {
    let writes = UpdateWorkload::parse(ask.workload).is_ok_and(|w| w.writes());
    let updatable_index = ask
        .index
        .is_some_and(|list| list.split(',').any(DiskMapSpec::is_updatable_name));
    ask.updatable || writes || updatable_index
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(dataset: &str, workload: &str, index: Option<&str>, on_disk: bool) -> BenchRoute {
        BenchRoute::of(&BenchAsk {
            dataset,
            workload,
            index,
            on_disk,
            updatable: false,
        })
    }

    #[test]
    fn each_invocation_goes_to_its_role() {
        let g = "gen:lognormal:1K";
        assert_eq!(route(g, "lookup", None, false), BenchRoute::Lookups);
        assert_eq!(route(g, "insert", None, false), BenchRoute::Inserts);
        assert_eq!(
            route("gen:words:1K", "lookup", None, false),
            BenchRoute::Strings
        );
        assert_eq!(route(g, "lookup", None, true), BenchRoute::Disk);
        assert_eq!(
            route("text:k.txt", "lookup", None, true),
            BenchRoute::DiskBytes
        );
        assert_eq!(route(g, "write-only", None, true), BenchRoute::Updatable);
        assert_eq!(
            route(g, "lookup", Some("btree,alex"), true),
            BenchRoute::Updatable
        );
        assert_eq!(
            BenchRoute::Disk.index_list(None),
            Role::DiskIndex.default_list()
        );
    }
}
