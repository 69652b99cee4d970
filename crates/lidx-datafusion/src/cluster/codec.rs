//! [`LidxCodec`]: how lidx's table provider and operators travel between a Ballista client,
//! its scheduler and its executors, as DataFusion's logical and physical extension codecs
//! (`datafusion-proto`). What is encoded is where the data is and what to read of it, never
//! the data:
//!
//! * a [`LidxTable`] (client to scheduler, in the logical plan): its path, its kind (a `u64`
//!   or 16-byte string table, or a store) and its row count;
//! * a scan (scheduler to executors, `crate::cluster::read`): the table, the projection, the
//!   limit and the key filters taken over (for `EXPLAIN`); the positions or key ranges each
//!   partition reads travel beside it as an in-memory scan, so that Ballista can hand each
//!   task its own;
//! * a [`crate::LidxIndexJoinExec`]: its table, the table's columns it returns, the outer key
//!   column, which side the outer one was, the hash join's projection and output schema; the
//!   outer side is a child plan, which `datafusion-proto` encodes itself.
//!
//! Every other node, and every other table provider, goes to Ballista's own codecs, whose bytes
//! are told apart from lidx's by a prefix (`LIDX` and a format version).
//!
//! **Opening on arrival.** Each process (scheduler, executor) opens a path once and keeps it
//! open for later plans (a table's index loaded once, a store counted once); plans are checked
//! against what is open: a different kind or row count than the plan was made with means the
//! file changed or another one is at that path, and the path is opened again; if it still
//! differs, the plan fails with [`Error::TableChanged`] rather than read positions planned for
//! other data. Paths must name the same data on every machine (a shared file system, or
//! copies placed alike; `crate::cluster` module docs).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::TableProvider;
use datafusion::common::{internal_datafusion_err, internal_err, Statistics, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use datafusion_proto::protobuf;
use prost::Message;

use crate::cluster::read::LidxReadExec;
use crate::error::Error;
use crate::index_join::LidxIndexJoinExec;
use crate::provider::{LidxTable, Source};
use crate::scan::LidxScanExec;

/// The first bytes of everything lidx encodes: its name and the format's version.
const MAGIC: &[u8; 5] = b"LIDX\x01";

/// A table or store: where it is, what it is, and how many rows the plan saw.
#[derive(Clone, PartialEq, Message)]
struct TableRef {
    /// The path's bytes (Unix paths are bytes, not always UTF-8).
    #[prost(bytes = "vec", tag = "1")]
    path: Vec<u8>,
    /// [`Kind`] as a number.
    #[prost(uint32, tag = "2")]
    kind: u32,
    #[prost(uint64, tag = "3")]
    rows: u64,
}

/// A scan's reader (`LidxReadExec`); its parts are its child.
#[derive(Clone, PartialEq, Message)]
struct ReadNode {
    #[prost(message, optional, tag = "1")]
    table: Option<TableRef>,
    #[prost(uint32, repeated, tag = "2")]
    columns: Vec<u32>,
    #[prost(uint64, optional, tag = "3")]
    limit: Option<u64>,
    #[prost(string, repeated, tag = "4")]
    filters: Vec<String>,
}

/// An index join; its outer side is its child.
#[derive(Clone, PartialEq, Message)]
struct IndexJoinNode {
    #[prost(message, optional, tag = "1")]
    table: Option<TableRef>,
    #[prost(uint32, repeated, tag = "2")]
    inner_columns: Vec<u32>,
    #[prost(uint32, tag = "3")]
    outer_key: u32,
    #[prost(bool, tag = "4")]
    outer_is_left: bool,
    /// The hash join's projection, when `has_projection`.
    #[prost(bool, tag = "5")]
    has_projection: bool,
    #[prost(uint32, repeated, tag = "6")]
    projection: Vec<u32>,
    #[prost(message, optional, tag = "7")]
    schema: Option<protobuf::Schema>,
}

/// One encoded lidx node or table: exactly one field is set.
#[derive(Clone, PartialEq, Message)]
struct LidxNode {
    #[prost(message, optional, tag = "1")]
    table: Option<TableRef>,
    #[prost(message, optional, tag = "2")]
    read: Option<ReadNode>,
    #[prost(message, optional, tag = "3")]
    index_join: Option<IndexJoinNode>,
}

/// What a source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    U64Table = 0,
    Str16Table = 1,
    Store = 2,
}

impl Kind {
    fn of(source: &Source) -> Kind {
        match source {
            Source::U64(_) => Kind::U64Table,
            Source::Str16(_) => Kind::Str16Table,
            Source::Store(_) => Kind::Store,
        }
    }
}

fn path_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

fn ref_of(table: &LidxTable) -> TableRef {
    TableRef {
        path: path_bytes(table.path()),
        kind: Kind::of(table.source()) as u32,
        rows: table.rows(),
    }
}

/// The tables this process has open, by path.
fn open_tables() -> &'static Mutex<HashMap<PathBuf, LidxTable>> {
    static OPEN: OnceLock<Mutex<HashMap<PathBuf, LidxTable>>> = OnceLock::new();
    OPEN.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The table `r` names, open in this process and as the plan saw it (module docs).
fn open_shared(r: &TableRef) -> Result<LidxTable> {
    let path = path_of(&r.path);
    let matches = |t: &LidxTable| Kind::of(t.source()) as u32 == r.kind && t.rows() == r.rows;
    let open = open_tables();
    if let Some(t) = open.lock().map_err(poisoned)?.get(&path) {
        if matches(t) {
            return Ok(t.clone());
        }
    }
    // Opened outside the lock: building a table's index or counting a store takes a while,
    // and other tasks' tables need not wait for it.
    let table = LidxTable::open(&path).map_err(|e| DataFusionError::External(Box::new(e)))?;
    if !matches(&table) {
        return Err(DataFusionError::External(Box::new(Error::TableChanged {
            path,
            planned_rows: r.rows,
            rows: table.rows(),
        })));
    }
    open.lock().map_err(poisoned)?.insert(path, table.clone());
    Ok(table)
}

fn poisoned<T>(_: T) -> DataFusionError {
    internal_datafusion_err!("a thread panicked while it opened a lidx table")
}

/// The lidx node `buf` holds, `None` when it is not lidx's.
fn decode_lidx(buf: &[u8]) -> Option<Result<LidxNode>> {
    let body = buf.strip_prefix(MAGIC.as_slice())?;
    Some(LidxNode::decode(body).map_err(|e| {
        internal_datafusion_err!("a lidx plan node does not decode ({e}); are the client, scheduler and executors the same lidx version?")
    }))
}

fn encode_lidx(node: &LidxNode, buf: &mut Vec<u8>) {
    buf.extend_from_slice(MAGIC);
    buf.extend(node.encode_to_vec());
}

fn columns_of(columns: &[u32]) -> Vec<usize> {
    columns.iter().map(|&c| c as usize).collect()
}

fn columns_to(columns: &[usize]) -> Vec<u32> {
    columns.iter().map(|&c| c as u32).collect()
}

/// lidx's extension codecs, in front of Ballista's (module docs). Register it with the
/// client's session config, the scheduler and every executor.
#[derive(Debug, Default)]
pub struct LidxCodec {
    logical: BallistaLogicalExtensionCodec,
    physical: BallistaPhysicalExtensionCodec,
}

impl LidxCodec {
    fn encode_read(read: &LidxReadExec) -> LidxNode {
        LidxNode {
            read: Some(ReadNode {
                table: Some(ref_of(read.table())),
                columns: columns_to(read.columns()),
                limit: read.limit().map(|l| l as u64),
                filters: read.filters().to_vec(),
            }),
            ..LidxNode::default()
        }
    }

    fn encode_index_join(join: &LidxIndexJoinExec) -> Result<LidxNode> {
        let table = LidxTable::of_source(Arc::clone(join.inner().source()));
        let projection = join.projection();
        Ok(LidxNode {
            index_join: Some(IndexJoinNode {
                table: Some(ref_of(&table)),
                inner_columns: columns_to(join.inner().columns()),
                outer_key: join.outer_key() as u32,
                outer_is_left: join.outer_is_left(),
                has_projection: projection.is_some(),
                projection: projection.map(columns_to).unwrap_or_default(),
                schema: Some(protobuf::Schema::try_from(join.schema().as_ref())?),
            }),
            ..LidxNode::default()
        })
    }

    fn decode_read(read: &ReadNode, inputs: &[Arc<dyn ExecutionPlan>]) -> Result<LidxReadExec> {
        let (Some(r), [input]) = (&read.table, inputs) else {
            return internal_err!("a lidx read node needs its table and one input");
        };
        let table = open_shared(r)?;
        let columns = columns_of(&read.columns);
        let scan = table.whole_scan(columns.clone())?;
        Ok(LidxReadExec::new(
            table,
            Arc::clone(input),
            scan.schema(),
            columns,
            read.limit.map(|l| l as usize),
            read.filters.clone(),
            Arc::new(Statistics::new_unknown(&scan.schema())),
            scan.properties(),
        ))
    }

    fn decode_index_join(
        join: &IndexJoinNode,
        inputs: &[Arc<dyn ExecutionPlan>],
    ) -> Result<LidxIndexJoinExec> {
        let (Some(r), Some(schema), [outer]) = (&join.table, &join.schema, inputs) else {
            return internal_err!("a lidx index join node needs its table, schema and outer side");
        };
        let table = open_shared(r)?;
        let inner = table.whole_scan(columns_of(&join.inner_columns))?;
        let schema: SchemaRef = Arc::new(Schema::try_from(schema)?);
        Ok(LidxIndexJoinExec::new(
            Arc::clone(outer),
            Arc::new(inner),
            join.outer_key as usize,
            join.outer_is_left,
            join.has_projection.then(|| columns_of(&join.projection)),
            schema,
        ))
    }
}

impl LogicalExtensionCodec for LidxCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.logical.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.logical.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match decode_lidx(buf) {
            Some(node) => match node?.table {
                Some(r) => Ok(Arc::new(open_shared(&r)?)),
                None => internal_err!("table {table_ref} was encoded as a lidx node, not a table"),
            },
            None => self
                .logical
                .try_decode_table_provider(buf, table_ref, schema, ctx),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        match node.downcast_ref::<LidxTable>() {
            Some(table) => {
                let node = LidxNode {
                    table: Some(ref_of(table)),
                    ..LidxNode::default()
                };
                encode_lidx(&node, buf);
                Ok(())
            }
            None => self.logical.try_encode_table_provider(table_ref, node, buf),
        }
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.logical.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.logical.try_encode_file_format(buf, node)
    }
}

impl PhysicalExtensionCodec for LidxCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(node) = decode_lidx(buf) else {
            return self.physical.try_decode(buf, inputs, ctx, proto_converter);
        };
        match node? {
            LidxNode {
                read: Some(read), ..
            } => Ok(Arc::new(Self::decode_read(&read, inputs)?)),
            LidxNode {
                index_join: Some(join),
                ..
            } => Ok(Arc::new(Self::decode_index_join(&join, inputs)?)),
            _ => internal_err!("a lidx plan node holds no read and no index join"),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        if let Some(read) = node.downcast_ref::<LidxReadExec>() {
            encode_lidx(&Self::encode_read(read), buf);
            Ok(())
        } else if let Some(join) = node.downcast_ref::<LidxIndexJoinExec>() {
            encode_lidx(&Self::encode_index_join(join)?, buf);
            Ok(())
        } else if node.is::<LidxScanExec>() {
            // Ballista would give every task all of its partitions (`crate::cluster::read`).
            internal_err!(
                "a LidxScanExec reached the cluster codec; the scheduler's session must run \
                 lidx's scan rule (lidx_datafusion::cluster::scheduler_session_state)"
            )
        } else {
            self.physical.try_encode(node, buf, proto_converter)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::physical_plan::{collect, displayable};
    use datafusion::prelude::{SessionConfig, SessionContext};
    use datafusion_proto::physical_plan::AsExecutionPlan;
    use datafusion_proto::protobuf::PhysicalPlanNode;
    use lidx::io::{DeviceKind, Storage};
    use lidx::join::TableWriter;

    fn write_table(dir: &Path, name: &str, keys: impl Iterator<Item = u64>) {
        let storage = Storage::new(dir, DeviceKind::File { direct: false }, 4096).unwrap();
        let mut w = TableWriter::<u64>::create(&storage, name, 8).unwrap();
        for k in keys {
            w.push(&k, &(k ^ 0x5a5a).to_le_bytes()).unwrap();
        }
        w.finish().unwrap();
    }

    fn text(plan: &Arc<dyn ExecutionPlan>) -> String {
        displayable(plan.as_ref()).indent(true).to_string()
    }

    #[test]
    fn plans_travel_as_paths_and_parts_and_other_data_at_a_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        write_table(dir.path(), "big", (0..60_000).map(|k| k * 3));
        write_table(dir.path(), "small", (0..900).map(|k| k * 7));
        let rt = tokio::runtime::Runtime::new().unwrap();
        let config = SessionConfig::new().with_target_partitions(3);
        let state = crate::cluster::scheduler_session_state(config, Some(1_000_000)).unwrap();
        let ctx = SessionContext::new_with_state(state);
        for name in ["big", "small"] {
            let table = LidxTable::open(&dir.path().join(name)).unwrap();
            ctx.register_table(name, Arc::new(table)).unwrap();
        }
        let codec = LidxCodec::default();
        for sql in [
            "SELECT count(*), sum(key), max(value) FROM big WHERE key >= 3000 AND key < 150000",
            "SELECT s.key, b.value FROM small s JOIN big b ON s.key = b.key",
            "SELECT key FROM big WHERE key IN (3, 4, 179997) ORDER BY key",
        ] {
            let plan = rt.block_on(async {
                let frame = ctx.sql(sql).await.unwrap();
                frame.create_physical_plan().await.unwrap()
            });
            let shown = text(&plan);
            assert!(
                shown.contains("LidxReadExec") && !shown.contains("LidxScanExec"),
                "{shown}"
            );
            let proto =
                PhysicalPlanNode::try_from_physical_plan(Arc::clone(&plan), &codec).unwrap();
            let back = proto
                .try_into_physical_plan(&ctx.task_ctx(), &codec)
                .unwrap();
            assert_eq!(text(&back), shown, "{sql}");
            let (want, got) = rt.block_on(async {
                let want = collect(plan, ctx.task_ctx()).await.unwrap();
                let got = collect(back, ctx.task_ctx()).await.unwrap();
                (want, got)
            });
            assert_eq!(got, want, "{sql}");
            assert!(got.iter().map(|b| b.num_rows()).sum::<usize>() > 0, "{sql}");
        }
        let join = rt.block_on(async {
            let frame = ctx
                .sql("SELECT s.key FROM small s JOIN big b ON s.key = b.key")
                .await
                .unwrap();
            frame.create_physical_plan().await.unwrap()
        });
        assert!(text(&join).contains("LidxIndexJoinExec"), "{}", text(&join));

        // A plan made over other data than the path now holds: refused, not read.
        let big = LidxTable::open(&dir.path().join("big")).unwrap();
        let mut planned = ref_of(&big);
        planned.rows += 1;
        match open_shared(&planned) {
            Err(DataFusionError::External(e)) => match e.downcast_ref::<Error>() {
                Some(Error::TableChanged { rows, .. }) => assert_eq!(*rows, 60_000),
                _ => panic!("{e}"),
            },
            other => panic!("{:?}", other.map(|t| t.rows())),
        }
        let mut store_kind = ref_of(&big);
        store_kind.kind = Kind::Store as u32;
        assert!(open_shared(&store_kind).is_err());
        // Bytes without lidx's prefix are left to Ballista's codec.
        assert!(decode_lidx(b"not lidx").is_none());
    }
}
