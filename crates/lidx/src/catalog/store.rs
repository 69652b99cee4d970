//! The store's engines by name ([`EngineSpec`], [`super::Role::StoreEngine`]): what `lidx kv
//! create --engine`, `lidx ycsb --store` and the Python bindings accept. A `log` engine's map
//! follows its name (`log:<map>` or `log:trie:<map>`, the map a [`super::MapSpec`]); the store
//! reads the whole spelling ([`crate::kv::Engine::parse`]).
//!
//! Also here: the maps the benchmark's typed hybrid (`adapter:hybrid`) can keep its dynamic
//! stage in ([`DynamicStageSpec`], [`super::Role::DynamicStage`]).

crate::param_specs! {
    /// One engine of the store.
    pub enum EngineSpec {
        /// Paper 002 §9's hybrid index over byte keys: a dynamic stage in memory, a static byte
        /// table located by a learned model on disk, folded together by merges.
        Hybrid = "hybrid" {},
        /// A disk B+-tree over byte keys with every inner node in memory, durable by the same
        /// log with checkpoints: the hybrid's baseline.
        BTree = "btree" {},
        /// Paper 001 §III's setting (Viper): records appended to a log, an in-memory map from
        /// each key to its record's place; `log:<map>` takes 8-byte keys, `log:trie:<map>` any.
        Log = "log" {},
        /// A log-structured merge tree with learned runs: a memtable and the log flushed to
        /// sorted runs, each a byte table located by a learned model with a key filter, kept in
        /// levels and merged on a background thread.
        Lsm = "lsm" {
            /// Size ratio between adjacent leveled levels: larger is fewer levels (fewer runs
            /// a get may ask) and more rewriting per merge.
            ratio: usize = 10 in 2..=64,
            /// Runs level 0 collects before they are merged into level 1.
            l0: usize = 4 in 1..=64,
            /// Bits of key filter per record (0: none); 10 is about 1% false positives.
            bits: usize = 10 in 0..=64,
            /// Runs each level below 0 holds: 1 is leveled (a merge rewrites the next level's
            /// run with it, levels `ratio` apart); more is tiered (a level collects this many
            /// runs, then merges them into one new run of the next level, which it does not
            /// rewrite: levels this many times apart, less rewriting, more runs to ask).
            runs: usize = 1 in 1..=64,
            /// Values of at least this many bytes go to the value log (WiscKey): a run keeps
            /// a reference to them, so merges rewrite the reference, not the value; 0 keeps
            /// every value in the runs.
            vmin: usize = 0 in 0..=16_777_216,
        },
    }
}

impl EngineSpec {
    /// Every accepted spelling of an engine, for messages and help: `hybrid, btree, log:<map>`
    /// with the maps' forms.
    pub fn accepted_forms() -> String {
        format!(
            "{}, {}, {lsm}, {name}:<map> (8-byte keys) or {name}:trie:<map> (keys of any \
             length; any <map> but hash) where <map> is one of {}",
            EngineSpec::Hybrid {}.name(),
            EngineSpec::BTree {}.name(),
            super::MapSpec::accepted_forms(),
            name = EngineSpec::Log {}.name(),
            lsm = EngineSpec::forms()
                .into_iter()
                .find(|f| f.starts_with("lsm"))
                .unwrap_or_default(),
        )
    }
}

crate::param_specs! {
    /// The map of the typed hybrid's dynamic stage (`crate::disk::DynamicMap`).
    pub enum DynamicStageSpec {
        /// lidx's in-memory B+-tree (the paper's choice and the index's default).
        BTree = "btree" {},
        /// `crate::disk::SortedRuns`: two sorted arrays, a quarter of the B+-tree's bytes per
        /// entry.
        SortedRuns = "sorted-runs" {},
    }
}

impl DynamicStageSpec {
    /// Parses `btree` or `sorted-runs`.
    pub fn parse(item: &str) -> Result<DynamicStageSpec, super::BadSpec> {
        DynamicStageSpec::parse_item(item).ok_or_else(|| {
            super::BadSpec::new(
                "dynamic stage",
                item.trim(),
                super::role::one_of(&DynamicStageSpec::forms()),
            )
        })
    }
}

impl Default for DynamicStageSpec {
    /// The B+-tree, the paper's choice.
    fn default() -> Self {
        DynamicStageSpec::BTree {}
    }
}
