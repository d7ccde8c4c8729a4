//! The simulation engine: time and the event queue. Imports no model.
pub mod queue;
pub mod time;
