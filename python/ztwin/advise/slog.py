"""``ztwin advise slog``: are the sync writes bound by the ZIL, and does a log device (SLOG)
pay off? Two runs: the variant as it is, and with a log device (``devices.slog`` and
``filesystem.log = ["slog"]``): by default the ``nvme-local`` preset (an NVMe-class
device: 30 us writes, no volatile cache); ``latency`` names another device preset
(``ram-slog``, ...) or a write latency for the nvme-local device ("50us").

The answer: the speed-up in throughput (transactions per second for a sysbench test that
writes) with the log device, and whether it reaches ``gain`` (10%): then the sync writes
are bound by the ZIL's writes to the pool, and the share of the median transaction's time
they cost is ``1 - p50 with / p50 without``.

With ``latencies`` (``--latencies 10us,100us,1ms``), the log device is run at each write
latency (on the nvme-local preset) and the answer is the slowest that still reaches
``gain``: how fast a log device must be, the curve of throughput against its latency
beside it. Those runs differ only in the log device, which serves no I/O before the
measured phase when the phases before it only read (experiment 2's two-hour
oltp_read_only warm-up): they then run that warm-up once, forked after it
(:meth:`Runner.outcomes`; each result is its own run's, byte for byte). A warm-up that
writes runs in each.

Refused before any run: a variant that is not ZFS, one that has a log device already, a
dataset with ``sync=disabled`` (fsync returns at once: no ZIL write to speed up) and a
sysbench test that only reads; refused after the first run: a workload whose window shows
no ZIL commit (e.g. innodb_flush_log_at_trx_commit=0 or 2 with nothing else calling
fsync). ``logbias=throughput`` is not refused but said: every sync write is logged
indirect (its data written to the pool by dmu_sync before the commit returns, whatever
log device there is) and only the log blocks, with the block pointers, go to the log
device (``zio_alloc_zil`` tries the log class first for every dataset; zfsprops(7) says
such a dataset does not use the log devices, the code allocates its log blocks there), so
the log device saves the log-block writes only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from .common import Advice, AdviseError, Runner, fmt
from .grid import READ_TESTS, metrics, phase_doc, prepare, throughput_metric


@dataclass
class SlogOptions:
    #: The log device: a device preset name or a write latency for the nvme-local preset (None: nvme-local).
    latency: Optional[str] = None
    #: A curve instead: the log device's write latencies to run (nvme-local), e.g. ["10us", "100us", "1ms"].
    latencies: Optional[list[str]] = None
    #: A log device is worth it from this relative gain in throughput.
    gain: float = 0.10
    phase: Optional[str] = None
    warmup: Optional[str] = None
    duration: Optional[str] = None


def fits(config: dict[str, Any]) -> bool:
    fs = config.get("filesystem") or {}
    return fs.get("type") == "zfs" and not fs.get("log")


def log_device(latency: Optional[str]) -> tuple[dict[str, Any], str]:
    """The ``devices.slog`` table for ``latency`` (see the module) and its label."""
    from ..presets import raw_device_presets
    from ..units import parse_duration

    presets = raw_device_presets()
    if latency is None:
        return {"preset": "nvme-local"}, "nvme-local"
    if latency in presets:
        return {"preset": latency}, latency
    try:
        ns = parse_duration(latency)
    except (ValueError, TypeError):
        raise AdviseError(f"--latency {latency!r}: a device preset ({', '.join(presets)}) or a write latency such as 50us") from None
    if ns <= 0:
        raise AdviseError(f"--latency {latency!r}: a positive write latency")
    return {"preset": "nvme-local", "write_latency": latency}, f"nvme-local, {latency} writes"


def refusal(cfg: dict[str, Any], test: Optional[str]) -> Optional[str]:
    """Why the slog question does not apply to a variant (None: it does)."""
    fs = cfg.get("filesystem") or {}
    if fs.get("type") != "zfs":
        return f"runs on {fs.get('type')}, not ZFS: a log device (SLOG) is a ZFS pool's"
    if fs.get("log"):
        return f"has a log device already ({', '.join(fs['log'])}); ask on a variant without one"
    if fs.get("sync") == "disabled":
        return "has sync=disabled: fsync and O_DSYNC writes return without the ZIL, so there are no sync writes for a log device to speed up"
    if (cfg.get("workload") or {}).get("type") == "sysbench" and test in READ_TESTS:
        return f"runs {test}, which only reads: no commit writes anything, so nothing waits on the ZIL"
    return None


def advise_slog(runner: Runner, opts: SlogOptions, note: Callable[[str], None]) -> Advice:
    cfg = runner.config
    notes: list[str] = []
    keys, phase, test = prepare(runner, opts.phase, opts.warmup, opts.duration, notes)
    why = refusal(cfg, test)
    if why:
        raise AdviseError(f"variant {runner.variant} of {runner.scenario.source} {why}")
    if opts.latencies is not None and opts.latency is not None:
        raise AdviseError("--latency and --latencies: one log device, or a curve of write latencies; not both")
    devices = [log_device(x) for x in opts.latencies] if opts.latencies is not None else [log_device(opts.latency)]
    if opts.latencies is not None:
        if not opts.latencies:
            raise AdviseError("--latencies: at least one write latency (e.g. 10us,100us,1ms)")
        for x, (dev, _) in zip(opts.latencies, devices):
            if "write_latency" not in dev:
                raise AdviseError(f"--latencies {x!r}: a write latency such as 50us (a device preset goes to --latency)")
    fs = cfg["filesystem"]
    metric = throughput_metric(test) if cfg["workload"].get("type") == "sysbench" else "qps"
    rows = []
    base = runner.outcome(dict(keys), "as it is (no log device)")
    if base.refused is not None:
        raise AdviseError(f"the variant as it is is refused: {base.refused}")
    b = {"log_device": "none"} | metrics(phase_doc(base, phase), base.config or cfg)
    rows.append(b)
    if not b.get("zil_commit_count"):
        raise AdviseError(
            f"variant {runner.variant}: no ZIL commit in the measured window (zil_commit_count 0): the workload issues no sync writes "
            "(e.g. innodb_flush_log_at_trx_commit=0 or 2 and no fsync), so a log device has nothing to speed up"
        )
    outs = runner.outcomes([(dict(keys) | {"devices.slog": dev, "filesystem.log": ["slog"]}, f"with a log device ({label})") for dev, label in devices])
    with_rows = []
    for (dev, label), out in zip(devices, outs):
        if out.refused is not None:
            raise AdviseError(f"the variant with the log device ({label}) is refused: {out.refused}")
        w = {"log_device": label} | metrics(phase_doc(out, phase), out.config or cfg)
        if "write_latency" in dev:
            w["slog_write_latency_us"] = _us(dev["write_latency"])
        w["speedup"] = w[metric] / b[metric] if b[metric] else None
        with_rows.append(w)
    rows.extend(with_rows)
    paying = [w for w in with_rows if w["speedup"] is not None and w["speedup"] >= 1 + opts.gain]
    if opts.latencies is not None:
        # The slowest log device that still pays off (the curve's answer).
        chosen = max(paying, key=lambda r: r.get("slog_write_latency_us") or 0) if paying else None
    else:
        chosen = paying[0] if paying else None
    w = chosen or max(with_rows, key=lambda r: r["speedup"] or 0)
    speedup, bound = w["speedup"], chosen is not None
    p50_share = (1 - w["latency_p50_ms"] / b["latency_p50_ms"]) if b.get("latency_p50_ms") else None
    for r in rows:
        r["chosen"] = r is (chosen or b)
    if fs.get("logbias") == "throughput":
        notes.append(
            "logbias=throughput: every sync write is logged indirect, its data written to the pool by dmu_sync before the commit returns, "
            "with or without a log device; only the log blocks (the block pointers) go to the log device (zio_alloc_zil tries the log class "
            "first for every dataset, whatever zfsprops(7) says), so the log device saves the log-block writes only"
        )
    criterion = f"a log device is recommended when it raises {metric} by at least {100 * opts.gain:g}% (then the sync writes are bound by the ZIL's writes to the pool)"
    if opts.latencies is not None:
        criterion += "; of the write latencies run, the slowest that does"
    explanation = _explain(b, w, metric, speedup, bound, p50_share, fs, w["log_device"])
    if opts.latencies is not None:
        explanation += " " + _curve(b, with_rows, metric, chosen)
    answer = {"log_device": w["log_device"] if bound else "none", "speedup": round(speedup, 3) if speedup is not None else None, "zil_bound": bound}
    if opts.latencies is not None:
        answer["max_write_latency"] = next((x for x, r in zip(opts.latencies, with_rows) if r is chosen), None)
    return Advice(
        question="slog", scenario=runner.scenario.name, source=runner.scenario.source, variant=runner.variant,
        answer=answer, points=rows, explanation=explanation, criterion=criterion, notes=notes,
        settings={"log_device": devices[0][0] if opts.latencies is None else [d for d, _ in devices], "metric": metric, "gain": opts.gain,
                  "phase": phase, "test": test, "zil_share_of_p50": round(p50_share, 3) if p50_share is not None else None},
        x="log_device" if opts.latencies is None else "slog_write_latency_us",
    )


def _us(latency: str) -> float:
    from ..units import parse_duration

    return parse_duration(latency) / 1e3


def _curve(b: dict[str, Any], rows: list[dict[str, Any]], metric: str, chosen: Optional[dict[str, Any]]) -> str:
    pts = ", ".join(f"{fmt(r['speedup'], '.2f')}x at {fmt(r.get('slog_write_latency_us'), ',.0f')} us" for r in sorted(rows, key=lambda r: r.get("slog_write_latency_us") or 0))
    s = f"Against the log device's write latency, {metric} relative to no log device: {pts}."
    if chosen is not None:
        s += f" A log device pays off up to a write latency of {fmt(chosen.get('slog_write_latency_us'), ',.0f')} us."
    else:
        s += " None of them pays off."
    return s


def _explain(b: dict[str, Any], w: dict[str, Any], metric: str, speedup: Optional[float], bound: bool, share: Optional[float], fs: dict[str, Any], label: str) -> str:
    unit = "transactions/s" if metric == "tps" else "queries/s"
    per = lambda r: (r.get("zil_itx_metaslab_normal_bytes", 0) + r.get("zil_itx_metaslab_slog_bytes", 0)) / r["zil_commit_count"] if r.get("zil_commit_count") else None  # noqa: E731
    s = (
        f"Without a log device: {fmt(b[metric])} {unit}, latency p50/p95/p99 {fmt(b['latency_p50_ms'], '.1f')}/{fmt(b['latency_p95_ms'], '.1f')}/{fmt(b['latency_p99_ms'], '.1f')} ms, "
        f"{fmt(b['zil_commit_count'], ',d')} ZIL commits writing {fmt((b.get('zil_itx_metaslab_normal_bytes') or 0) / 1e6, ',.1f')} MB of log blocks to the pool "
        f"({fmt(per(b), ',.0f')} bytes per commit) beside {fmt(b['write_iops'], ',.0f')} pool writes/s. "
        f"With {label}: {fmt(w[metric])} {unit} ({fmt(speedup, '.2f')}x), p50/p95/p99 {fmt(w['latency_p50_ms'], '.1f')}/{fmt(w['latency_p95_ms'], '.1f')}/{fmt(w['latency_p99_ms'], '.1f')} ms, "
        f"{fmt((w.get('zil_itx_metaslab_slog_bytes') or 0) / 1e6, ',.1f')} MB of log blocks on the log device, {fmt(w['write_iops'], ',.0f')} pool writes/s. "
    )
    if bound:
        s += (
            f"The sync writes are bound by the ZIL: each commit waits for its log block written (and flushed) on the pool's devices, "
            f"queued behind the pool's reads and txg writes; on the log device that wait shrinks"
        )
        if share is not None and share >= 0:
            s += f", and the median transaction is {fmt(100 * share, '.0f')}% faster."
        else:
            # A median already fast (a write-back cache absorbing the log writes) can
            # grow while the slow tail, which bounds the rate, shrinks.
            s += (
                f": the median transaction takes longer ({fmt(w['latency_p50_ms'], '.1f')} ms against {fmt(b['latency_p50_ms'], '.1f')}: "
                f"each commit now waits for the log device), the slow tail less (p99 {fmt(w['latency_p99_ms'], '.1f')} ms against "
                f"{fmt(b['latency_p99_ms'], '.1f')}), and the rate is set by the tail."
            )
    else:
        s += "The sync writes are not bound by the ZIL here: the log device changes the rate by less than the threshold, so the time goes elsewhere (reads, the CPU, the txg's writes)."
    if fs.get("logbias") == "throughput":
        s += f" logbias=throughput: {fmt(w.get('zil_itx_indirect_count'), ',d')} indirect log records (the data of each goes to the pool by dmu_sync at commit, log device or not); only the log blocks move to the log device."
    return s
