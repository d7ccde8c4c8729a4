//! Warm-start: variants that begin with the same phases run them once.
//!
//! Mechanism. Experiment 2's update-index what-ifs all begin with the same two-hour
//! oltp_read_only warm-up from a freshly started server; they differ only in what runs
//! after it (the test, logbias, a device's latency). [`share_plan`] decides, from two
//! resolved configs alone, how many leading phases a follower can take from a leader's
//! run; the leader then runs, and at the end of those phases the process forks (a
//! copy-on-write snapshot of the whole simulation: caches, buffer pool, pool layout,
//! clocks, random streams). The child takes the follower's config, rebuilds the devices
//! whose settings differ (each checked to have served no I/O yet, so nothing before the
//! fork depended on them), runs the follower's remaining phases without a progress
//! observer, writes its result document to a file the parent made, and exits; the
//! parent goes on with the leader. At most `jobs` processes run at once (a job server of
//! tokens in a pipe, as make's: see [`Forks`]).
//!
//! Soundness. The result must be the one a cold run of the follower gives, byte for
//! byte; every shared pair of the bundled scenarios is checked that way by tests. The
//! plan is a whitelist: the configs must be equal except for
//! 1. the variant's name;
//! 2. the phases after the shared ones (the shared ones are compared resolved: a
//!    workload phase without its own test runs the workload's);
//! 3. the run's warm-up and duration (the phases carry them);
//! 4. the sysbench test, when the two variants' tests (their workloads' and their
//!    phases') agree on whether any writes (which decides the database's write path and
//!    its threads) and whether any counts transactions (the series' columns);
//! 5. a device's service times and limits (`SERVICE_FIELDS`), for a device reached
//!    directly (no RAID controller, md array or host cache in front), which must have
//!    served no I/O when the fork comes (checked then: otherwise the follower runs cold);
//! 6. ZFS's logbias, which decides only how a sync write is logged (`ZilParams::
//!    log_state`): the logs must have logged nothing when the fork comes (checked then),
//!    and the child sets it as `zfs set logbias` would.
//!
//! Anything else differing (a dataset property, the ARC's size, a device added) makes the
//! follower run cold; [`share_plan`] says why.
//!
//! Simplifications:
//! 1. Linux only (fork, prctl): elsewhere every variant runs cold.
//! 2. A follower whose changed device or log turns out to have been used before the
//!    fork is not forked: the caller runs it from its start, after the leader.
//! 3. fio phases are never shared (their files are laid out from all of a run's phases
//!    when the stack is built).
//! 4. Settings copied into several layers' structures when the stack is built are not
//!    changed in a child, even where nothing used them before the fork: e.g.
//!    innodb_doublewrite (the page cleaner's batches, the doublewrite buffer's plan) or
//!    a log device added (the pool's classes); such followers run cold.

use serde_json::Value;

use crate::config::{FsConfig, Logbias, PhaseConfig, VariantConfig, WorkloadConfig};
use crate::error::{Error, Result};
use crate::fs::zfs::zil::ZilParams;

/// The device settings a follower may change: read only by the device itself when it
/// serves I/O (`Device::build`).
const SERVICE_FIELDS: [&str; 7] = [
    "read_latency_ns",
    "write_latency_ns",
    "latency_sigma",
    "transfer_bytes_per_sec",
    "iops_limit",
    "throughput_limit_bytes_per_sec",
    "iops_size_bytes",
];

/// How a follower takes its first phases from a leader's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharePlan {
    /// Number of leading phases the follower takes from the leader (at least 1, fewer
    /// than the follower has).
    pub phases: usize,
    /// Devices (indices into `devices`) the follower rebuilds with its own settings.
    pub devices: Vec<usize>,
    /// ZFS: the follower's logbias, where it differs.
    pub logbias: Option<Logbias>,
}

/// Whether `other` can take its first phases from a run of `leader`, and how (see the
/// module); Err says why not.
pub fn share_plan(leader: &VariantConfig, other: &VariantConfig) -> std::result::Result<SharePlan, String> {
    if !cfg!(target_os = "linux") {
        return Err("sharing phases needs fork() (Linux)".into());
    }
    let (pa, pb) = (resolved_phases(leader), resolved_phases(other));
    if pa.iter().chain(&pb).any(|p| p.get("type").and_then(Value::as_str) == Some("fio")) {
        return Err("fio phases are not shared (their files are laid out from every phase)".into());
    }
    let prefix = pa.iter().zip(&pb).take_while(|(a, b)| a == b).count();
    let phases = prefix.min(pb.len().saturating_sub(1));
    if phases == 0 {
        return Err(if pb.len() < 2 {
            "it has a single phase: nothing runs after a shared one".into()
        } else {
            "its first phase differs".into()
        });
    }
    let (mut a, mut b) = (comparable(leader), comparable(other));
    let mut logbias = None;
    if let (FsConfig::Zfs(x), FsConfig::Zfs(y)) = (&leader.filesystem, &other.filesystem) {
        if x.logbias != y.logbias {
            ZilParams::resolve(y).map_err(|e| format!("its logbias: {e}"))?;
            logbias = Some(y.logbias);
            for v in [&mut a, &mut b] {
                if let Some(fs) = v.get_mut("filesystem").and_then(Value::as_object_mut) {
                    fs.remove("logbias");
                }
            }
        }
    }
    let mut devices = Vec::new();
    if let (Some(da), Some(db)) = (a.get_mut("devices"), b.get_mut("devices")) {
        if let (Some(da), Some(db)) = (da.as_array_mut(), db.as_array_mut()) {
            if da.len() == db.len() {
                for (i, (x, y)) in da.iter_mut().zip(db.iter_mut()).enumerate() {
                    if x == y {
                        continue;
                    }
                    let name = x.get("name").and_then(Value::as_str).unwrap_or("?").to_string();
                    if y.get("name").and_then(Value::as_str) != Some(name.as_str()) {
                        return Err(format!("devices[{i}] differs ({name})"));
                    }
                    let (Some(xo), Some(yo)) = (x.as_object_mut(), y.as_object_mut()) else {
                        return Err(format!("devices[{i}] differs ({name})"));
                    };
                    for f in SERVICE_FIELDS {
                        xo.remove(f);
                        yo.remove(f);
                    }
                    if xo != yo {
                        let f = xo
                            .keys()
                            .chain(yo.keys())
                            .find(|k| xo.get(*k) != yo.get(*k))
                            .cloned()
                            .unwrap_or_default();
                        return Err(format!(
                            "device {name}'s {f} differs (only its service times and limits may)"
                        ));
                    }
                    if other.devices[i].host_cache {
                        return Err(format!("device {name} differs and has a host cache in front of it"));
                    }
                    if other.controllers.iter().any(|c| c.volumes.contains(&name)) {
                        return Err(format!("device {name} differs and is a RAID controller's volume"));
                    }
                    if other.arrays.iter().any(|r| r.members.contains(&name)) {
                        return Err(format!("device {name} differs and is an md array's member"));
                    }
                    devices.push(i);
                }
            }
        }
    }
    if a != b {
        return Err(format!("{} differs", first_difference(&a, &b, String::new()).unwrap_or_default()));
    }
    Ok(SharePlan { phases, devices, logbias })
}

/// The config's phases as they run: a workload phase without its own test names the
/// workload's.
fn resolved_phases(cfg: &VariantConfig) -> Vec<Value> {
    cfg.effective_phases()
        .into_iter()
        .map(|mut p| {
            if let (PhaseConfig::Workload(w), WorkloadConfig::Sysbench(base)) = (&mut p, &cfg.workload) {
                w.test = Some(w.test.unwrap_or(base.test));
            }
            serde_json::to_value(&p).unwrap_or(Value::Null)
        })
        .collect()
}

/// The config without what a follower may change beside its devices (the module's list).
fn comparable(cfg: &VariantConfig) -> Value {
    let mut v = serde_json::to_value(cfg).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("variant");
        o.remove("phases");
        if let Some(run) = o.get_mut("run").and_then(Value::as_object_mut) {
            run.remove("warmup_ns");
            run.remove("duration_ns");
        }
        if let (Some(w), WorkloadConfig::Sysbench(_)) =
            (o.get_mut("workload").and_then(Value::as_object_mut), &cfg.workload)
        {
            w.remove("test");
            w.insert("writes (a test of any phase)".into(), Value::Bool(cfg.sysbench_writes()));
            w.insert("transactions (a test of any phase)".into(), Value::Bool(cfg.sysbench_transactions()));
        }
    }
    v
}

/// The dotted path of the first place `a` and `b` differ.
fn first_difference(a: &Value, b: &Value, at: String) -> Option<String> {
    let join = |k: &str| if at.is_empty() { k.to_string() } else { format!("{at}.{k}") };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.keys().chain(y.keys()).find(|k| x.get(*k) != y.get(*k)).map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, join(k)).unwrap_or_else(|| join(k)),
                _ => join(k),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().find(|(_, (p, q))| p != q).map(|(i, (p, q))| {
                first_difference(p, q, format!("{at}[{i}]")).unwrap_or_else(|| format!("{at}[{i}]"))
            })
        }
        _ if a != b => Some(at),
        _ => None,
    }
}

/// A follower's outcome.
#[derive(Debug)]
pub enum Shared {
    /// Its result document (as [`super::run_variant_json`] gives it), from a forked run.
    Forked(String),
    /// It could not take the leader's phases when the fork came; it must run cold (why).
    Cold(String),
    /// Its forked run failed.
    Failed(Error),
}

/// A follower waiting for its fork.
pub(super) struct Pending<'a> {
    pub(super) index: usize,
    pub(super) cfg: &'a VariantConfig,
    pub(super) plan: SharePlan,
}

/// The forks of one leader's run: followers waiting, children forked, outcomes.
///
/// Every follower is forked when its phases end; a child then waits for a token from a
/// pipe before it runs (a job server, as make's: `jobs - 1` tokens to begin with, one
/// given back by each child as it ends and one by the parent when its own run ends), so
/// at most `jobs` processes run at once and the leader never waits for a follower. A
/// child waiting for its token has written nothing: it shares the fork's memory with
/// the others forked at that point.
pub(super) struct Forks<'a> {
    pending: Vec<Pending<'a>>,
    #[cfg(target_os = "linux")]
    running: Vec<fork::Child>,
    #[cfg(target_os = "linux")]
    tokens: Option<fork::Tokens>,
    jobs: usize,
    outcomes: Vec<(usize, Shared)>,
}

impl<'a> Forks<'a> {
    pub(super) fn new(pending: Vec<Pending<'a>>, jobs: usize) -> Self {
        Forks {
            pending,
            #[cfg(target_os = "linux")]
            running: Vec::new(),
            #[cfg(target_os = "linux")]
            tokens: None,
            jobs: jobs.clamp(1, 64),
            outcomes: Vec::new(),
        }
    }

    /// No followers.
    pub(super) fn none() -> Self {
        Forks::new(Vec::new(), 1)
    }

    /// Whether a follower still waits for phase `done` (the number of phases run) or later.
    pub(super) fn waiting(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The leader has run `done` phases: forks the followers due. In the parent it
    /// answers None; in a child, the follower's config and its plan (the child then
    /// retargets and runs on).
    pub(super) fn fork_due(
        &mut self,
        done: usize,
        refusal: impl Fn(&VariantConfig, &SharePlan) -> Option<String>,
    ) -> Option<(&'a VariantConfig, SharePlan)> {
        let mut k = 0;
        while k < self.pending.len() {
            if self.pending[k].plan.phases != done {
                k += 1;
                continue;
            }
            let p = self.pending.remove(k);
            if let Some(why) = refusal(p.cfg, &p.plan) {
                self.outcomes.push((p.index, Shared::Cold(why)));
                continue;
            }
            #[cfg(target_os = "linux")]
            {
                if self.tokens.is_none() {
                    // `jobs` counts this process: `jobs - 1` children may run beside it.
                    match fork::Tokens::new(self.jobs - 1) {
                        Ok(t) => self.tokens = Some(t),
                        Err(e) => {
                            self.outcomes.push((p.index, Shared::Cold(no_fork(e))));
                            continue;
                        }
                    }
                }
                let Some(tokens) = self.tokens.as_ref() else { continue };
                match fork::spawn(p.index, tokens) {
                    // No fork (the process limit, memory): the follower runs from its start.
                    Err(e) => self.outcomes.push((p.index, Shared::Cold(no_fork(e)))),
                    Ok(fork::Spawned::Parent(c)) => self.running.push(c),
                    Ok(fork::Spawned::Child) => {
                        // The parent's other children and followers are not this one's.
                        std::mem::forget(std::mem::take(&mut self.running));
                        self.pending.clear();
                        return Some((p.cfg, p.plan));
                    }
                }
            }
            #[cfg(not(target_os = "linux"))]
            self.outcomes.push((p.index, Shared::Cold("sharing phases needs fork() (Linux)".into())));
        }
        None
    }

    /// Waits for every child; the followers never forked run cold.
    pub(super) fn finish(mut self) -> Vec<(usize, Shared)> {
        #[cfg(target_os = "linux")]
        if let Some(t) = &self.tokens {
            // This process's run is over: its place goes to a waiting child.
            t.give();
            for c in std::mem::take(&mut self.running) {
                let index = c.index;
                self.outcomes.push((index, c.wait(t)));
            }
        }
        for p in std::mem::take(&mut self.pending) {
            self.outcomes.push((p.index, Shared::Cold("the leader's run ended before the fork".into())));
        }
        std::mem::take(&mut self.outcomes)
    }
}

/// Why a follower could not be forked, as its reason to run from its start.
#[cfg(target_os = "linux")]
fn no_fork(e: Error) -> String {
    match e {
        Error::Simulation { message, .. } => format!("no fork ({message})"),
        other => format!("no fork ({other})"),
    }
}

/// Whether this process is a forked follower (its result goes to the parent's file).
pub(super) fn in_child() -> bool {
    #[cfg(target_os = "linux")]
    return fork::in_child();
    #[cfg(not(target_os = "linux"))]
    false
}

/// In a forked follower: hands `result` to the parent and ends the process.
pub(super) fn child_exit(result: &Result<String>) -> ! {
    #[cfg(target_os = "linux")]
    fork::exit_with(result);
    #[cfg(not(target_os = "linux"))]
    unreachable!("only a forked process is a child: {}", result.is_ok())
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // fork, _exit, waitpid, kill: each block says why it is sound.
mod fork {
    //! The process side: fork, the result file, waiting.

    use std::fs::File;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::sync::atomic::{AtomicI32, Ordering};

    use serde_json::json;

    use super::Shared;
    use crate::error::{Error, Result};

    /// The result file's descriptor in a forked follower (-1 elsewhere).
    static CHILD_OUT: AtomicI32 = AtomicI32::new(-1);
    /// The job server's write end in a forked follower (its token goes back there).
    static CHILD_TOKENS: AtomicI32 = AtomicI32::new(-1);

    /// The job server: a pipe holding one byte per process that may start.
    pub(super) struct Tokens {
        read: File,
        write: File,
    }

    impl Tokens {
        pub(super) fn new(n: usize) -> Result<Tokens> {
            let mut fds = [0; 2];
            // SAFETY: pipe() fills the two descriptors, owned by the Files from here.
            let (read, write) = unsafe {
                if libc::pipe(fds.as_mut_ptr()) != 0 {
                    return Err(failed(format!("pipe failed: {}", std::io::Error::last_os_error())));
                }
                (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1]))
            };
            let t = Tokens { read, write };
            for _ in 0..n {
                t.give();
            }
            Ok(t)
        }

        /// One more process may run (a pipe holds far more than 64 bytes: never blocks).
        pub(super) fn give(&self) {
            give_to(self.write.as_raw_fd());
        }

        /// Waits for a token.
        fn take(&self) {
            let mut b = [0u8; 1];
            loop {
                match (&self.read).read(&mut b) {
                    Ok(1) => return,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // The parent is gone (its end closed): PR_SET_PDEATHSIG ends this one.
                    _ => {
                        // SAFETY: ends this forked process.
                        unsafe { libc::_exit(3) }
                    }
                }
            }
        }
    }

    fn give_to(fd: i32) {
        let b = [1u8];
        loop {
            // SAFETY: writes one byte from a live buffer to the pipe's write end.
            let r = unsafe { libc::write(fd, b.as_ptr().cast(), 1) };
            if r == 1 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return;
            }
        }
    }

    pub(super) fn in_child() -> bool {
        CHILD_OUT.load(Ordering::Relaxed) >= 0
    }

    /// A forked follower the parent waits for.
    pub(super) struct Child {
        pub(super) index: usize,
        pid: libc::pid_t,
        out: File,
        reaped: bool,
    }

    pub(super) enum Spawned {
        Parent(Child),
        Child,
    }

    fn failed(message: String) -> Error {
        Error::Simulation { component: "run.share".into(), time_ns: 0, message }
    }

    /// A file only this process and its child see (unlinked at once).
    fn result_file() -> Result<File> {
        let dir = std::env::temp_dir();
        for n in 0..1000u32 {
            let path = dir.join(format!("ztwin-share-{}-{n}", std::process::id()));
            match std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
                Ok(f) => {
                    let _ = std::fs::remove_file(&path);
                    return Ok(f);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(failed(format!("cannot create a file in {}: {e}", dir.display()))),
            }
        }
        Err(failed(format!("cannot create a file in {}", dir.display())))
    }

    pub(super) fn spawn(index: usize, tokens: &Tokens) -> Result<Spawned> {
        let out = result_file()?;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: fork() in a process that may have other threads (the Python
        // interpreter's): the child only runs this thread's simulation, which touches
        // its own memory and the allocator (glibc's fork handlers leave malloc usable),
        // writes one file and leaves with _exit, never returning to the caller's code.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(failed(format!("fork failed: {}", std::io::Error::last_os_error())));
        }
        if pid == 0 {
            // SAFETY: plain system calls on this process's own settings.
            unsafe {
                // Ctrl-C ends the child as it ends the parent's run; so does the parent's death.
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
            }
            CHILD_OUT.store(out.as_raw_fd(), Ordering::Relaxed);
            CHILD_TOKENS.store(tokens.write.as_raw_fd(), Ordering::Relaxed);
            std::mem::forget(out);
            tokens.take();
            return Ok(Spawned::Child);
        }
        Ok(Spawned::Parent(Child { index, pid, out, reaped: false }))
    }

    /// The result document or the error, as the parent reads it.
    pub(super) fn exit_with(result: &Result<String>) -> ! {
        let fd = CHILD_OUT.load(Ordering::Relaxed);
        // SAFETY: the descriptor was the parent's result file, kept open by `spawn`.
        let mut out = unsafe { File::from_raw_fd(fd) };
        let text = match result {
            Ok(doc) => format!("O{doc}"),
            Err(e) => format!("E{}", error_json(e)),
        };
        let ok = out.write_all(text.as_bytes()).and_then(|()| out.flush()).is_ok();
        // This child's place goes to the next one waiting.
        give_to(CHILD_TOKENS.load(Ordering::Relaxed));
        // SAFETY: ends this forked process without running the parent's exit handlers.
        unsafe { libc::_exit(if ok { 0 } else { 2 }) }
    }

    fn error_json(e: &Error) -> String {
        match e {
            Error::Config { field, message } => json!({"config": [field, message]}),
            Error::Simulation { component, time_ns, message } => {
                json!({"simulation": [component, time_ns, message]})
            }
            Error::Stopped { time_ns } => json!({"stopped": time_ns}),
        }
        .to_string()
    }

    fn error_from(v: &serde_json::Value) -> Error {
        let s = |x: &serde_json::Value| x.as_str().unwrap_or_default().to_string();
        if let Some(c) = v.get("config") {
            Error::Config { field: s(&c[0]), message: s(&c[1]) }
        } else if let Some(c) = v.get("simulation") {
            Error::Simulation { component: s(&c[0]), time_ns: c[1].as_u64().unwrap_or(0), message: s(&c[2]) }
        } else {
            Error::Stopped { time_ns: v["stopped"].as_u64().unwrap_or(0) }
        }
    }

    impl Child {
        /// Waits for the child to end; its token is given back for it if it died first.
        pub(super) fn wait(mut self, tokens: &Tokens) -> Shared {
            let mut status = 0;
            loop {
                // SAFETY: waits for this process's own child.
                let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
                if r == self.pid {
                    break;
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    self.reaped = true;
                    return Shared::Failed(failed(format!("waiting for the forked run: {e}")));
                }
            }
            self.reaped = true;
            if libc::WIFSIGNALED(status) {
                tokens.give();
            }
            if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
                let how = if libc::WIFSIGNALED(status) {
                    format!("was killed by signal {}", libc::WTERMSIG(status))
                } else {
                    format!("exited with status {}", libc::WEXITSTATUS(status))
                };
                return Shared::Failed(failed(format!("the forked run {how}")));
            }
            let mut text = String::new();
            if let Err(e) = self.out.seek(SeekFrom::Start(0)).and_then(|_| self.out.read_to_string(&mut text))
            {
                return Shared::Failed(failed(format!("reading the forked run's result: {e}")));
            }
            match text.split_at_checked(1) {
                Some(("O", doc)) => Shared::Forked(doc.to_string()),
                Some(("E", e)) => match serde_json::from_str(e) {
                    Ok(v) => Shared::Failed(error_from(&v)),
                    Err(e) => Shared::Failed(failed(format!("the forked run's error: {e}"))),
                },
                _ => Shared::Failed(failed("the forked run left no result".into())),
            }
        }
    }

    impl Drop for Child {
        /// A child not waited for (the leader's run failed or was stopped) is ended.
        fn drop(&mut self) {
            if !self.reaped {
                // SAFETY: signals and reaps this process's own child.
                unsafe {
                    libc::kill(self.pid, libc::SIGKILL);
                    libc::waitpid(self.pid, std::ptr::null_mut(), 0);
                }
            }
        }
    }
}

impl<'a> super::Sim<'a> {
    /// Why `cfg` cannot take this run's state with `plan` now (None: it can): a device it
    /// changes has served I/O, or a log whose logbias it changes has logged.
    pub(super) fn share_refusal(&self, cfg: &VariantConfig, plan: &SharePlan) -> Option<String> {
        if let Some(&d) = plan.devices.iter().find(|&&d| {
            let c = self.devices[d].counters();
            c.reads + c.writes + c.flushes > 0
        }) {
            return Some(format!("device {} served I/O before the fork", cfg.devices[d].name));
        }
        if plan.logbias.is_some() {
            if let super::Fs::Zfs(z) = &self.fs {
                if z.zil_stats_by_dataset().iter().any(|s| *s != Default::default()) {
                    return Some("the intent log logged writes before the fork (logbias differs)".into());
                }
            }
        }
        None
    }

    /// In a forked follower: the follower's config from here, its changed devices built
    /// anew and its logbias set (`share_refusal` found nothing that used them).
    pub(super) fn retarget(&mut self, cfg: &'a VariantConfig, plan: &SharePlan) {
        for &d in &plan.devices {
            self.devices[d].rebuild(&cfg.devices[d], super::build::device_seed(cfg.seed, d));
        }
        if let (Some(l), super::Fs::Zfs(z)) = (plan.logbias, &mut self.fs) {
            z.set_logbias(l);
        }
        self.cfg = cfg;
    }
}
