//! The one `name:k=v` grammar of every structure spec: `alex:min_density=70`-style names with
//! `:param=value` pairs, and counts such as `10M` or `leaves=1Mi`.
//!
//! One count parser for every number lidx reads from a spec: digits (with optional `_`
//! separators) and an optional suffix, `K`/`M`/`G` (either case) for powers of 1000 or
//! `Ki`/`Mi`/`Gi` for powers of 1024. No sign, no fraction, no surrounding blanks; an overflowing
//! value is refused.
//!
//! [`param_specs!`](crate::param_specs) turns a table of names, parameters, defaults and docs
//! into an enum with its parsing, canonical label and help forms. Every table lives in
//! [`crate::catalog`], so a name means the same thing in every command.

/// Parses `123`, `64K`, `1M`, `2G`, `64Ki`, `1Mi`, `1Gi` (and `_` digit separators).
pub fn parse_count(text: &str) -> Option<u64> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    let (digits, suffix) = text.split_at(split);
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() {
        return None;
    }
    let base: u64 = digits.parse().ok()?;
    let multiplier: u64 = match suffix {
        "" => 1,
        "K" | "k" => 1_000,
        "M" | "m" => 1_000_000,
        "G" | "g" => 1_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        _ => return None,
    };
    base.checked_mul(multiplier)
}

/// `1000000` -> `1M`, `2000000000` -> `2G`, `1048576` -> `1Mi`; other values as plain digits.
pub fn show_count(v: u64) -> String {
    match v {
        0 => "0".to_string(),
        v if v % 1_000_000_000 == 0 => format!("{}G", v / 1_000_000_000),
        v if v % 1_000_000 == 0 => format!("{}M", v / 1_000_000),
        v if v % (1 << 30) == 0 => format!("{}Gi", v >> 30),
        v if v % (1 << 20) == 0 => format!("{}Mi", v >> 20),
        v => v.to_string(),
    }
}

/// How a label writes a table's whole numbers: short (`leaves=1Mi`, the default) or in plain
/// digits (`eps=1000000`, the paper-002 disk models' labels, which file names carry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelStyle {
    /// Round numbers with a suffix ([`show_count`]).
    Short,
    /// Plain digits.
    Digits,
}

/// A value a spec parameter can take, parsed with the `K`/`M`/`G` suffixes.
pub trait ParamValue: Sized + Copy {
    /// What a table writes as the default (`64` for a count, `1.5` for a [`Milli`]).
    type Literal;
    /// The value of the table's default.
    fn from_literal(literal: Self::Literal) -> Self;
    /// Parses `text`, `None` when it is not a number of this type.
    fn parse_param(text: &str) -> Option<Self>;
    /// The value as a number, for reports.
    fn to_u64(self) -> u64;
    /// True when `key=` sets the parameter declared as `name`: only `name` itself, unless the
    /// value has alternative forms ([`ZeroEps`]: `eps=` or `pages=`).
    fn takes(name: &str, key: &str) -> bool {
        name == key
    }
    /// Parses the value given as `key=text`, `key` one that [`Self::takes`].
    fn parse_as(key: &str, text: &str) -> Option<Self> {
        let _ = key;
        Self::parse_param(text)
    }
    /// The parameter as a label writes it: `name=value` in `style`.
    fn pair(self, name: &str, style: LabelStyle) -> String {
        match style {
            LabelStyle::Short => format!("{name}={}", show_count(self.to_u64())),
            LabelStyle::Digits => format!("{name}={}", self.to_u64()),
        }
    }
}

macro_rules! param_value_for_unsigned {
    ($($t:ty),*) => {$(
        impl ParamValue for $t {
            type Literal = $t;
            fn from_literal(literal: $t) -> Self {
                literal
            }
            fn parse_param(text: &str) -> Option<Self> {
                parse_count(text.trim()).and_then(|v| <$t>::try_from(v).ok())
            }
            fn to_u64(self) -> u64 {
                self as u64
            }
        }
    )*};
}
param_value_for_unsigned!(u32, u64, usize);

/// A decimal parameter (`pages=1.5`), kept in thousandths so that specs stay comparable and
/// hashable: any decimal Rust reads as an `f64`, from 1 to a million, rounded to a thousandth.
/// A label writes it as the shortest decimal of that value (`1.5`, `2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Milli(pub u32);

impl Milli {
    /// The value as a decimal.
    pub fn get(self) -> f64 {
        f64::from(self.0) / 1000.0
    }
}

impl ParamValue for Milli {
    type Literal = f64;
    fn from_literal(literal: f64) -> Self {
        Milli((literal * 1000.0).round() as u32)
    }
    fn parse_param(text: &str) -> Option<Self> {
        text.parse::<f64>()
            .ok()
            .filter(|p| p.is_finite() && (1.0..=1e6).contains(p))
            .map(Milli::from_literal)
    }
    /// In thousandths.
    fn to_u64(self) -> u64 {
        u64::from(self.0)
    }
    fn pair(self, name: &str, _: LabelStyle) -> String {
        format!("{name}={}", self.get())
    }
}

/// The error of a zero-interval disk model (paper 002 G3): given (`eps=<e>`), or expected
/// blocks per lookup (`pages=<p>`, eq. 4) to derive it from once the records per block are
/// known. A parameter of two alternative keys: one of them, once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ZeroEps {
    /// `eps=<e>`.
    Eps(usize),
    /// `pages=<p>`.
    Pages(Milli),
}

impl ParamValue for ZeroEps {
    /// Expected pages.
    type Literal = f64;
    fn from_literal(literal: f64) -> Self {
        ZeroEps::Pages(Milli::from_literal(literal))
    }
    fn parse_param(text: &str) -> Option<Self> {
        usize::parse_param(text).map(ZeroEps::Eps)
    }
    /// The eps, or the pages in thousandths.
    fn to_u64(self) -> u64 {
        match self {
            ZeroEps::Eps(e) => e as u64,
            ZeroEps::Pages(p) => p.to_u64(),
        }
    }
    fn takes(name: &str, key: &str) -> bool {
        key == name || key == "pages"
    }
    fn parse_as(key: &str, text: &str) -> Option<Self> {
        match key {
            "pages" => Milli::parse_param(text).map(ZeroEps::Pages),
            _ => Self::parse_param(text),
        }
    }
    fn pair(self, name: &str, style: LabelStyle) -> String {
        match self {
            ZeroEps::Eps(e) => e.pair(name, style),
            ZeroEps::Pages(p) => p.pair("pages", style),
        }
    }
}

/// Splits `name:key=value:key=value` into its name and pairs; `None` when a part has no `=`.
pub fn split_item(item: &str) -> Option<(&str, Vec<(&str, &str)>)> {
    let mut parts = item.trim().split(':');
    let name = parts.next().unwrap_or_default();
    let mut pairs = Vec::new();
    for part in parts {
        let (key, value) = part.split_once('=')?;
        pairs.push((key.trim(), value.trim()));
    }
    Some((name, pairs))
}

/// Declares a spec enum from a table: each row `Variant = "name" { param: type = default, ... }`
/// with doc comments, and optionally one trailing `extra Variant(Type)` whose type is another
/// spec enum of this macro, tried for names the rows do not have. A parameter's type is any
/// [`ParamValue`](crate::spec::ParamValue): a count, a decimal ([`Milli`]) or a value of
/// alternative keys ([`ZeroEps`]), its default a literal of the type's `Literal`. A parameter
/// may add `in <range>` (a value outside it is refused) and `=> "<placeholder>"` (what its form
/// shows instead of the default). `pub enum Name [labels: Digits]` writes the rows' whole
/// numbers in plain digits in labels ([`LabelStyle`]); they are short by default. The enum gets `forms` (every accepted form with its defaults or
/// placeholders), `names`, `name`, `params` (in declaration order), `from_parts` (`None` for an
/// unknown name, an unknown or repeated parameter or a value that does not parse or is out of
/// range) and `label` (the canonical spelling with every parameter, round numbers short).
#[doc(hidden)]
#[macro_export]
macro_rules! param_specs {
    (
        $(#[doc = $edoc:literal])*
        pub enum $enum:ident $([labels: $style:ident])? {
            $(
                $(#[doc = $doc:literal])*
                $variant:ident = $name:literal {
                    $(
                        $(#[doc = $pdoc:literal])*
                        $param:ident : $ty:ty = $default:literal
                        $(in $range:expr)? $(=> $placeholder:literal)?
                    ),* $(,)?
                }
            ),* $(,)?
        }
        $( extra $(#[doc = $xdoc:literal])* $xvariant:ident($xty:ty) )?
    ) => {
        $(#[doc = $edoc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $enum {
            $(
                $(#[doc = $doc])*
                $variant { $( $(#[doc = $pdoc])* $param: $ty ),* },
            )*
            $( $(#[doc = $xdoc])* $xvariant($xty), )?
        }

        impl $enum {
            /// The forms of the table's own rows, in declaration order.
            fn own_forms() -> Vec<String> {
                vec![$({
                    #[allow(unused_mut)]
                    let mut form = String::from($name);
                    $(
                        form.push_str(&format!(
                            "[:{}={}]",
                            stringify!($param),
                            $crate::param_form!($default $(, $placeholder)?)
                        ));
                    )*
                    form
                }),*]
            }

            /// Every accepted form with its defaults (or placeholders), e.g.
            /// `rs[:bits=18][:err=32]`.
            pub fn forms() -> Vec<String> {
                #[allow(unused_mut)]
                let mut forms = Self::own_forms();
                $(
                    for form in <$xty>::forms() {
                        if !forms.contains(&form) {
                            forms.push(form);
                        }
                    }
                )?
                forms
            }

            /// The table's own rows as help lines, `form: what it is` (the row's doc).
            pub fn help_lines() -> Vec<String> {
                let docs: Vec<&str> = vec![$( concat!("" $(, $doc)*) ),*];
                Self::own_forms()
                    .into_iter()
                    .zip(docs)
                    .map(|(form, doc)| format!("{form}: {}", doc.trim()))
                    .collect()
            }

            /// The accepted form of this spec's structure, as [`Self::forms`] lists it.
            pub fn form(&self) -> String {
                $(
                    if let $enum::$xvariant(inner) = self {
                        return inner.form();
                    }
                )?
                let index = Self::names().iter().position(|&name| name == self.name());
                Self::own_forms().swap_remove(index.unwrap_or_default())
            }

            /// Every name of the table's own rows, in declaration order.
            pub fn names() -> &'static [&'static str] {
                &[$($name),*]
            }

            /// The name as spelled in specs.
            pub fn name(&self) -> &'static str {
                match self {
                    $( $enum::$variant { .. } => $name, )*
                    $( $enum::$xvariant(inner) => {
                        let _: &$xty = inner;
                        inner.name()
                    } )?
                }
            }

            /// The parameters with their values, in declaration order.
            pub fn params(&self) -> Vec<(&'static str, u64)> {
                match *self {
                    $( $enum::$variant { $($param),* } => {
                        vec![$( (stringify!($param), $crate::spec::ParamValue::to_u64($param)) ),*]
                    } )*
                    $( $enum::$xvariant(inner) => {
                        let _: &$xty = &inner;
                        inner.params()
                    } )?
                }
            }

            /// The spec named `name` with `pairs` set over its defaults.
            #[allow(unreachable_code, unused_mut, unused_variables)]
            pub fn from_parts(name: &str, pairs: &[(&str, &str)]) -> Option<Self> {
                match name {
                    $( $name => {
                        $(
                            let mut $param: $ty =
                                <$ty as $crate::spec::ParamValue>::from_literal($default);
                        )*
                        let mut seen: Vec<&str> = Vec::new();
                        for pair in pairs {
                            let param: &str = match pair.0 {
                                $( key if <$ty as $crate::spec::ParamValue>::takes(
                                    stringify!($param),
                                    key,
                                ) => stringify!($param), )*
                                _ => return None,
                            };
                            if seen.contains(&param) {
                                return None;
                            }
                            seen.push(param);
                            match param {
                                $( stringify!($param) => {
                                    $param = <$ty as $crate::spec::ParamValue>::parse_as(
                                        pair.0,
                                        pair.1,
                                    )?;
                                    $(
                                        if !($range).contains(&$param) {
                                            return None;
                                        }
                                    )?
                                } )*
                                _ => return None,
                            }
                        }
                        Some($enum::$variant { $($param),* })
                    } )*
                    _ => {
                        $( return <$xty>::from_parts(name, pairs).map($enum::$xvariant); )?
                        None
                    }
                }
            }

            /// Parses one `name[:param=value]...` item, `None` when [`Self::from_parts`] refuses
            /// it or a part has no `=`.
            pub fn parse_item(item: &str) -> Option<Self> {
                let (name, pairs) = $crate::spec::split_item(item)?;
                Self::from_parts(name, &pairs)
            }

            /// The canonical spelling with every parameter, round numbers short
            /// (`rmi:leaves=1Mi`) unless the table says `[labels: Digits]`; it parses back to
            /// the same spec.
            pub fn label(&self) -> String {
                #[allow(unused_variables)]
                let style = $crate::label_style!($($style)?);
                match *self {
                    $( $enum::$variant { $($param),* } => {
                        #[allow(unused_mut)]
                        let mut label = String::from($name);
                        $(
                            label.push(':');
                            label.push_str(&$crate::spec::ParamValue::pair(
                                $param,
                                stringify!($param),
                                style,
                            ));
                        )*
                        label
                    } )*
                    $( $enum::$xvariant(inner) => {
                        let _: &$xty = &inner;
                        inner.label()
                    } )?
                }
            }
        }
    };
}

/// The [`LabelStyle`] of a [`param_specs!`](crate::param_specs) table: short unless it says.
#[doc(hidden)]
#[macro_export]
macro_rules! label_style {
    () => {
        $crate::spec::LabelStyle::Short
    };
    ($style:ident) => {
        $crate::spec::LabelStyle::$style
    };
}

/// What a [`param_specs!`](crate::param_specs) form shows for one parameter: its placeholder
/// when the table gives one, else its default.
#[doc(hidden)]
#[macro_export]
macro_rules! param_form {
    ($default:literal) => {
        stringify!($default)
    };
    ($default:literal, $placeholder:literal) => {
        $placeholder
    };
}
