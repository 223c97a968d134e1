//! softrouter's configuration: a TOML file, parsed and validated in one go.
//!
//! Every error names the file, the line and the field, e.g.
//! `router.toml:14: port "p1": mac: "02:00:zz" is not a MAC address`, so a
//! user never has to guess which of many similar tables is wrong. Parsing
//! happens in two steps: serde reads the text into a raw form that keeps the
//! position of every value ([`toml::Spanned`]), then [`validate`] checks the
//! meaning (unique names, addresses, next hops on a connected subnet, ...)
//! and produces the plain [`Config`] the rest of the router uses.
//! [`routes_file::check`] checks the routes file a configuration names by
//! the same rules, streamed, with file:line errors. The file's own shape
//! as serde types, for programs that write a configuration, is
//! `schema::config_file`; this crate checks it (tests in `raw.rs`).

mod error;
mod model;
mod raw;
pub mod routes_file;
pub mod source;
mod validate;

pub use error::ConfigError;
pub use model::*;
/// The address forms are words of the file too (`schema::addr`, with the
/// file's model), named here as the validator's.
pub use schema::addr::{excerpt, is_unicast_mac, parse_mac, Cidr, MacAddr, EXCERPT_CHARS};
pub use validate::{check_runtime_prefix, check_runtime_route, runtime_neighbor, runtime_route};

use std::path::Path;

/// Reads and validates a configuration file: a regular file of at most
/// [`source::MAX_CONFIG_BYTES`] (see [`source`]).
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut source::open_regular(path, source::MAX_CONFIG_BYTES)?,
        &mut text,
    )
    .map_err(|e| ConfigError::io(path, e))?;
    parse(&text, path)
}

/// Parses and validates configuration text; `path` names it in errors and
/// anchors relative file names (captures, route files).
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let raw: raw::RawConfig =
        toml::from_str(text).map_err(|e| ConfigError::from_toml(path, text, &e))?;
    validate::validate(raw, text, path)
}
