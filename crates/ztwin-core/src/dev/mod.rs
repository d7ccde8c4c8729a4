//! Devices and CPUs: queues with caps on a simulated clock; a RAID controller's cache in
//! front of devices (`controller`), Linux md RAID10 over devices (`md_raid10`), and what a
//! filesystem sits on, one device or an array (`target`); the provider's throttles, with
//! burst credits (`throttle`); Azure's host cache in front of Premium SSDs (`host_cache`).
pub mod controller;
pub mod cpu;
pub mod device;
pub mod disk;
pub mod host_cache;
pub mod md_raid10;
pub mod target;
pub mod throttle;
