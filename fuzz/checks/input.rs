//! The bytes of a model-based target's input, read one at a time as the choices of an operation
//! sequence. An input that runs out ends the sequence; a cap on the operations keeps one run to
//! milliseconds whatever the input's length. Faults are armed from input bytes the same way
//! for every target.

use lidx::io::{FaultPlan, WriteFault};

/// Operations a model-based run does at most.
pub const MAX_OPS: usize = 300;

/// A cursor over the input's bytes.
pub struct Input<'a> {
    bytes: &'a [u8],
}

impl<'a> Input<'a> {
    /// A cursor at the first byte.
    pub fn new(bytes: &'a [u8]) -> Input<'a> {
        Input { bytes }
    }

    /// The next byte, `None` at the end.
    pub fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(first)
    }

    /// The next byte as a flag (its low bit).
    pub fn flag(&mut self) -> Option<bool> {
        self.byte().map(|b| b & 1 == 1)
    }
}

const WRITE_FAULTS: [WriteFault; 4] = [
    WriteFault::Error,
    WriteFault::NoSpace,
    WriteFault::Torn,
    WriteFault::FailSync,
];

/// Arms `plan` from two input bytes: `after % 64` requests (or blocks read) pass, then `how`
/// picks a write fault or a flipped bit in a block read; `how`'s top bit makes the fault
/// sticky (every later write and sync fails too).
pub fn arm(plan: &FaultPlan, after: u8, how: u8) {
    let after = u64::from(after % 64);
    plan.sticky(how & 0x80 != 0);
    match WRITE_FAULTS.get(usize::from(how % 5)) {
        Some(&fault) => plan.fail_write_after(after, fault),
        None => plan.flip_read_after(after),
    }
}
