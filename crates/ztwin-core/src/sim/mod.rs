//! The simulation engine: time and the event queue. Imports no model.
pub(crate) mod key_table;
pub mod mem_hint;
pub mod mem_probe;
pub mod queue;
pub(crate) mod small_map;
pub mod time;
