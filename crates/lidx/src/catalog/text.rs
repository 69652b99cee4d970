//! The in-memory indexes over byte-string keys a text benchmark runs ([`StringIndexSpec`],
//! [`super::Role::StringIndex`]).

crate::param_specs! {
    /// One index of a text benchmark, with its parameters.
    pub enum StringIndexSpec [labels: Digits] {
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

impl StringIndexSpec {
    /// Parses a comma-separated list; every item must parse (an empty one does not).
    pub fn parse_list(list: &str) -> Result<Vec<StringIndexSpec>, super::BadSpec> {
        list.split(',')
            .map(|item| {
                StringIndexSpec::parse_item(item).ok_or_else(|| {
                    super::BadSpec::new("index", item.trim(), StringIndexSpec::accepted_forms())
                })
            })
            .collect()
    }

    /// Every accepted form, for messages and help.
    pub fn accepted_forms() -> String {
        format!("{} (text datasets)", StringIndexSpec::forms().join(", "))
    }
}
