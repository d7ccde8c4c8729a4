"""What ``ztwin run`` prints of a result: arcstat-style lines, the summary table of the
measured window, the phases, and fio's own report of each fio phase.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from rich.table import Table

from .. import units
from .common import _abbr, _num

def _pct(x: Optional[float]) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _gib(x: Optional[float]) -> str:
    return "-" if x is None else f"{x / 2**30:.2f}"


def arcstat_lines(doc: dict[str, Any], rows: str = "all", limit: Optional[int] = None) -> list[str]:
    """arcstat-style rows (0.8 default columns, without the prefetch ones) from a variant's series.

    ``rows="window"`` keeps the intervals of the measured window (the series' ``measured``
    column), ``"all"`` every interval from the start of the warm-up. With ``limit``, a
    longer list keeps its first and last ``limit // 2`` rows around a line saying how many
    were left out.

    Each row covers the report interval ending at ``time`` (simulated seconds). ``read`` =
    ARC accesses/s (hits + misses, and 2.2's iohits), ``miss`` misses/s, ``dmis`` demand data misses/s,
    ``mmis`` demand metadata misses/s; the % columns are shares of ``read`` (arcstat
    divides dmis by demand reads; the series has no demand-read column). ``arcsz`` and
    ``c`` are the ARC size and target at the end of the interval.
    """
    s = doc.get("series") or {}
    t = s.get("time_s") or []
    need = ("arc_hits", "arc_misses", "arc_demand_data_misses", "arc_demand_metadata_misses", "arc_size", "arc_c")
    if not t or any(k not in s for k in need):
        return []
    hdr = f"{'time':>8} {'read':>8} {'miss':>7} {'miss%':>5} {'dmis':>7} {'dm%':>5} {'mmis':>7} {'mm%':>5} {'arcsz':>7} {'c':>7}"
    out = [hdr]
    prev = 0.0
    measured = s.get("measured")
    for i, ts in enumerate(t):
        dt = (ts - prev) if ts > prev else 1.0
        prev = ts
        if rows == "window" and measured is not None and not measured[i]:
            continue
        hits, miss = s["arc_hits"][i], s["arc_misses"][i]
        dmis, mmis = s["arc_demand_data_misses"][i], s["arc_demand_metadata_misses"][i]
        read = hits + miss + (s["arc_iohits"][i] if "arc_iohits" in s else 0)
        share = (lambda n: f"{100 * n / read:5.0f}") if read else (lambda n: f"{'-':>5}")
        out.append(
            f"{ts:8.1f} {_abbr(read / dt):>8} {_abbr(miss / dt):>7} {share(miss)} {_abbr(dmis / dt):>7} {share(dmis)} "
            f"{_abbr(mmis / dt):>7} {share(mmis)} {_abbr(s['arc_size'][i], 1024):>7} {_abbr(s['arc_c'][i], 1024):>7}"
        )
    if limit is not None and len(out) - 1 > limit:
        half = max(1, limit // 2)
        left_out = len(out) - 1 - 2 * half
        out = out[: 1 + half] + [f"{'...':>8} ({left_out} intervals not shown; --arcstat all shows every one)"] + out[-half:]
    return out


def _fio_num(x: float) -> str:
    """fio's num2str style: 3 significant figures with k/M."""
    for suffix, div in (("M", 1e6), ("k", 1e3)):
        if x >= div * 0.9995 and suffix:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def fio_lines(phase: dict[str, Any]) -> list[str]:
    """One fio phase as fio prints a job (or a group with group_reporting): IOPS,
    bandwidth in MiB/s and MB/s with the bytes and runtime, clat percentiles; fio 3.x's
    fsync/fdatasync lines when the job synced."""
    out = []
    f = phase.get("fio") or {}
    if not phase.get("timing_modelled", True):
        w = (f.get("write") or {}).get("io_bytes", 0)
        tot = (phase.get("files") or {}).get("total") or {}
        ratio = f", compressratio {tot['compressratio']:.2f}x" if "compressratio" in tot else ""
        out.append(f"{phase['name']}: write pass of {units.human_size(w)} (timing not modelled: contents only{ratio})")
        return out
    for job in f.get("jobs", []):
        out.append(f"{job['name']}: (groupid=0, jobs={job['jobs']})")
        for d in ("read", "write"):
            st = job.get(d)
            if not st or not st.get("ios"):
                continue
            bw = st["bw_mbps"] * 1e6
            ms = job["runtime_s"] * 1000
            # fio's bandwidth: binary then decimal units, KiB/s below 10 MiB/s.
            bws = f"{bw / 2**20:.0f}MiB/s ({bw / 1e6:.0f}MB/s)" if bw >= 10 * 2**20 else f"{bw / 2**10:.0f}KiB/s ({bw / 1e3:.0f}kB/s)"
            out.append(f"  {d}: IOPS={_fio_num(st['iops'])}, BW={bws}({units.human_size(st['io_bytes'])}/{ms:.0f}msec)")
            c = st["clat_ms"]
            out.append(f"    clat percentiles (msec): 50.00th=[{c['p50']:.3g}], 95.00th=[{c['p95']:.3g}], 99.00th=[{c['p99']:.3g}]")
        sy = job.get("sync")
        if sy and sy.get("ios"):
            lat = sy["lat_ms"]
            out.append("  fsync/fdatasync/sync_file_range:")
            out.append(f"    sync (msec): max={lat['max']:.3g}, avg={lat['mean']:.3g}, ios={sy['ios']}")
            out.append(f"    sync percentiles (msec): 50.00th=[{lat['p50']:.3g}], 95.00th=[{lat['p95']:.3g}], 99.00th=[{lat['p99']:.3g}]")
    return out


def fio_runs_table(name: str, doc: dict[str, Any]) -> Optional[Table]:
    """The ARC run by run (fio phases): hit ratio, MRU/MFU hits, ghost hits, and MB/s."""
    rows = [p for p in doc.get("phases", []) if p.get("type") == "fio" and p.get("timing_modelled", True)]
    if not rows:
        return None
    t = Table(
        title=f"ARC per run, variant {name}: fio's read MB/s and IOPS; arcstats over each run (hit %: all"
        " accesses, indirect blocks included; data %: demand data only; hits of MRU, MFU, their ghosts, L2ARC)",
        title_justify="left",
    )
    # Short headers: the table must fit 80 columns (Rich's width when stdout is not a terminal).
    for col in ("run", "MB/s", "IOPS", "hit %", "data %", "MRU", "MFU", "MRU gh", "MFU gh", "L2"):
        t.add_column(col, justify="left" if col == "run" else "right", no_wrap=True)
    for p in rows:
        r = (p.get("fio") or {}).get("read") or {}
        a = p.get("arc") or {}
        h, m = a.get("hits"), a.get("misses")
        # arc_summary (2.2) counts iohits among the accesses, as neither hit nor miss.
        m = None if m is None else m + a.get("iohits", 0)
        hit = "-" if h is None or not (h + m) else f"{100 * h / (h + m):.1f}"
        dh, dm = a.get("demand_data_hits"), a.get("demand_data_misses")
        dhit = "-" if dh is None or not (dh + dm) else f"{100 * dh / (dh + dm):.1f}"
        l2 = (p.get("l2arc") or {}).get("l2_hits")
        t.add_row(
            p["name"], _num(r.get("bw_mbps"), ",.1f"), _num(r.get("iops"), ",.0f"), hit, dhit,
            _num(a.get("mru_hits")), _num(a.get("mfu_hits")), _num(a.get("mru_ghost_hits")), _num(a.get("mfu_ghost_hits")),
            _num(l2) if l2 is not None else "-",
        )
    return t


def phases_table(summary: dict[str, Any]) -> Optional[Table]:
    """One row per phase and variant, when a variant ran more than one phase."""
    variants = summary["variants"]
    if all(len(v.get("phases", [])) <= 1 for v in variants.values()):
        return None
    t = Table(title="Phases (simulated time; the summary above is the last workload phase's window)", title_justify="left")
    for col in ("variant", "phase", "type", "from (s)", "to (s)", "result"):
        t.add_column(col, justify="right" if col.endswith("(s)") else "left")
    for name, v in variants.items():
        for p in v.get("phases", []):
            if p["type"] == "workload":
                what = f"{_num(p['qps'], ',.1f')} queries/s over {_num(p['window_s'], 'g')} s"
            elif p["type"] == "fio" and not p.get("timing_modelled", True):
                what = "write pass: contents changed, timing not modelled"
            elif p["type"] == "fio":
                parts = []
                for d in ("read", "write"):
                    r = p["fio"].get(d) or {}
                    if r.get("ios"):
                        parts.append(f"{d} {_num(r.get('iops'), ',.0f')} IOPS, {_num(r.get('bw_mbps'), ',.1f')} MB/s")
                what = f"fio {'; '.join(parts) or 'no I/O'} over {_num(p['fio'].get('runtime_s'), '.1f')} s"
            elif p["type"] == "cat":
                what = f"{units.human_size(p['bytes_read'])} read at {_num(p['read_mbps'], ',.1f')} MB/s"
            elif p["type"] == "tune":
                what = "set " + ", ".join(f"{k} = {int(v) if isinstance(v, bool) else v}" for k, v in p.get("l2arc", {}).items())
            else:
                what = "caches emptied"
            t.add_row(name, p["name"], p["type"], f"{p['start_s']:.1f}", f"{p['end_s']:.1f}", what)
    return t


def summary_table(summary: dict[str, Any], configs: dict[str, dict[str, Any]]) -> tuple[str, Table]:
    """Its title line and the table: variants side by side; every row names its unit."""
    variants = summary["variants"]
    names = list(variants)
    windows = {v: variants[v].get("window_s") for v in names}
    warm = {v: configs.get(v, {}).get("run", {}).get("warmup_ns") for v in names}
    w = set(windows.values())
    title = "Summary of the measured window"
    if any("fio" in variants[n] for n in names):
        title = "Summary of the last measured fio run of each variant (simulated)"
    elif len(w) == 1:
        (ws,) = w
        wu = set(warm.values())
        title += f" ({_num(ws, 'g')} s of simulated time" + (f", after a {next(iter(wu)) / 1e9:g} s warm-up)" if len(wu) == 1 and None not in wu else ")")
    t = Table()
    t.add_column("metric (unit)", no_wrap=True)
    for n in names:
        t.add_column(n, justify="right")

    def row(label: str, fn: Callable[[dict[str, Any]], str]) -> None:
        t.add_row(label, *[fn(variants[n]) for n in names])

    def g(d: dict[str, Any], *path: str) -> Any:
        for p in path:
            if not isinstance(d, dict) or p not in d:
                return None
            d = d[p]
        return d

    fio = any("fio" in variants[n] for n in names)
    if fio:
        row("last fio run", lambda d: str(d.get("name", "-")))
        row("fio read IOPS", lambda d: _num(g(d, "fio", "read", "iops"), ",.0f"))
        row("fio read bandwidth (MB/s)", lambda d: _num(g(d, "fio", "read", "bw_mbps"), ",.1f"))
        for p in ("p50", "p95", "p99"):
            row(f"fio read clat {p} (ms)", lambda d, p=p: _num(g(d, "fio", "read", "clat_ms", p), ",.3f"))
        row("fio runtime (s)", lambda d: _num(g(d, "fio", "runtime_s"), ",.1f"))
    if len(w) > 1 and not fio:
        row("measured window (s)", lambda d: _num(d.get("window_s"), "g"))
    if len(set(warm.values())) > 1 and not fio:
        t.add_row("warm-up before the window (s)", *[_num((warm[n] or 0) / 1e9, "g") for n in names])
    if any("qps" in variants[n] for n in names):
        row("throughput (queries/s)", lambda d: _num(d.get("qps"), ",.1f"))
        row("transactions (tps)", lambda d: _num(d.get("tps"), ",.1f"))
        for p in ("p50", "p95", "p99", "max"):
            row(f"latency {p} (ms)", lambda d, p=p: _num(g(d, "latency_ms", p), ",.2f"))
        # Where a transaction's time goes (the core's `waits`): the mean, then the mean of
        # the slowest (from the 95th percentile's band up), each class that has any.
        labels = {
            "cpu": "CPU", "data_read": "own page reads", "page_in_flight": "pages other threads read",
            "free_frame": "free frames", "log_free": "redo log room",
            "commit_redo": "commit's redo log", "commit_binlog": "commit's binary log",
            "commit_queue": "commit's group queue", "row_lock": "row locks", "other": "other",
        }
        for k, label in labels.items():
            if any((g(variants[n], "waits", "mean_ms", k) or 0) > 0 for n in names):
                row(
                    f"time in {label} (ms: mean / slowest 5%)",
                    lambda d, k=k: "-" if g(d, "waits", "mean_ms", k) is None
                    else f"{g(d, 'waits', 'mean_ms', k):,.2f} / {g(d, 'waits', 'slowest', 'mean_ms', k):,.2f}",
                )
    # sysbench-tpcc: each transaction type's count in the window (tps counts all five).
    if any("tpcc" in variants[n] for n in names):
        for k in ("new_order", "payment", "order_status", "delivery", "stock_level", "new_order_rollback"):
            row(f"tpcc {k} (count)", lambda d, k=k: _num(g(d, "tpcc", k), ",.0f"))
        row("tpcc new orders per minute", lambda d: _num(g(d, "tpcc", "new_orders_per_min"), ",.1f"))
    row("CPU utilization (% of all vCPUs)", lambda d: _pct(d.get("cpu_utilization")))
    devs: list[str] = []
    for n in names:
        for dev in (variants[n].get("devices") or {}):
            if dev not in devs:
                devs.append(dev)
    # The database's writes (its write tests): request sizes, cache flushes, its counters.
    writes = any(g(variants[n], "innodb", "Innodb_buffer_pool_pages_flushed") is not None for n in names)

    def rate(*path: str) -> Callable[[dict[str, Any]], str]:
        def f(d: dict[str, Any]) -> str:
            x, ws = g(d, *path), d.get("window_s")
            return "-" if x is None or not ws else f"{x / ws:,.1f}"

        return f

    for dev in devs:
        row(f"{dev} reads (IOPS)", lambda d, dev=dev: _num(g(d, "devices", dev, "read_iops"), ",.0f"))
        row(f"{dev} reads (MB/s)", lambda d, dev=dev: _num(g(d, "devices", dev, "read_mbps"), ",.1f"))
        row(f"{dev} writes (IOPS)", lambda d, dev=dev: _num(g(d, "devices", dev, "write_iops"), ",.0f"))
        if writes:
            row(f"{dev} writes (MB/s)", lambda d, dev=dev: _num(g(d, "devices", dev, "write_mbps"), ",.1f"))
            row(f"{dev} read size (KiB per I/O)", lambda d, dev=dev: _num(g(d, "devices", dev, "read_kib_per_io"), ",.1f"))
            row(f"{dev} write size (KiB per I/O)", lambda d, dev=dev: _num(g(d, "devices", dev, "write_kib_per_io"), ",.1f"))
            row(f"{dev} cache flushes (/s)", lambda d, dev=dev: _num(g(d, "devices", dev, "flushes_per_sec"), ",.1f"))
        row(f"{dev} utilization (%)", lambda d, dev=dev: _pct(g(d, "devices", dev, "utilization")))
        if any(g(variants[n], "devices", dev, "burst") is not None for n in names):
            row(f"{dev} burst I/O credits left (%)", lambda d, dev=dev: _num(g(d, "devices", dev, "burst", "io_credits_pct"), ",.1f"))
            row(f"{dev} burst byte credits left (%)", lambda d, dev=dev: _num(g(d, "devices", dev, "burst", "byte_credits_pct"), ",.1f"))
            row(f"{dev} time in burst (s)", lambda d, dev=dev: _num(g(d, "devices", dev, "burst", "burst_s"), ",.1f"))
        if any(g(variants[n], "devices", dev, "drive") is not None for n in names):
            # The drive behind a RAID controller's volume: the controller's destaging.
            row(f"{dev} drive behind: writes (IOPS)", lambda d, dev=dev: _num(g(d, "devices", dev, "drive", "write_iops"), ",.0f"))
            row(f"{dev} drive behind: utilization (%)", lambda d, dev=dev: _pct(g(d, "devices", dev, "drive", "utilization")))
        if any(g(variants[n], "devices", dev, "host_cache") is not None for n in names):
            row(f"{dev} host cache read hits (IOPS)", lambda d, dev=dev: _num(g(d, "devices", dev, "host_cache", "read_hit_iops"), ",.0f"))
            row(f"{dev} host cache read hit ratio (%)", lambda d, dev=dev: _pct(g(d, "devices", dev, "host_cache", "read_hit_ratio")))
    ctrls: list[str] = []
    for n in names:
        for c in (variants[n].get("controllers") or {}):
            if c not in ctrls:
                ctrls.append(c)
    for c in ctrls:
        # The RAID controller's write-back cache: is it full, and what waits for it.
        row(f"controller {c} dirty at end (MiB)", lambda d, c=c: _num(g(d, "controllers", c, "dirty_mib"), ",.0f"))
        row(f"controller {c} writes waiting for room (%)", lambda d, c=c: _pct(g(d, "controllers", c, "write_wait_share")))
        row(f"controller {c} wait for room (ms, mean)", lambda d, c=c: _num(g(d, "controllers", c, "write_wait_ms_mean"), ",.2f"))
        row(f"controller {c} destaging (MB/s)", lambda d, c=c: _num(g(d, "controllers", c, "destage_mbps"), ",.1f"))
        row(f"controller {c} destage write size (KiB)", lambda d, c=c: _num(g(d, "controllers", c, "destage_kib_per_io"), ",.0f"))
    if any("innodb" in variants[n] for n in names):
        row("InnoDB buffer pool hit ratio (%)", lambda d: _pct(g(d, "innodb", "buffer_pool_hit_ratio")))
    if writes:
        row("InnoDB pages flushed (/s)", rate("innodb", "Innodb_buffer_pool_pages_flushed"))
        row("InnoDB doublewrite pages (/s)", rate("innodb", "Innodb_dblwr_pages_written"))
        row("InnoDB log writes (/s)", rate("innodb", "Innodb_log_writes"))
        row("InnoDB log fsyncs (/s)", lambda d: rate("innodb", "Innodb_os_log_fsyncs")(d) if g(d, "innodb", "Innodb_os_log_fsyncs") is not None else rate("innodb", "log_fdatasyncs")(d))
        row("InnoDB data fsyncs (/s)", rate("innodb", "Innodb_data_fsyncs"))
        row("InnoDB waits for a free frame (/s)", rate("innodb", "Innodb_buffer_pool_wait_free"))
        if any((g(variants[n], "innodb", "Innodb_row_lock_waits") or 0) > 0 for n in names):
            row("InnoDB row lock waits (/s)", rate("innodb", "Innodb_row_lock_waits"))
        row("InnoDB dirty pages at end", lambda d: _num(g(d, "innodb", "Innodb_buffer_pool_pages_dirty"), ",.0f"))
        row("InnoDB checkpoint age at end (MiB)", lambda d: "-" if g(d, "innodb", "checkpoint_age_bytes") is None else f"{g(d, 'innodb', 'checkpoint_age_bytes') / 2**20:,.1f}")
        if any("zil" in variants[n] for n in names):
            row("ZIL commits (/s)", rate("zil", "zil_commit_count"))
            row("ZIL indirect writes (/s)", rate("zil", "zil_itx_indirect_count"))
        if any("txg" in variants[n] for n in names):
            row("txgs synced", lambda d: _num(g(d, "txg", "txgs_synced"), ",.0f"))
        if any("journal" in variants[n] for n in names):
            row("journal commits (/s)", rate("journal", "commits"))
            row("journal writes (MB/s)", lambda d: "-" if g(d, "journal", "log_bytes") is None or not d.get("window_s") else f"{g(d, 'journal', 'log_bytes') / 1e6 / d['window_s']:,.2f}")

    def arc_hit(d: dict[str, Any]) -> str:
        h, m = g(d, "arc", "hits"), g(d, "arc", "misses")
        io = g(d, "arc", "iohits") or 0
        return "-" if h is None or m is None or h + m + io == 0 else f"{100 * h / (h + m + io):.1f}"

    def per_s(key: str) -> Callable[[dict[str, Any]], str]:
        def f(d: dict[str, Any]) -> str:
            x, ws = g(d, "arc", key), d.get("window_s") or g(d, "fio", "runtime_s")
            return "-" if x is None or not ws else f"{x / ws:,.1f}"

        return f

    if any("arc" in variants[n] for n in names):
        row("ARC hit ratio (% of accesses)", arc_hit)
        row("ARC demand data misses (/s)", per_s("demand_data_misses"))
        row("ARC demand metadata misses (/s)", per_s("demand_metadata_misses"))
        row("ARC size at end (GiB)", lambda d: _gib(g(d, "arc", "size")))
        row("ARC target c at end (GiB)", lambda d: _gib(g(d, "arc", "c")))
        row("ARC metadata_size at end (GiB)", lambda d: _gib(g(d, "arc", "metadata_size")))
        row("ARC overhead_size: dbufs' copies (GiB)", lambda d: _gib(g(d, "arc", "overhead_size")))
    if any("page_cache" in variants[n] for n in names):
        # Linux's page cache (XFS/ext4's buffered files): /proc/meminfo at the window's
        # end, /proc/vmstat over it (pgpgin and pgpgout in KiB).
        def pc_rate(key: str, scale: float = 1.0, fmt: str = ",.1f") -> Callable[[dict[str, Any]], str]:
            def f(d: dict[str, Any]) -> str:
                x, ws = g(d, "page_cache", key), d.get("window_s") or g(d, "fio", "runtime_s")
                return "-" if x is None or not ws else f"{x * scale / ws:{fmt}}"

            return f

        row("page cache read hit ratio (% of pages)", lambda d: _pct(g(d, "page_cache", "read_hit_ratio")))
        row("page cache pgpgin (MB/s)", pc_rate("pgpgin", 1024 / 1e6, ",.2f"))
        row("page cache pgpgout (MB/s)", pc_rate("pgpgout", 1024 / 1e6, ",.2f"))
        row("page cache readahead pages (/s)", pc_rate("readahead_pages"))
        row("page cache dirty throttle pauses (/s)", pc_rate("dirty_throttle_pauses"))
        row("page cache Cached at end (GiB)", lambda d: "-" if g(d, "page_cache", "cached_kb") is None else _gib(g(d, "page_cache", "cached_kb") * 1024))
        row("page cache Dirty at end (MiB)", lambda d: _num(None if g(d, "page_cache", "dirty_kb") is None else g(d, "page_cache", "dirty_kb") / 1024, ",.1f"))
    if any("compressratio" in variants[n] for n in names):
        row("compressratio (data records)", lambda d: "-" if d.get("compressratio") is None else f"{d['compressratio']:.2f}x")
    return title, t
