//! The roles a structure plays, the forms a role accepts (for help and error texts), and the
//! error a refused spec is.

use std::fmt;

use super::{
    ByteIndexSpec, DiskMapSpec, DiskModelSpec, DynamicStageSpec, EngineSpec, IndexSpec, MapSpec,
    StringIndexSpec,
};

/// What a structure is built as: each role has one table of the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// A static index over sorted `u64` keys it does not own ([`IndexSpec`]).
    StaticIndex,
    /// An updatable in-memory ordered map ([`MapSpec`]).
    Map,
    /// An updatable on-disk map ([`DiskMapSpec`]).
    DiskMap,
    /// A read-only on-disk index over `u64` keys: the disk B+-tree ([`DiskMapSpec::BTree`]) or
    /// a static learned index of a [`DiskModelSpec`] model.
    DiskIndex,
    /// An index over byte-string keys in memory ([`StringIndexSpec`]).
    StringIndex,
    /// An on-disk index over byte-string keys ([`ByteIndexSpec`]).
    ByteDiskIndex,
    /// The engine behind a store ([`EngineSpec`]).
    StoreEngine,
    /// The map of the benchmark's typed hybrid's dynamic stage ([`DynamicStageSpec`]).
    DynamicStage,
}

impl Role {
    /// Every accepted form of the role, in table order, each with its parameters' defaults
    /// (`rs[:bits=18][:err=32]`) or placeholders (`dfiting[:eps=<n>]`).
    pub fn forms(self) -> Vec<String> {
        match self {
            Role::StaticIndex => IndexSpec::forms(),
            Role::Map => MapSpec::forms(),
            Role::DiskMap => DiskMapSpec::forms(),
            Role::DiskIndex => {
                let btree = DiskMapSpec::BTree { fill: 100 }.form();
                let models = DiskModelSpec::forms().into_iter().filter(|form| {
                    let name = form.split('[').next().unwrap_or_default();
                    DiskModelSpec::parse_with_granularity(name).is_some()
                });
                std::iter::once(btree).chain(models).collect()
            }
            Role::StringIndex => StringIndexSpec::forms(),
            Role::ByteDiskIndex => ByteIndexSpec::forms(),
            Role::StoreEngine => vec![EngineSpec::accepted_forms()],
            Role::DynamicStage => DynamicStageSpec::forms(),
        }
    }

    /// Every name of the role, in table order (with the maps' names for
    /// [`Role::StaticIndex`]).
    pub fn names(self) -> Vec<&'static str> {
        match self {
            Role::StaticIndex => {
                let own = IndexSpec::names();
                let maps = MapSpec::names().iter().filter(|n| !own.contains(n));
                own.iter().chain(maps).copied().collect()
            }
            Role::Map => MapSpec::names().to_vec(),
            Role::DiskMap => DiskMapSpec::names().to_vec(),
            Role::DiskIndex => {
                let learned = IndexSpec::disk_model_names();
                let own = DiskModelSpec::names().iter().copied().chain(learned);
                std::iter::once(DiskMapSpec::BTree { fill: 100 }.name())
                    .chain(own)
                    .collect()
            }
            Role::StringIndex => StringIndexSpec::names().to_vec(),
            Role::ByteDiskIndex => ByteIndexSpec::names().to_vec(),
            Role::StoreEngine => EngineSpec::names().to_vec(),
            Role::DynamicStage => DynamicStageSpec::names().to_vec(),
        }
    }

    /// The comma-separated list a command runs when it is given none for this role: `lidx
    /// bench --index` in each mode, `lidx ycsb --store`, `lidx ycsb --dynamic`. The maps run
    /// in the static-index list (`lidx bench --workload insert`), so theirs is that one.
    pub fn default_list(self) -> &'static str {
        match self {
            Role::StaticIndex | Role::Map => "sorted,pgm:eps=64,rs,rmi,btree",
            Role::DiskMap => "btree",
            Role::DiskIndex => "btree,pgm:eps=64,zonemap",
            Role::StringIndex => "sorted,head8,strings",
            Role::ByteDiskIndex => "byte-table,byte-btree",
            Role::StoreEngine => "btree,hybrid",
            Role::DynamicStage => "btree",
        }
    }
}

/// A spec no table of its role accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BadSpec {
    /// What was being parsed (`index`, `updatable on-disk index`, ...).
    pub what: &'static str,
    /// The text given.
    pub got: String,
    /// The accepted forms, to choose one of.
    pub expected: String,
}

impl BadSpec {
    /// `got` refused as a `what`, which takes one of `expected`.
    pub fn new(what: &'static str, got: &str, expected: String) -> BadSpec {
        BadSpec {
            what,
            got: got.to_string(),
            expected,
        }
    }
}

impl fmt::Display for BadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad {} `{}`: expected {}",
            self.what, self.got, self.expected
        )
    }
}

impl std::error::Error for BadSpec {}

/// `a`, `a or b`, `a, b or c`: a list of forms to choose one of.
pub(crate) fn one_of(forms: &[String]) -> String {
    match forms.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// Parses a comma-separated list with `parse`; blank items are skipped and the list must name
/// at least one item, else a [`BadSpec`] for `what` listing `forms`.
pub fn parse_list<T>(
    list: &str,
    what: &'static str,
    forms: &str,
    parse: impl Fn(&str) -> Result<T, BadSpec>,
) -> Result<Vec<T>, BadSpec> {
    let specs = list
        .split(',')
        .filter(|item| !item.trim().is_empty())
        .map(parse)
        .collect::<Result<Vec<_>, _>>()?;
    if specs.is_empty() {
        return Err(BadSpec::new(
            what,
            list,
            format!("a comma-separated list of {forms}"),
        ));
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_lists_its_forms_and_names() {
        for role in [
            Role::StaticIndex,
            Role::Map,
            Role::DiskMap,
            Role::DiskIndex,
            Role::StringIndex,
            Role::ByteDiskIndex,
            Role::StoreEngine,
            Role::DynamicStage,
        ] {
            let (forms, names) = (role.forms(), role.names());
            let listed = match role {
                Role::Map => Role::StaticIndex.names(),
                role => role.names(),
            };
            for item in role.default_list().split(',') {
                assert!(
                    listed.contains(&item.split(':').next().unwrap()),
                    "{role:?}"
                );
            }
            assert!(!forms.is_empty(), "{role:?}");
            for name in names {
                assert!(forms.iter().any(|f| f.contains(name)), "{role:?} {name}");
            }
        }
        assert!(Role::StaticIndex.names().contains(&"alex"));
        assert_eq!(
            Role::DiskMap.forms().join(", "),
            "btree[:fill=<percent>], alex, lipp, dfiting[:eps=<n>], dpgm[:eps=<n>], btree-learned, \
             film[:eps=<n>][:mem=<bytes>]"
        );
    }
}
