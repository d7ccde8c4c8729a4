//! Errors of the core: what went wrong, where (field or component), and when.

/// Result alias of the core.
pub type Result<T> = std::result::Result<T, Error>;

/// An error of the core. Display is one line naming the place and the problem.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A configuration value the model cannot run with.
    #[error("{field}: {message}")]
    Config {
        /// Dotted path of the offending field (e.g. `filesystem.recordsize`).
        field: String,
        /// What is wrong and what is allowed.
        message: String,
    },
    /// A failure while simulating, naming the component and the simulated time.
    #[error("{component} at t={time_ns} ns: {message}")]
    Simulation {
        /// Component path (e.g. `pool.vdev0`, `arc`).
        component: String,
        /// Simulated time of the failure, ns.
        time_ns: u64,
        /// What happened.
        message: String,
    },
    /// The run's observer asked it to stop (see `run::progress`): no result.
    #[error("run stopped at t={time_ns} ns")]
    Stopped {
        /// Simulated time the run had reached.
        time_ns: u64,
    },
}

impl Error {
    /// A configuration error on `field`.
    pub fn config(field: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config { field: field.into(), message: message.into() }
    }
}
