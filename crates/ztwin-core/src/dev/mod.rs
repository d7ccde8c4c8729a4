//! Devices and CPUs: queues with caps on a simulated clock.
pub mod cpu;
pub mod device;
pub mod disk;
