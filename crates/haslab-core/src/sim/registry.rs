//! Registries of named algorithms: one list from which a family's config enum, its names and
//! aliases, its lookup, its catalog, its serde form and its JSON Schema are all generated.
//!
//! The model is Linux's `tcp_congestion_ops` (each algorithm carries its own `.name`, and
//! `tcp_register_congestion_control` adds it to one list) and quinn-proto's
//! `ControllerFactory` (each algorithm's config builds its controller). An algorithm's file
//! implements its family's trait (name, aliases, source, range check, constructor) on a type
//! of its own; the family's registry names the file and that type on one line, which also
//! declares the file's module (`pub mod newreno;`):
//!
//! ```text
//! registry! {
//!     /// The `[flow.cc]` table of a scenario.
//!     pub enum CcConfig: CcAlgorithm, visit CcVisit, what "congestion control" {
//!         mod newreno { NewReno(NewRenoConfig) }
//!         mod cubic { Cubic(CubicConfig) }
//!     }
//! }
//! ```
//!
//! A file that serves several algorithms (one player type with a strategy per algorithm) lists
//! them in its line, in registry order: `mod mpc { RobustMpc(RobustMpc), FastMpc(FastMpc) }`.
//! Modules that hold no algorithm of their own (shared helpers) are ordinary `pub mod` items
//! beside the registry.
//!
//! A config is written in a scenario as a table whose `algorithm` key names the algorithm and
//! whose other keys are its parameters (`{ algorithm = "cubic", beta = 0.7 }`), or as a bare
//! name with every parameter at its default ([`NameOrTable`]).

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// What every registered algorithm states about itself.
pub trait Algorithm {
    /// Its parameters (a serde struct with defaults and doc comments).
    type Config: Clone
        + fmt::Debug
        + PartialEq
        + Default
        + Serialize
        + de::DeserializeOwned
        + JsonSchema;
    /// The name used in scenarios.
    const NAME: &'static str;
    /// Other names accepted in scenarios.
    const ALIASES: &'static [&'static str] = &[];
    /// The reference the implementation follows.
    const SOURCE: &'static str;
    /// What it is, in one line (the schema's description).
    const SUMMARY: &'static str;
    /// Checks the ranges a type cannot express; Err((parameter, what is accepted)).
    fn check(_config: &Self::Config) -> Result<(), (String, String)> {
        Ok(())
    }
}

/// One entry of a registry's catalog: an algorithm, where its rules come from, and its
/// parameters with their defaults.
#[derive(Clone, Debug, Serialize)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    /// Other names accepted in scenarios.
    pub aliases: &'static [&'static str],
    /// The reference the implementation follows.
    pub source: &'static str,
    /// The JSON of its default config, without the `algorithm` key.
    pub defaults: Value,
    /// Each parameter with its default, accepted values and description.
    pub parameters: Vec<super::fields::FieldInfo>,
}

impl AlgorithmInfo {
    /// The catalog entry of algorithm `A`.
    pub fn of<A: Algorithm>() -> AlgorithmInfo {
        let defaults = serde_json::to_value(A::Config::default()).unwrap_or(Value::Null);
        AlgorithmInfo {
            name: A::NAME,
            aliases: A::ALIASES,
            source: A::SOURCE,
            defaults,
            parameters: super::fields::fields::<A::Config>(),
        }
    }
}

/// Serialises `config` as a table whose first key is `algorithm` (the form scenarios use).
pub fn serialize_tagged<S: Serializer, C: Serialize>(
    name: &'static str,
    config: &C,
    s: S,
) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Tagged<'a, C> {
        algorithm: &'static str,
        #[serde(flatten)]
        config: &'a C,
    }
    Tagged {
        algorithm: name,
        config,
    }
    .serialize(s)
}

/// The schema of algorithm `A`'s table: its config's properties and `algorithm = NAME`.
pub fn tagged_schema<A: Algorithm>(generator: &mut SchemaGenerator) -> Value {
    let mut schema = serde_json::to_value(A::Config::json_schema(generator)).unwrap_or_default();
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("description".into(), A::SUMMARY.into());
        let props = obj
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(props) = props.as_object_mut() {
            let mut with_tag = Map::new();
            with_tag.insert(
                "algorithm".into(),
                serde_json::json!({"type": "string", "const": A::NAME}),
            );
            with_tag.extend(std::mem::take(props));
            *props = with_tag;
        }
        let required = obj
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(r) = required.as_array_mut() {
            r.insert(0, "algorithm".into());
        }
        obj.insert("type".into(), "object".into());
    }
    schema
}

/// Why a table's parameters were refused: the parameter's path (empty when the table as a
/// whole is at fault) and the message.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub path: String,
    pub message: String,
}

impl ParamError {
    /// The error of deserialising a parameter table with `serde_path_to_error`.
    pub fn from_path_error(e: serde_path_to_error::Error<serde_json::Error>) -> ParamError {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        ParamError {
            path,
            message: e.into_inner().to_string(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.path.is_empty() || self.message.contains(&format!("`{}`", self.path)) {
            f.write_str(&self.message)
        } else {
            write!(f, "parameter `{}`: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ParamError {}

/// A family's generated enum, seen generically: what [`NameOrTable`] and the error messages
/// need.
pub trait Registry: Sized {
    /// What the family is called in messages ("congestion control", "player algorithm").
    const WHAT: &'static str;
    /// Every canonical name, in registry order.
    fn names() -> &'static [&'static str];
    /// Every algorithm's one-line summary ([`Algorithm::SUMMARY`]), in registry order.
    fn summaries() -> &'static [&'static str];
    /// The default config of the algorithm called `name` or one of its aliases.
    fn by_name(name: &str) -> Option<Self>;
    /// The algorithm `name` (canonical) with the parameters in `params` (a JSON object without
    /// the `algorithm` key); the error keeps the parameter's path.
    fn with_params(name: &str, params: Value) -> Result<Self, ParamError>;
    /// This config's canonical name.
    fn canonical(&self) -> &'static str;
}

fn quoted_names<R: Registry>() -> String {
    R::names()
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A config from a table whose `algorithm` key names the algorithm (or an alias): a missing or
/// unknown name gets the list of names; a parameter's error names the parameter.
pub fn from_table<R: Registry, E: de::Error>(mut table: Map<String, Value>) -> Result<R, E> {
    let name = match table.remove("algorithm") {
        None => {
            return Err(E::custom(format!(
                "missing key `algorithm`: expected one of {}",
                quoted_names::<R>()
            )))
        }
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(E::custom(format!(
                "invalid `algorithm` {other}: expected one of {}",
                quoted_names::<R>()
            )))
        }
    };
    let canonical = R::by_name(&name).ok_or_else(|| unknown::<R, E>(&name))?;
    // the parameters are deserialised on their own so that an error keeps the parameter's
    // name (the table was buffered: the outer path stops at the table)
    R::with_params(canonical.canonical(), Value::Object(table)).map_err(E::custom)
}

fn unknown<R: Registry, E: de::Error>(name: &str) -> E {
    E::custom(unknown_message::<R>(name))
}

/// "unknown congestion control \"vegas\": expected one of \"newreno\", ...".
pub fn unknown_message<R: Registry>(name: &str) -> String {
    format!(
        "unknown {} {name:?}: expected one of {}",
        R::WHAT,
        quoted_names::<R>()
    )
}

/// Deserialises a family's config from its table (see [`from_table`]).
pub fn deserialize_table<'de, R: Registry, D: de::Deserializer<'de>>(d: D) -> Result<R, D::Error> {
    let table = Map::deserialize(d)?;
    from_table(table)
}

/// A scenario's choice of an algorithm: its name with the default parameters (`"cubic"`), or
/// its table (`{ algorithm = "cubic", beta = 0.7 }`).
#[derive(Clone, Debug, PartialEq)]
pub struct NameOrTable<R>(pub R);

struct NameOrTableVisitor<R>(std::marker::PhantomData<R>);

impl<'de, R: Registry> de::Visitor<'de> for NameOrTableVisitor<R> {
    type Value = NameOrTable<R>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "a {} name (one of {}) or a table {{ algorithm = \"...\", ... }}",
            R::WHAT.replace(' ', "-"),
            quoted_names::<R>()
        )
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        R::by_name(v)
            .map(NameOrTable)
            .ok_or_else(|| unknown::<R, E>(v))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        // Buffer the table, so that a missing or unknown `algorithm` gets the list of names and
        // the messages read the same from TOML and JSON.
        let table = Map::deserialize(de::value::MapAccessDeserializer::new(map))?;
        from_table(table).map(NameOrTable)
    }
}

impl<'de, R: Registry> Deserialize<'de> for NameOrTable<R> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NameOrTableVisitor(std::marker::PhantomData))
    }
}

impl<R: Serialize> Serialize for NameOrTable<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<R: Registry + JsonSchema> JsonSchema for NameOrTable<R> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        // "CcConfig" -> "CcSpec", "AbrConfig" -> "AbrSpec"
        let name = R::schema_name();
        format!("{}Spec", name.strip_suffix("Config").unwrap_or(&name)).into()
    }
    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let table = generator.subschema_for::<R>();
        // each name with its summary, so that the bare-name form documents every value
        let names: Vec<Value> = R::names()
            .iter()
            .zip(R::summaries())
            .map(|(name, summary)| serde_json::json!({"const": name, "description": summary}))
            .collect();
        let description = format!(
            "{}: a name, or a table whose `algorithm` key names it and whose other keys are its \
             parameters.",
            capitalised(R::WHAT)
        );
        schemars::json_schema!({
            "description": description,
            "anyOf": [
                {"type": "string", "oneOf": names},
                table
            ]
        })
    }
}

/// The first paragraph of a doc comment given line by line (as `#[doc]` attributes hold it),
/// its lines trimmed and joined with newlines as schemars joins a type's doc comment.
pub fn first_paragraph(lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| l.trim())
        .take_while(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Generates a family from one list of `mod file { Variant(AlgorithmType), ... }` lines: the
/// algorithms' modules (`pub mod file;`), the config enum (each variant holding
/// `<file::AlgorithmType as Family>::Config`), `NAMES`, `name`, `source`, `by_name` (names and
/// aliases), `with_params`, `check`, `catalog`, `visit` (a generic dispatch to the algorithm's
/// type, through which the family builds its instances), serde (the `algorithm`-tagged table)
/// and the JSON Schema.
macro_rules! registry {
    (
        $(#[doc = $doc:literal])*
        $vis:vis enum $Enum:ident: $Family:ident, visit $Visit:ident, what $what:literal {
            $( mod $module:ident { $( $Variant:ident($T:ident) ),+ $(,)? } )+
        }
    ) => {
        $( pub mod $module; )+

        $crate::sim::registry::registry! {
            @family
            $(#[doc = $doc])*
            $vis enum $Enum: $Family, visit $Visit, what $what {
                $( $( $Variant($module::$T), )+ )+
            }
        }
    };
    (
        @family
        $(#[doc = $doc:literal])*
        $vis:vis enum $Enum:ident: $Family:ident, visit $Visit:ident, what $what:literal {
            $( $Variant:ident($T:ty), )+
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone, Debug, PartialEq)]
        $vis enum $Enum {
            $( $Variant(<$T as $crate::sim::registry::Algorithm>::Config), )+
        }

        #[doc = concat!(
            "A generic operation over the registered algorithms ([`",
            stringify!($Enum),
            "::visit`])."
        )]
        $vis trait $Visit {
            type Out;
            fn visit<A: $Family>(self, config: &A::Config) -> Self::Out;
        }

        impl $Enum {
            /// Every algorithm's name, in registry order.
            pub const NAMES: &'static [&'static str] =
                &[ $( <$T as $crate::sim::registry::Algorithm>::NAME, )+ ];

            /// The algorithm's name as in scenarios.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Self::$Variant(_) => <$T as $crate::sim::registry::Algorithm>::NAME, )+
                }
            }

            /// The reference the algorithm follows.
            pub fn source(&self) -> &'static str {
                match self {
                    $( Self::$Variant(_) => <$T as $crate::sim::registry::Algorithm>::SOURCE, )+
                }
            }

            /// A default configuration of the algorithm called `name` (or one of its aliases).
            pub fn by_name(name: &str) -> Option<Self> {
                $(
                    if name == <$T as $crate::sim::registry::Algorithm>::NAME
                        || <$T as $crate::sim::registry::Algorithm>::ALIASES.contains(&name)
                    {
                        return Some(Self::$Variant(Default::default()));
                    }
                )+
                None
            }

            /// The algorithm `name` (a canonical name, see [`Self::name`]) with the parameters
            /// in `params` (a JSON object without the `algorithm` key); errors carry the
            /// parameter's path.
            pub fn with_params(
                name: &str,
                params: serde_json::Value,
            ) -> Result<Self, $crate::sim::registry::ParamError> {
                $(
                    if name == <$T as $crate::sim::registry::Algorithm>::NAME {
                        return serde_path_to_error::deserialize(params)
                            .map(Self::$Variant)
                            .map_err($crate::sim::registry::ParamError::from_path_error);
                    }
                )+
                Err($crate::sim::registry::ParamError {
                    path: String::new(),
                    message: $crate::sim::registry::unknown_message::<Self>(name),
                })
            }

            /// Checks the ranges a type cannot express; the error names the parameter and what
            /// is accepted.
            pub fn check(&self) -> Result<(), (String, String)> {
                match self {
                    $( Self::$Variant(c) => <$T as $crate::sim::registry::Algorithm>::check(c), )+
                }
            }

            /// Every algorithm with its source and default parameters, in registry order.
            pub fn catalog() -> Vec<$crate::sim::registry::AlgorithmInfo> {
                vec![ $( $crate::sim::registry::AlgorithmInfo::of::<$T>(), )+ ]
            }

            /// Calls `v` with the algorithm's type and its config.
            pub fn visit<V: $Visit>(&self, v: V) -> V::Out {
                match self {
                    $( Self::$Variant(c) => v.visit::<$T>(c), )+
                }
            }
        }

        impl $crate::sim::registry::Registry for $Enum {
            const WHAT: &'static str = $what;
            fn names() -> &'static [&'static str] {
                Self::NAMES
            }
            fn summaries() -> &'static [&'static str] {
                &[ $( <$T as $crate::sim::registry::Algorithm>::SUMMARY, )+ ]
            }
            fn by_name(name: &str) -> Option<Self> {
                Self::by_name(name)
            }
            fn with_params(
                name: &str,
                params: serde_json::Value,
            ) -> Result<Self, $crate::sim::registry::ParamError> {
                Self::with_params(name, params)
            }
            fn canonical(&self) -> &'static str {
                self.name()
            }
        }

        impl serde::Serialize for $Enum {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(
                        Self::$Variant(c) => $crate::sim::registry::serialize_tagged(
                            <$T as $crate::sim::registry::Algorithm>::NAME,
                            c,
                            s,
                        ),
                    )+
                }
            }
        }

        impl<'de> serde::Deserialize<'de> for $Enum {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::sim::registry::deserialize_table(d)
            }
        }

        impl schemars::JsonSchema for $Enum {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($Enum).into()
            }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let one_of = vec![
                    $( $crate::sim::registry::tagged_schema::<$T>(generator), )+
                ];
                schemars::json_schema!({
                    "description": $crate::sim::registry::first_paragraph(&[ $( $doc ),* ]),
                    "oneOf": one_of
                })
            }
        }
    };
}

pub(crate) use registry;
