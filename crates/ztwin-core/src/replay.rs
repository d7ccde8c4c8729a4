//! Trace replay: requests of a trace through a cache policy; miss-ratio curves; SHARDS.
//!
//! # What
//!
//! [`replay`] reads a trace ([`crate::workload::trace`]) and answers, per policy and cache
//! size, hits, misses and the hit ratio, plus the final adaptive target for the ARCs:
//!
//! - `lru`: [`crate::cache::lru::Lru`]; all sizes of one call come from **one pass** of
//!   exact LRU stack distances (Mattson et al. 1970: a request hits an LRU cache of `s`
//!   entries iff fewer than `s` distinct ids were requested since its previous request),
//!   counted with a Fenwick tree over request positions (O(log n) per request).
//! - `arc`: the textbook ARC, [`crate::cache::arc_paper::ArcPaper`].
//! - `zfs-arc`: the twin's own OpenZFS ARC, [`crate::cache::arc::Arc`] (the same code the
//!   scenarios run, not a copy): every request reads one data block of `block_size` bytes
//!   (lsize = psize = block_size, demand, cacheable), with `zfs_arc_max` = the cache size
//!   in bytes and RAM = 4 x that size, so that c_max comes out at exactly the requested
//!   size. OpenZFS ignores a `zfs_arc_max` below 64 MiB (MIN_ARC_MAX), so smaller sizes
//!   are rejected with a message rather than silently changed. The clock is the trace's
//!   time where the format has one (made monotone), else `request_interval_ns` per
//!   request (default 1 ms): it matters for ARC_MINTIME (62 ms), the minimum age at which
//!   an MRU hit promotes a block to MFU. ARC headers (240 B in 2.2), ghosts included,
//!   count in the ARC's size as in OpenZFS, so fewer than size / block_size blocks fit.
//!
//! Policies other than `lru`, and `lru` at a few sizes, run each size as its own job;
//! jobs run in parallel, one thread per core, each streaming the trace itself. The first
//! job also counts the requests and the distinct ids as it reads them (in chunks of 64
//! consecutive ids, so a block trace's runs cost one lookup per chunk).
//!
//! # SHARDS
//!
//! With `shards = R` (0 < R < 1), only requests whose id hashes below R x 2^24 (of 2^24)
//! are simulated (Waldspurger et al., "Efficient MRC Construction with SHARDS", FAST
//! 2015; fixed-rate variant). LRU: sampled stack distances are scaled by 1/R. Other
//! policies: each size s is simulated at round(s x R) entries on the sampled requests
//! (the "miniature simulation" of Waldspurger et al., ATC 2017). Hit ratios are the
//! sampled ones; hits = ratio x requests; `unique` is the sampled count / R. The error is
//! measured against exact runs by the tests and in the README, not assumed.
//!
//! # Simplifications
//!
//! 1. Every request is one cache entry of unit size (`lru`, `arc`) or of `block_size`
//!    bytes (`zfs-arc`); request sizes in the trace are not used (libCacheSim's
//!    `ignore_obj_size`). `.lis` traces already split runs into 512-byte blocks.
//! 2. Writes are replayed as accesses like reads (no write path).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::cache::arc::{Arc, ArcLimits, ArcParams, ArcRead, BlockInfo, BlockKey, BufType, ReadFlags};
use crate::cache::arc_paper::ArcPaper;
use crate::cache::lru::{hash_id, Lru};
use crate::config::{ArcTunables, ZfsRelease};
use crate::error::{Error, Result};
use crate::workload::trace::{self, Format, Request};

/// A cache policy of trace replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Policy {
    /// Least recently used.
    #[serde(rename = "lru")]
    Lru,
    /// The textbook ARC (FAST 2003).
    #[serde(rename = "arc")]
    Arc,
    /// The OpenZFS ARC of the twin.
    #[serde(rename = "zfs-arc")]
    ZfsArc,
}

impl Policy {
    /// The policy's name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Lru => "lru",
            Policy::Arc => "arc",
            Policy::ZfsArc => "zfs-arc",
        }
    }
}

fn default_block_size() -> u32 {
    4096
}

/// What to replay (the JSON request of `ztwin._core.replay`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplaySpec {
    /// Trace file.
    pub trace: PathBuf,
    /// Format name (lis, csv, oracle, vscsi, blkparse, txt); None = detect.
    #[serde(default)]
    pub format: Option<String>,
    /// Policies to run.
    pub policies: Vec<Policy>,
    /// Cache sizes, entries (blocks).
    pub sizes: Vec<u64>,
    /// Bytes per entry (zfs-arc's block size; reported sizes in bytes).
    #[serde(default = "default_block_size")]
    pub block_size: u32,
    /// OpenZFS release for zfs-arc (default 2.2).
    #[serde(default)]
    pub release: Option<ZfsRelease>,
    /// SHARDS sampling rate (None = every request).
    #[serde(default)]
    pub shards: Option<f64>,
    /// Replay only the first N requests.
    #[serde(default)]
    pub max_requests: Option<u64>,
    /// Worker threads (None = available cores).
    #[serde(default)]
    pub threads: Option<usize>,
    /// zfs-arc clock step per request for traces without times, ns (default 1 ms).
    #[serde(default)]
    pub request_interval_ns: Option<u64>,
}

/// One policy at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyResult {
    /// Policy name.
    pub policy: String,
    /// Cache size, entries.
    pub size: u64,
    /// Cache size, bytes (size x block_size).
    pub size_bytes: u64,
    /// Hits (estimated from the sample under SHARDS).
    pub hits: u64,
    /// Misses.
    pub misses: u64,
    /// hits / requests.
    pub hit_ratio: f64,
    /// The final adaptive target: arc {"p": pages}; zfs-arc {"c", "p"} (0.8/2.1, bytes)
    /// or {"c", "pd", "pm", "meta"} (2.2, fractions); None for lru.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<serde_json::Value>,
}

/// The answer of [`replay`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayResult {
    /// Trace file as given.
    pub trace: String,
    /// Format read.
    pub format: String,
    /// Requests replayed.
    pub requests: u64,
    /// Distinct ids (estimated under SHARDS).
    pub unique: u64,
    /// Bytes per entry.
    pub block_size: u32,
    /// SHARDS rate, or None.
    pub shards: Option<f64>,
    /// Requests sampled under SHARDS (= requests without).
    pub sampled_requests: u64,
    /// One per policy and size, in the order asked.
    pub results: Vec<PolicyResult>,
    /// Wall time, s.
    pub wall_s: f64,
}

/// Requests read per batch.
const BATCH: usize = 4096;
/// SHARDS modulus.
const SHARDS_P: u64 = 1 << 24;

fn shards_threshold(rate: Option<f64>) -> Result<u64> {
    match rate {
        None => Ok(SHARDS_P),
        Some(r) if r > 0.0 && r <= 1.0 => Ok(((r * SHARDS_P as f64).round() as u64).max(1)),
        Some(r) => Err(Error::config("shards", format!("sampling rate must be in (0, 1], got {r}"))),
    }
}

#[inline]
fn sampled(id: u64, threshold: u64) -> bool {
    threshold >= SHARDS_P || (hash_id(id ^ 0x5bd1_e995) & (SHARDS_P - 1)) < threshold
}

/// Exact LRU stack distances of a request stream.
pub struct StackDistances {
    last: hashbrown::HashMap<u64, u32>,
    bit: Vec<u32>,
    t: u32,
    /// hist[d] = requests at stack distance d (1-based), for d <= max; it grows with the
    /// distances seen (at most the distinct ids), so a huge `max` costs nothing up front.
    hist: Vec<u64>,
    /// Requests at a distance over `max`.
    over: u64,
    /// First references (infinite distance).
    pub cold: u64,
    max: usize,
}

impl StackDistances {
    /// Counts distances up to `max` exactly (longer ones in one bucket).
    pub fn new(max: u64) -> Self {
        let max = max as usize;
        StackDistances {
            last: hashbrown::HashMap::new(),
            bit: vec![0; 1 << 16],
            t: 0,
            hist: vec![0; (max + 1).min(1 << 16)],
            over: 0,
            cold: 0,
            max,
        }
    }

    #[inline]
    fn add(&mut self, mut i: usize, v: u32) {
        let n = self.bit.len();
        while i <= n {
            self.bit[i - 1] = self.bit[i - 1].wrapping_add(v);
            i += i & i.wrapping_neg();
        }
    }

    #[inline]
    fn prefix(&self, mut i: usize) -> u32 {
        let mut s = 0u32;
        while i > 0 {
            s = s.wrapping_add(self.bit[i - 1]);
            i &= i - 1;
        }
        s
    }

    /// Doubles the tree: the new top node covers everything so far, the others nothing.
    fn grow(&mut self) {
        let n = self.bit.len();
        let total = self.prefix(n);
        self.bit.resize(2 * n, 0);
        self.bit[2 * n - 1] = total;
    }

    /// Requests one pass can take (its clock is 32 bits).
    pub const MAX_REQUESTS: u64 = u32::MAX as u64 - 1;

    /// One request; returns its stack distance (None on a first reference). At most
    /// [`StackDistances::MAX_REQUESTS`] requests (the caller stops before).
    #[inline]
    pub fn access(&mut self, id: u64) -> Option<u64> {
        debug_assert!(u64::from(self.t) < Self::MAX_REQUESTS);
        self.t += 1;
        let t = self.t as usize;
        if t > self.bit.len() {
            self.grow();
        }
        let d = match self.last.insert(id, self.t) {
            Some(tp) => {
                let tp = tp as usize;
                let d = self.prefix(t - 1) - self.prefix(tp) + 1;
                self.add(tp, u32::MAX); // -1
                let b = d as usize;
                if b > self.max {
                    self.over += 1;
                } else {
                    if b >= self.hist.len() {
                        self.hist.resize((2 * self.hist.len()).max(b + 1).min(self.max + 1), 0);
                    }
                    self.hist[b] += 1;
                }
                Some(d as u64)
            }
            None => {
                self.cold += 1;
                None
            }
        };
        self.add(t, 1);
        d
    }

    /// Distinct ids seen.
    pub fn unique(&self) -> u64 {
        self.last.len() as u64
    }

    /// Hits of an LRU cache of `size` entries over the requests seen.
    pub fn hits(&self, size: u64) -> u64 {
        let s = (size as usize).min(self.max).min(self.hist.len() - 1);
        self.hist[1..=s].iter().sum()
    }
}

/// A policy instance behind one interface.
enum Sim {
    Lru(Lru),
    Arc(ArcPaper),
    Zfs { arc: Box<Arc>, info: BlockInfo, interval: u64, has_time: bool, now: u64 },
}

/// The ARC parameters that make c_max come out at exactly `bytes`.
pub fn zfs_arc_params(bytes: u64, release: ZfsRelease) -> Result<ArcParams> {
    const MIN_ARC_MAX: u64 = 64 << 20;
    if bytes < MIN_ARC_MAX {
        return Err(Error::config(
            "size",
            format!(
                "zfs-arc: {bytes} bytes is below 64 MiB, the smallest zfs_arc_max OpenZFS accepts \
                 (MIN_ARC_MAX; a smaller value is ignored); give a larger --size or a larger --block-size"
            ),
        ));
    }
    let params = ArcParams {
        release,
        ram_bytes: bytes.saturating_mul(4),
        tunables: ArcTunables { zfs_arc_max: bytes, ..Default::default() },
    };
    let l = ArcLimits::from_params(&params);
    if l.c_max != bytes {
        return Err(Error::config(
            "size",
            format!("zfs-arc: c_max came out at {} bytes, not {bytes}", l.c_max),
        ));
    }
    Ok(params)
}

#[inline]
fn zfs_key(id: u64) -> BlockKey {
    let k = if id < (1 << 60) { id } else { hash_id(id) >> 4 };
    BlockKey::new((k >> BlockKey::BLKID_BITS) as u32, 0, k & ((1 << BlockKey::BLKID_BITS) - 1))
}

impl Sim {
    fn new(policy: Policy, size: u64, spec: &Spec) -> Result<Sim> {
        if size == 0 {
            return Err(Error::config("sizes", "a cache size must be at least 1 entry"));
        }
        Ok(match policy {
            Policy::Lru => {
                if size >= u32::MAX as u64 {
                    return Err(Error::config("sizes", format!("lru: {size} entries is above 2^32 - 2")));
                }
                Sim::Lru(Lru::new(size))
            }
            Policy::Arc => {
                if size >= 1 << 31 {
                    return Err(Error::config("sizes", format!("arc: {size} entries is above 2^31 - 1")));
                }
                Sim::Arc(ArcPaper::new(size))
            }
            Policy::ZfsArc => {
                // Live and ghost headers (at most twice the blocks) live in 32-bit slots.
                if size >= 1 << 31 {
                    return Err(Error::config("sizes", format!("zfs-arc: {size} blocks is above 2^31 - 1")));
                }
                let bytes = size.saturating_mul(spec.block_size as u64);
                let params = zfs_arc_params(bytes, spec.release)?;
                Sim::Zfs {
                    arc: Box::new(Arc::new(&params)),
                    info: BlockInfo { lsize: spec.block_size, psize: spec.block_size, kind: BufType::Data },
                    interval: spec.interval,
                    has_time: spec.has_time,
                    now: 0,
                }
            }
        })
    }

    #[inline]
    fn access(&mut self, r: &Request) -> bool {
        match self {
            Sim::Lru(c) => c.access(r.id),
            Sim::Arc(c) => c.access(r.id),
            Sim::Zfs { arc, info, interval, has_time, now } => {
                *now = if *has_time { (*now).max(r.time) } else { *now + *interval };
                matches!(arc.read(zfs_key(r.id), *info, ReadFlags::default(), *now), ArcRead::Hit)
            }
        }
    }

    fn target(&self) -> Option<serde_json::Value> {
        match self {
            Sim::Lru(_) => None,
            Sim::Arc(c) => Some(serde_json::json!({ "p": c.p() })),
            Sim::Zfs { arc, .. } => {
                let s = arc.stats();
                let f = |x: u64| x as f64 / (1u64 << 32) as f64;
                Some(if s.p == 0 && s.pd != 0 {
                    serde_json::json!({ "c": s.c, "pd": f(s.pd), "pm": f(s.pm), "meta": f(s.meta), "size": s.size })
                } else {
                    serde_json::json!({ "c": s.c, "p": s.p, "size": s.size })
                })
            }
        }
    }
}

/// Resolved replay options shared by the jobs.
struct Spec {
    path: PathBuf,
    format: Format,
    block_size: u32,
    release: ZfsRelease,
    threshold: u64,
    rate: f64,
    max_requests: u64,
    interval: u64,
    has_time: bool,
}

impl Spec {
    fn open(&self) -> Result<Box<dyn trace::TraceReader>> {
        Ok(trace::open(&self.path, Some(self.format))?.1)
    }
}

/// Hits, misses and requests of one policy at one size (sampled requests only under SHARDS).
pub struct SimOutcome {
    /// Requests read from the trace.
    pub requests: u64,
    /// Requests simulated.
    pub sampled: u64,
    /// Hits among them.
    pub hits: u64,
    /// Final target (see [`PolicyResult::target`]).
    pub target: Option<serde_json::Value>,
    /// Heap bytes of the policy's structures at the end, the entries cached, and the
    /// entries they index including ARC ghosts (lru, arc only).
    pub heap_bytes: Option<(u64, u64, u64)>,
    /// Wall time of the run, s (reading included).
    pub wall_s: f64,
    /// Distinct (sampled) ids, when the run counted them.
    pub unique: Option<u64>,
}

/// Distinct ids, kept as chunks of 64 consecutive ids with a bit per id (a hash map from
/// `id >> 6` to the chunk's bits, the chunk in use kept aside): ids that come in runs, as
/// a block trace's consecutive blocks do, cost one map lookup per chunk they enter, not
/// one per request. Memory grows with the distinct ids, not with the trace.
struct DistinctIds {
    chunks: hashbrown::HashMap<u64, u64>,
    /// The chunk in use (`id >> 6`; u64::MAX: none) and its bits.
    chunk: u64,
    bits: u64,
    count: u64,
}

impl DistinctIds {
    fn new() -> Self {
        DistinctIds { chunks: hashbrown::HashMap::new(), chunk: u64::MAX, bits: 0, count: 0 }
    }

    #[inline]
    fn add(&mut self, id: u64) {
        let c = id >> 6;
        if c != self.chunk {
            self.enter(c);
        }
        let b = 1u64 << (id & 63);
        if self.bits & b == 0 {
            self.bits |= b;
            self.count += 1;
        }
    }

    /// Puts the chunk in use back and takes chunk `c` (no id has `id >> 6` = u64::MAX).
    #[inline(never)]
    fn enter(&mut self, c: u64) {
        if self.chunk != u64::MAX {
            self.chunks.insert(self.chunk, self.bits);
        }
        self.chunk = c;
        self.bits = self.chunks.get(&c).copied().unwrap_or(0);
    }
}

/// Requests ahead of the one simulated whose LRU chain heads are prefetched.
const LRU_LOOKAHEAD: usize = 12;

/// Reads the trace's requests (up to `max_requests`) in batches, handing each to `f`;
/// returns the requests read.
fn read_batches(spec: &Spec, mut f: impl FnMut(&[Request])) -> Result<u64> {
    let mut r = spec.open()?;
    let mut n = 0u64;
    let mut batch = vec![Request::default(); BATCH];
    while n < spec.max_requests {
        let want = (spec.max_requests - n).min(BATCH as u64) as usize;
        let k = r.next_batch(&mut batch[..want])?;
        if k == 0 {
            break;
        }
        n += k as u64;
        f(&batch[..k]);
    }
    Ok(n)
}

/// One policy at one size; with `count`, the run also counts the distinct (sampled) ids
/// ([`SimOutcome::unique`]) as it reads them, so that no other pass reads the trace for
/// them. (Reading ahead on a second thread was slower on this 2-core machine: handing
/// the batches over cost more than the decoding it overlapped.)
fn run_one(spec: &Spec, policy: Policy, size: u64, count: bool) -> Result<SimOutcome> {
    let t0 = Instant::now();
    let scaled =
        if spec.threshold < SHARDS_P { ((size as f64 * spec.rate).round() as u64).max(1) } else { size };
    let mut sim = Sim::new(policy, scaled, spec)?;
    let (mut s, mut hits) = (0u64, 0u64);
    let all = spec.threshold >= SHARDS_P;
    let mut distinct = count.then(DistinctIds::new);
    let n = read_batches(spec, |batch| {
        match (&mut sim, all) {
            (Sim::Lru(c), true) => {
                for (k, q) in batch.iter().enumerate() {
                    // The chain head of a request a few ahead: its read overlaps these.
                    if let Some(ahead) = batch.get(k + LRU_LOOKAHEAD) {
                        c.prefetch(ahead.id);
                    }
                    hits += c.access(q.id) as u64;
                }
            }
            (Sim::Arc(c), true) => batch.iter().for_each(|q| hits += c.access(q.id) as u64),
            _ => {
                for q in batch {
                    if sampled(q.id, spec.threshold) {
                        s += 1;
                        hits += sim.access(q) as u64;
                    }
                }
            }
        }
        if let Some(d) = &mut distinct {
            for q in batch {
                if all || sampled(q.id, spec.threshold) {
                    d.add(q.id);
                }
            }
        }
    })?;
    if all {
        s = n;
    }
    let heap_bytes = match &sim {
        Sim::Lru(c) => Some((c.heap_bytes() as u64, c.len() as u64, c.len() as u64)),
        Sim::Arc(c) => {
            let [t1, b1, t2, b2] = c.sizes();
            Some((c.heap_bytes() as u64, (t1 + t2) as u64, (t1 + b1 + t2 + b2) as u64))
        }
        Sim::Zfs { .. } => None,
    };
    Ok(SimOutcome {
        requests: n,
        sampled: s,
        hits,
        target: sim.target(),
        heap_bytes,
        wall_s: t0.elapsed().as_secs_f64(),
        unique: distinct.map(|d| d.count),
    })
}

/// One policy at one size over a trace, on the calling thread, every request (no SHARDS).
/// The benchmark's entry point.
pub fn simulate(
    path: &Path,
    format: Option<Format>,
    policy: Policy,
    size: u64,
    block_size: u32,
) -> Result<SimOutcome> {
    let (fmt, _) = trace::open(path, format)?;
    let spec = Spec {
        path: path.to_path_buf(),
        format: fmt,
        block_size,
        release: ZfsRelease::V2_2,
        threshold: SHARDS_P,
        rate: 1.0,
        max_requests: u64::MAX,
        interval: 1_000_000,
        has_time: fmt.has_time(),
    };
    run_one(&spec, policy, size, false)
}

struct StackOutcome {
    requests: u64,
    sampled: u64,
    sd: Option<StackDistances>,
    unique: u64,
}

/// Reads the trace's requests (up to `max_requests`) and hands each sampled one to `f`;
/// returns the number of requests read.
fn for_each_sampled(spec: &Spec, mut f: impl FnMut(&Request) -> Result<()>) -> Result<u64> {
    let mut r = spec.open()?;
    let mut n = 0u64;
    let mut batch = vec![Request::default(); BATCH];
    while n < spec.max_requests {
        let want = (spec.max_requests - n).min(BATCH as u64) as usize;
        let k = r.next_batch(&mut batch[..want])?;
        if k == 0 {
            break;
        }
        n += k as u64;
        for q in &batch[..k] {
            if sampled(q.id, spec.threshold) {
                f(q)?;
            }
        }
    }
    Ok(n)
}

fn stack_pass(spec: &Spec, max_size: Option<u64>) -> Result<StackOutcome> {
    let mut s = 0u64;
    let mut sd = StackDistances::new(max_size.unwrap_or(0));
    let max_sampled = max_size.map(|m| ((m as f64 * spec.rate).ceil() as u64).max(1));
    if let Some(m) = max_sampled {
        sd = StackDistances::new(m);
    }
    let n = for_each_sampled(spec, |q| {
        if s == StackDistances::MAX_REQUESTS {
            return Err(Error::config(
                "trace",
                format!(
                    "more than {} requests for the LRU curve's stack-distance pass: \
                     replay fewer (--max-requests) or sample them (--shards)",
                    StackDistances::MAX_REQUESTS
                ),
            ));
        }
        s += 1;
        sd.access(q.id);
        Ok(())
    })?;
    let unique = sd.unique();
    Ok(StackOutcome { requests: n, sampled: s, sd: max_size.map(|_| sd), unique })
}

/// LRU at up to this many sizes is simulated directly, one job per size, as the other
/// policies are; more sizes (a curve) take the stack-distance pass, which answers every
/// size at once but costs several times one LRU simulation and memory per request.
const DIRECT_LRU_SIZES: usize = 4;
/// ... and up to this many entries each (a direct LRU allocates its capacity up front; the
/// stack-distance pass grows with what the trace touches).
const DIRECT_LRU_MAX_ENTRIES: u64 = 1 << 20;

/// Replays a trace as `spec` says.
pub fn replay(spec: &ReplaySpec) -> Result<ReplayResult> {
    let t0 = Instant::now();
    if spec.policies.is_empty() {
        return Err(Error::config("policies", "give at least one policy (lru, arc, zfs-arc)"));
    }
    if spec.sizes.is_empty() {
        return Err(Error::config("sizes", "give at least one cache size"));
    }
    if let Some(&z) = spec.sizes.iter().find(|&&s| s == 0) {
        return Err(Error::config("sizes", format!("cache size {z}: must be at least 1 entry")));
    }
    if !(512..=(16 << 20)).contains(&spec.block_size) {
        return Err(Error::config(
            "block_size",
            format!("{} bytes: must be 512 B .. 16 MiB", spec.block_size),
        ));
    }
    let threshold = shards_threshold(spec.shards)?;
    if spec.shards.is_some() && spec.policies.contains(&Policy::ZfsArc) {
        return Err(Error::config(
            "shards",
            "SHARDS scales the cache size down by the rate, which would take zfs-arc below sizes \
             OpenZFS accepts; run zfs-arc without sampling",
        ));
    }
    let format = match &spec.format {
        Some(f) => Format::parse(f)?,
        None => trace::open(&spec.trace, None)?.0,
    };
    let s = Spec {
        path: spec.trace.clone(),
        format,
        block_size: spec.block_size,
        release: spec.release.unwrap_or(ZfsRelease::V2_2),
        threshold,
        rate: threshold as f64 / SHARDS_P as f64,
        max_requests: spec.max_requests.unwrap_or(u64::MAX),
        interval: spec.request_interval_ns.unwrap_or(1_000_000),
        has_time: format.has_time(),
    };
    // Fail early on sizes a policy rejects.
    for &p in &spec.policies {
        if p == Policy::ZfsArc {
            for &z in &spec.sizes {
                zfs_arc_params(z.saturating_mul(s.block_size as u64), s.release)?;
            }
        }
    }
    let want_lru = spec.policies.contains(&Policy::Lru);
    let lru_curve = want_lru
        && (spec.sizes.len() > DIRECT_LRU_SIZES || spec.sizes.iter().any(|&z| z > DIRECT_LRU_MAX_ENTRIES));
    let max_size = spec.sizes.iter().copied().max().unwrap_or(1);
    // One job per (policy, size) (LRU too, at a few sizes); the first also counts the
    // requests and the distinct ids as it goes. An LRU curve takes the stack-distance pass
    // instead, as an extra job ahead of the others, which counts them.
    let jobs: Vec<(Policy, u64)> = spec
        .policies
        .iter()
        .filter(|&&p| p != Policy::Lru || !lru_curve)
        .flat_map(|&p| spec.sizes.iter().map(move |&z| (p, z)))
        .collect();
    let tasks = jobs.len() + usize::from(lru_curve);
    let next = AtomicUsize::new(0);
    let stack: Mutex<Option<Result<StackOutcome>>> = Mutex::new(None);
    let outs: Mutex<Vec<Option<Result<SimOutcome>>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let threads = spec
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
        .clamp(1, tasks.max(1));
    let work = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        if k >= tasks {
            break;
        }
        if lru_curve && k == 0 {
            let r = stack_pass(&s, Some(max_size));
            *stack.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        } else {
            let j = k - usize::from(lru_curve);
            let (p, z) = jobs[j];
            let r = run_one(&s, p, z, !lru_curve && j == 0);
            outs.lock().unwrap_or_else(|e| e.into_inner())[j] = Some(r);
        }
    };
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|sc| {
            for _ in 0..threads {
                sc.spawn(work);
            }
        });
    }
    // Every task ran: each index below `tasks` was taken once, and a task stores its result.
    let outs: Vec<SimOutcome> = outs
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Err(Error::config("replay", "a job did not run"))))
        .collect::<Result<_>>()?;
    let st = if lru_curve {
        stack
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or_else(|| Err(Error::config("replay", "the stack-distance pass did not run")))?
    } else {
        // The first job counted (jobs is not empty: policies and sizes are not).
        let first = outs.first().ok_or_else(|| Error::config("replay", "no job"))?;
        StackOutcome {
            requests: first.requests,
            sampled: first.sampled,
            sd: None,
            unique: first.unique.unwrap_or(0),
        }
    };
    let mut outs = outs;
    let requests = st.requests;
    let sampling = threshold < SHARDS_P;
    let scale = |hits_sampled: u64, sampled_n: u64| -> (u64, f64) {
        if !sampling {
            (hits_sampled, if requests == 0 { 0.0 } else { hits_sampled as f64 / requests as f64 })
        } else {
            let ratio = if sampled_n == 0 { 0.0 } else { hits_sampled as f64 / sampled_n as f64 };
            ((ratio * requests as f64).round() as u64, ratio)
        }
    };
    let mut results = Vec::new();
    let mut oi = 0;
    for &p in &spec.policies {
        for &z in &spec.sizes {
            let (hits_s, n_s, target) = if p == Policy::Lru && lru_curve {
                // Invariant: with an LRU curve the stack-distance pass ran with a size (Some).
                let sd = st.sd.as_ref().expect("lru pass");
                let zs = if sampling { ((z as f64 * s.rate).round() as u64).max(1) } else { z };
                (sd.hits(zs), st.sampled, None)
            } else {
                let o = &mut outs[oi];
                oi += 1;
                (o.hits, o.sampled, o.target.take())
            };
            let (hits, ratio) = scale(hits_s, n_s);
            results.push(PolicyResult {
                policy: p.name().to_string(),
                size: z,
                size_bytes: z * s.block_size as u64,
                hits,
                misses: requests - hits,
                hit_ratio: ratio,
                target,
            });
        }
    }
    let unique = if sampling { (st.unique as f64 / s.rate).round() as u64 } else { st.unique };
    Ok(ReplayResult {
        trace: spec.trace.display().to_string(),
        format: format.name().to_string(),
        requests,
        unique,
        block_size: spec.block_size,
        shards: spec.shards,
        sampled_requests: st.sampled,
        results,
        wall_s: t0.elapsed().as_secs_f64(),
    })
}

/// One policy at one size, JSON in ({"trace", "format"?, "policy", "size", "block_size"?}),
/// JSON out ({"requests", "hits", "wall_s", "heap_bytes", "entries" (cached), "indexed"
/// (with ghosts)}): the benchmark's
/// entry point (single thread, every request).
pub fn simulate_json(req_json: &str) -> Result<String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Req {
        trace: PathBuf,
        #[serde(default)]
        format: Option<String>,
        policy: Policy,
        size: u64,
        #[serde(default = "default_block_size")]
        block_size: u32,
    }
    let r: Req =
        serde_json::from_str(req_json).map_err(|e| Error::config("simulate", format!("bad request: {e}")))?;
    let fmt = r.format.as_deref().map(Format::parse).transpose()?;
    let o = simulate(&r.trace, fmt, r.policy, r.size, r.block_size)?;
    let (heap, entries, indexed) = o.heap_bytes.unwrap_or((0, 0, 0));
    Ok(serde_json::json!({
        "requests": o.requests, "hits": o.hits, "wall_s": o.wall_s,
        "heap_bytes": heap, "entries": entries, "indexed": indexed, "target": o.target,
    })
    .to_string())
}

/// JSON in, JSON out: the binding's entry point.
pub fn replay_json(spec_json: &str) -> Result<String> {
    let spec: ReplaySpec =
        serde_json::from_str(spec_json).map_err(|e| Error::config("replay", format!("bad request: {e}")))?;
    let r = replay(&spec)?;
    serde_json::to_string(&r).map_err(|e| Error::config("replay", e.to_string()))
}

/// Converts any trace to libCacheSim's oracleGeneral (next_access_vtime filled in).
/// Holds the requests in memory (24 bytes each) to compute next access times.
pub fn convert_to_oracle(
    src: &Path,
    format: Option<Format>,
    dst: &Path,
    max_requests: Option<u64>,
) -> Result<u64> {
    let (_, mut r) = trace::open(src, format)?;
    let mut v = Vec::new();
    let max = max_requests.unwrap_or(u64::MAX);
    while (v.len() as u64) < max {
        match r.next_request()? {
            Some(q) => v.push(q),
            None => break,
        }
    }
    let f = std::fs::File::create(dst)
        .map_err(|e| Error::config(dst.display().to_string(), format!("cannot create: {e}")))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    trace::oracle::write_oracle(&v, &mut w)
        .map_err(|e| Error::config(dst.display().to_string(), e.to_string()))?;
    Ok(v.len() as u64)
}

#[cfg(test)]
mod tests;
