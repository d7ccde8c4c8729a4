//! Block-pointer tree geometry (being written).

use crate::error::{Error, Result};

/// Answers a geometry request given as JSON (contract in the module docs once written).
pub fn geometry_json(_request_json: &str) -> Result<String> {
    Err(Error::config("geometry", "not built yet"))
}
