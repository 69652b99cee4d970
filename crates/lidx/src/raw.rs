//! The raw door: what lidx's own command line, Python bindings, benchmarks, fuzz targets and
//! tests need beyond the front door (file decoders and format constants for `lidx verify` and
//! the fuzzers, internal helpers the harness measures), laid out by the path it has inside the
//! crate. It is hidden from the docs and not part of the API an embedder should use: nothing
//! here is stable. Everything an embedder builds is re-exported at the crate root and in the
//! public family modules ([`crate::catalog`], [`crate::mem`], [`crate::disk`], [`crate::io`],
//! [`crate::join`], [`crate::kv`], [`crate::model`], [`crate::search`], [`crate::spec`]).

pub mod codec {
    pub use crate::codec::{Decoder, MAX_LEN};
}
pub mod disk {
    pub mod alex {
        pub use crate::disk::alex::{
            decode_data_header, decode_inner_header, decode_meta, DATA_HEADER_BYTES,
            INNER_HEADER_BYTES,
        };
        pub mod meta {
            pub use crate::disk::alex::meta::{KIND_DATA, MAGIC};
        }
    }
    pub mod btree {
        pub use crate::disk::btree::decode_header;
        pub mod free {
            pub use crate::disk::btree::free::{decode_free_block, encode_free_block, FreeLayout};
        }
        pub mod header {
            pub use crate::disk::btree::header::MAGIC;
        }
        pub mod node {
            pub use crate::disk::btree::node::{child_index, decode_node, Node, NodeLayout};
        }
    }
    pub mod btree_learned {
        pub use crate::disk::btree_learned::{decode_header, decode_meta, decode_meta_block};
        pub mod header {
            pub use crate::disk::btree_learned::header::{MAGIC, VERSION};
        }
        pub mod meta {
            pub use crate::disk::btree_learned::meta::encode_meta;
        }
    }
    pub mod byte_btree {
        pub use crate::disk::byte_btree::{Image, IMAGE_MAGIC, PAGES_MAGIC};
    }
    pub mod byte_table {
        pub use crate::disk::byte_table::{BYTE_TABLE_MAGIC, BYTE_TABLE_VERSION};
    }
    pub mod dpgm {
        pub mod manifest {
            pub use crate::disk::dpgm::manifest::{capacity, decode_manifest, MAGIC, VERSION};
        }
    }
    pub mod film {
        pub use crate::disk::film::format::{
            check_data_header, decode_header, decode_snapshot, encode_data_header,
            next_snapshot_first, Header, Snapshot, DATA_KIND, DATA_MAGIC, HEADER_BYTES, IN_MEMORY,
            KIND, MAGIC, SNAPSHOT_FIRST, VERSION,
        };
    }
    pub mod fiting {
        pub mod format {
            pub use crate::disk::fiting::format::{
                decode_header, decode_meta, decode_segref, Header, MAGIC, SEGMENT_TAG, VERSION,
            };
        }
    }
    pub mod flagged_records {
        pub use crate::disk::flagged_records::{decode_records, encode_records};
    }
    pub mod lipp {
        pub use crate::disk::lipp::{decode_meta, decode_node_header, decode_slot};
        pub mod meta {
            pub use crate::disk::lipp::meta::MAGIC;
        }
        pub mod node {
            pub use crate::disk::lipp::node::{encode_addr, SlotKind, NODE_HEADER};
        }
    }
    pub mod static_learned {
        pub use crate::disk::static_learned::{read_header, read_kind};
        pub mod data_block {
            pub use crate::disk::static_learned::data_block::decode_data_block;
        }
        pub mod header {
            pub use crate::disk::static_learned::header::{
                decode_header, HEADER_BYTES, MAGIC, VERSION,
            };
        }
    }
}
pub mod io {
    pub mod checksum {
        pub use crate::io::checksum::{seal, verify};
    }
    pub mod sim {
        pub use crate::io::sim::thread_modeled_ns;
    }
}
pub mod join {
    pub mod baseline {
        pub use crate::join::baseline::run;
    }
    pub mod inlj {
        pub use crate::join::inlj::check_window;
    }
    pub mod output {
        pub use crate::join::output::record_hash;
    }
    pub mod table {
        pub use crate::join::table::{HEADER_BYTES, TABLE_MAGIC};
    }
    pub mod table_index {
        pub use crate::join::table_index::{
            decode_index_header, decode_saved, load_or_build, read_saved, INDEX_HEADER_BYTES,
            INDEX_MAGIC, INDEX_VERSION, UNSAVED,
        };
    }
}
pub mod key {
    pub use crate::key::{check_key_type, check_sorted, head8};
}
pub mod kv {
    pub use crate::kv::manifest::{Manifest, ManifestStore};
    pub use crate::kv::wal::{replay, Record, ReplayReport, Wal, WalOptions};
    pub mod hybrid {
        pub use crate::kv::hybrid::{
            decode_meta, DynamicMap, MergeTrigger, SortedRuns, StaticModel, StdMap,
        };
    }
    pub mod manifest {
        pub use crate::kv::manifest::{
            decode_current, decode_manifest, encode_current, encode_manifest, MANIFEST_MAGIC,
            VERSION,
        };
    }
    pub mod store {
        pub use crate::kv::store::{decode_identity, STORE_FILE, STORE_MAGIC, STORE_VERSION};
        pub mod log {
            pub use crate::kv::store::{decode_checkpoint, CHECKPOINT_MAGIC, CHECKPOINT_VERSION};
        }
    }
    pub mod wal {
        pub use crate::kv::wal::{
            decode_record, encode_record, encode_segment_header, scan_segment, segment_path,
            FRAME_BYTES, MAX_BODY_BYTES, SEALED_UNSYNCED, SEGMENT_HEADER_BYTES,
        };
    }
}
pub mod mem {
    pub mod start {
        pub mod cost_model {
            pub use crate::mem::start::cost_model::{calibrate, llc_bytes, measure_page_walk};
        }
    }
    pub mod string_index {
        pub use crate::mem::string_index::escape;
    }
}
pub mod model {
    pub mod zero_interval {
        pub use crate::model::zero_interval::{
            eps_for_expected_pages, expected_pages, validate, zero_eps_for_expected_pages,
            zero_expected_pages, zero_pla_points, zero_spline_points,
        };
    }
}
