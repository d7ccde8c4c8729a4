//! Databases above the filesystem.
pub mod innodb;
