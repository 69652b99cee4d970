//! Block I/O: devices, the page cache, I/O accounting and block checksums.
//!
//! Every on-disk structure in lidx reads and writes through a [`BlockDevice`]: a real file
//! ([`FileDevice`], `O_DIRECT` so the OS page cache cannot hide I/O) or a simulated one
//! ([`SimDevice`], blocks in memory, time charged by a cost model from paper 000 §3 and paper
//! 002 Table 2). A [`PageCache`] (LRU, paper 003 §6.6) can sit in front of any device. Devices
//! count every request in [`IoStats`]; every block carries a crc32c trailer checked on read.
//! For tests, a [`FaultDevice`] injects the failed, torn and out-of-space writes, failed syncs
//! and damaged reads a [`FaultPlan`] arms, into every device of a storage.

pub(crate) mod aligned;
pub(crate) mod arena;
pub(crate) mod block_map;
pub(crate) mod cache;
pub(crate) mod checksum;
pub(crate) mod device;
pub(crate) mod fault;
pub(crate) mod file;
pub(crate) mod scratch;
pub(crate) mod sim;
pub(crate) mod stats;
pub(crate) mod storage;

pub use aligned::AlignedBuf;
pub use cache::{CacheMode, PageCache};
pub use checksum::BLOCK_TRAILER;
pub use device::{check_block_size, BlockDevice, DEFAULT_BLOCK_SIZE};
pub use fault::{FaultDevice, FaultPlan, FaultScope, WriteFault};
pub use file::{Caching, FileDevice, OpenMode};
pub use sim::{SimDevice, SimProfile};
pub use stats::{IoClass, IoCounters, IoStats};
pub use storage::{DeviceKind, Storage};
