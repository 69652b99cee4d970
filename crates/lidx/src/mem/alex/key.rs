//! [`AlexKey`]: the key types ALEX supports, those whose model image is injective (see the
//! module docs of [`super`] for why `Str16` is not one).

use crate::key::Key;

/// A key type ALEX supports: one whose model image ([`Key::to_model`]) is injective.
pub trait AlexKey: Key {}
impl AlexKey for u64 {}
impl AlexKey for u32 {}
impl AlexKey for i64 {}
impl AlexKey for f64 {}
