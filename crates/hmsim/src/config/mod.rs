//! TOML loading with validation. One path for every module: parse with serde (unknown keys
//! and wrong types become errors naming the key path and line), apply `--set` overrides, then
//! check ranges with a [`Validator`] that knows the key path of every field it checks.

mod host_memory;
mod load;
mod overrides;
pub mod params;
mod small_file;
mod source;
mod validate;

pub use host_memory::{
    available_memory_bytes, check_against, check_host_memory, human_bytes, large_allowed,
    ALLOW_LARGE_ENV,
};
pub use overrides::apply_overrides_with;
pub use params::{ParamDoc, Params};
pub use small_file::{read_config_text, MAX_CONFIG_FILE_BYTES};
pub use source::Source;
#[cfg(test)]
pub(crate) use source::PARSED;
pub use source::{line_of_key, parse_toml};
pub use validate::{Validate, Validator};
