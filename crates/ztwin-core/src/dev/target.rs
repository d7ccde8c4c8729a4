//! What a filesystem sits on: one device of the run, or a Linux md array over several
//! ([`BlockTarget`]). Both take a read or write at a byte offset and a cache flush, and
//! return when it completes and how many device requests it took (each costs the CPU of
//! issuing it and its interrupt).

use super::device::{Device, Op};
use super::md_raid10::Raid10;
use crate::config::VariantConfig;
use crate::error::{Error, Result};
use crate::sim::time::Nanos;

/// The block device under a filesystem.
#[derive(Debug, Clone)]
pub enum BlockTarget {
    /// A device of the run, by index.
    Device(usize),
    /// A Linux md RAID10 array over devices of the run.
    Raid10(Box<Raid10>),
}

impl BlockTarget {
    /// The target named `name` in `cfg` (a device or an array); errors name `field`.
    pub fn build(cfg: &VariantConfig, name: &str, field: &str) -> Result<BlockTarget> {
        if let Some(i) = cfg.devices.iter().position(|d| d.name == name) {
            return Ok(BlockTarget::Device(i));
        }
        let Some((k, a)) = cfg.arrays.iter().enumerate().find(|(_, a)| a.name == name) else {
            return Err(Error::config(field, format!("names unknown device '{name}'")));
        };
        let at = |f: &str| format!("arrays[{k}] ({}).{f}", a.name);
        let mut members = Vec::with_capacity(a.members.len());
        let mut size = u64::MAX;
        for m in &a.members {
            let Some(i) = cfg.devices.iter().position(|d| &d.name == m) else {
                return Err(Error::config(at("members"), format!("names unknown device '{m}'")));
            };
            let Some(c) = cfg.devices[i].capacity_bytes else {
                return Err(Error::config(
                    format!("devices[{i}] ({m}).capacity_bytes"),
                    format!(
                        "a member of array '{}' needs its size (the array's size follows from it)",
                        a.name
                    ),
                ));
            };
            members.push(i);
            size = size.min(c);
        }
        Ok(BlockTarget::Raid10(Box::new(Raid10::new(a, members, size, at)?)))
    }

    /// The device index of a plain device target.
    pub fn device(&self) -> Option<usize> {
        match self {
            BlockTarget::Device(i) => Some(*i),
            BlockTarget::Raid10(_) => None,
        }
    }

    /// The target's size, bytes, when known.
    pub fn capacity(&self, cfg: &VariantConfig) -> Option<u64> {
        match self {
            BlockTarget::Device(i) => cfg.devices[*i].capacity_bytes,
            BlockTarget::Raid10(r) => Some(r.geometry().array_bytes()),
        }
    }

    /// The target's name in messages.
    pub fn name<'a>(&'a self, cfg: &'a VariantConfig) -> &'a str {
        match self {
            BlockTarget::Device(i) => &cfg.devices[*i].name,
            BlockTarget::Raid10(r) => r.name(),
        }
    }

    /// A read or write of `bytes` at byte `offset` at `now` (calls in nondecreasing
    /// `now`); returns its completion and the device requests it took.
    pub fn submit(
        &mut self,
        devices: &mut [Device],
        now: Nanos,
        op: Op,
        offset: u64,
        bytes: u32,
    ) -> (Nanos, u32) {
        match self {
            BlockTarget::Device(i) => (devices[*i].submit_at(now, op, offset, bytes), 1),
            BlockTarget::Raid10(r) => r.submit(devices, now, op, offset, bytes, false),
        }
    }

    /// A cache flush at `now`; returns its completion and the device requests it took.
    pub fn flush(&mut self, devices: &mut [Device], now: Nanos) -> (Nanos, u32) {
        match self {
            BlockTarget::Device(i) => (devices[*i].flush(now), 1),
            BlockTarget::Raid10(r) => r.flush(devices, now),
        }
    }
}
