//! The simulation engine: time and the event queue. Imports no model.
pub(crate) mod key_table;
pub(crate) mod small_map;
pub mod mem_hint;
pub mod queue;
pub mod time;
