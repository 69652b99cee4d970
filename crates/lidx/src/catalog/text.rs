//! The in-memory indexes over byte-string keys a text benchmark runs ([`StringIndexSpec`],
//! [`super::Role::StringIndex`]).

crate::param_specs! {
    /// One index of a text benchmark, with its parameters.
    pub enum StringIndexSpec {
        /// Binary search over the whole array.
        Sorted = "sorted" {},
        /// A PGM on the first 8 bytes of each key, its windows widened over equal prefixes.
        Head8 = "head8" {
            /// The PGM's error: smaller is narrower windows, more segments.
            eps: usize = 32 in 1..,
        },
        /// The byte-string index (`mem::string_index`).
        Strings = "strings" {
            /// Error of each level's model: smaller is narrower windows, more memory.
            eps: usize = 32 in 1..,
            /// Keys sharing a prefix past which a subtree gets its own model.
            threshold: usize = 32 in 1..,
        },
    }
}
