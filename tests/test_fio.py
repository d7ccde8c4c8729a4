"""fio job files, command lines and fio scenarios: parsing as fio parses, errors that name
the option, the job and the file, resolution into the core's config, and the results."""

from __future__ import annotations

import json
import re

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ztwin
from ztwin import ScenarioError
from ztwin.fio import OPTIONS, FioError, fio_size, fio_time, parse_command_line, parse_job_file, resolve_jobs


def jobs_of(text: str, options=None) -> list[dict]:
    cmd = parse_command_line(options, "options") if options else []
    return resolve_jobs(parse_job_file(text, "t.fio"), cmd, "t.fio").jobs


def resolved(text: str, options=None):
    cmd = parse_command_line(options, "options") if options else []
    return resolve_jobs(parse_job_file(text, "t.fio"), cmd, "t.fio")


# ---------------------------------------------------------------------------------------
# Values


POW = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}


@given(n=st.integers(0, 2**20), prefix=st.sampled_from("kmgtp"), form=st.sampled_from(["", "b", "ib"]),
       upper=st.booleans(), kb_base=st.sampled_from([1000, 1024]))
def test_sizes_follow_fio_units_both_kb_bases(n, prefix, form, upper, kb_base):
    """parse.c __get_mult_bytes: k..p (and kb..) use kb_base; kib..pib the other base."""
    suffix = prefix + form
    text = f"{n}{suffix.upper() if upper else suffix}"
    base = kb_base if form != "ib" else (1000 if kb_base == 1024 else 1024)
    assert fio_size(text, kb_base) == n * base ** POW[prefix]


@given(n=st.integers(0, 2**40))
def test_plain_and_hex_sizes_round_trip(n):
    assert fio_size(str(n)) == n
    assert fio_size(hex(n)) == n
    assert fio_size(f"{n}b") == n


@pytest.mark.parametrize("text, hint", [
    ("1.5g", "integer part"),
    ("50%", "percent"),
    ("4ki", "manual"),
    ("4x", "unknown size suffix"),
    ("four", "not a fio size"),
])
def test_sizes_fio_would_misread_are_errors(text, hint):
    with pytest.raises(FioError, match=hint):
        fio_size(text)


def test_times_default_to_seconds():
    assert fio_time("60") == 60 * 10**9
    assert fio_time("60s") == fio_time("1m") == 60 * 10**9
    assert fio_time("250ms") == fio_time("250msec") == 250 * 10**6
    assert fio_time("7us") == 7000
    assert fio_time("1h") == 3600 * 10**9
    with pytest.raises(FioError, match="unknown time suffix"):
        fio_time("60sec")


# ---------------------------------------------------------------------------------------
# Job files and command lines


def test_globals_apply_to_the_jobs_after_them_and_bare_options_are_1():
    jobs = jobs_of("""
; a comment
[global]
bs=64k
size=1g
[a]
rw=randread
  # an indented comment
norandommap
[global]
bs=8k
[b]
time_based
runtime=30
""")
    a, b = jobs
    assert (a["bs_read"], a["norandommap"], a["rw"]) == (65536, True, "randread")
    assert (b["bs_read"], b["time_based"], b["runtime_ns"], b["rw"]) == (8192, True, 30 * 10**9, "read")


def test_command_line_globals_come_before_the_job_file_and_names_add_jobs():
    r = resolved("[global]\nbs=16k\n[filejob]\nsize=1m\n", ["--bs=4k", "--ioengine=libaio", "--name=cmdjob", "--size=2m", "--rw=write"])
    a, b = r.jobs
    assert a["bs_read"] == 16384, "the job file's [global] wins over command-line globals"
    assert a["ioengine"] == b["ioengine"] == "libaio"
    assert (b["name"], b["rw"], b["bs_write"], b["io_size"]) == ("cmdjob", "write", 16384, 2 << 20)
    assert r.job_names == ["filejob", "cmdjob"]


def test_bs_read_write_rwmixwrite_buffered_aliases():
    (j,) = jobs_of("[j]\nsize=1m\nreadwrite=randrw\nblocksize=4k,16k\nrwmixwrite=30\nbuffered=0\nio_limit=512k\n")
    assert (j["rw"], j["bs_read"], j["bs_write"], j["rwmixread"], j["direct"], j["io_size"]) == ("randrw", 4096, 16384, 70, True, 512 << 10)


def test_files_per_clone_shared_by_filename_or_filename_format():
    r = resolved("[global]\nsize=8m\nnrfiles=2\ndirectory=/d\n[a]\nnumjobs=2\n[b]\nnumjobs=2\n")
    names = [f["name"] for f in r.files]
    assert names == ["/d/a.0.0", "/d/a.0.1", "/d/a.1.0", "/d/a.1.1", "/d/b.0.0", "/d/b.0.1", "/d/b.1.0", "/d/b.1.1"]
    assert all(f["size"] == 4 << 20 for f in r.files), "size / nrfiles each"
    assert r.jobs[0]["clone_files"] == [[0, 1], [2, 3]]
    shared = resolved("[global]\nsize=8m\nfilename_format=data.$jobnum.$filenum\n[a]\nnumjobs=2\n[b]\nrw=randread\nnumjobs=2\n")
    assert [f["name"] for f in shared.files] == ["./data.0.0", "./data.1.0"]
    assert shared.jobs[1]["clone_files"] == [[0], [1]]
    one = resolved("[global]\nfilename=/tank/f\n[a]\nsize=1g\nnumjobs=4\n[b]\nsize=2g\noffset=1g\n")
    assert [f["size"] for f in one.files] == [3 << 30], "as large as the largest need (offset + size)"
    assert one.jobs[0]["clone_files"] == [[0]] * 4
    assert (one.jobs[1]["offset"], one.jobs[1]["file_range"]) == (1 << 30, 2 << 30)


def test_random_distribution_and_file_service_type():
    (j,) = jobs_of("[j]\nsize=1m\nrw=randread\nrandom_distribution=zipf:1.2\nfile_service_type=random:8\n")
    assert (j["random_distribution"], j["distribution_param"], j["file_service_type"], j["file_service_nr"]) == ("zipf", 1.2, "random", 8)
    (j,) = jobs_of("[j]\nsize=1m\nrandom_distribution=gauss:5\n")
    assert (j["random_distribution"], j["distribution_param"]) == ("normal", 5.0)


@pytest.mark.parametrize("text, pattern", [
    ("[j]\nsize=1m\nrandom_distribution=zipf:1.2:0.25\n", "center"),
    ("[j]\nsize=1m\nrandom_distribution=zipf:1\n", "not 1.0"),
    ("[j]\nsize=1m\nrandom_distribution=zoned:60/10:40/90\n", "zoned"),
    ("[j]\nsize=1m\nfile_service_type=zipf:1.1\n", "non-uniform file selection"),
    ("[j]\nsize=1m\nrw=randread:8\n", "modifier"),
    ("[j]\nsize=1m\nrw=trim\n", "not modelled"),
    ("[j]\nsize=1m\nioengine=posixaio\n", "not modelled"),
    ("[j]\nsize=1m\nbs=1k-4k\n", "ranges"),
    ("[j]\nsize=1m\ndirect=yes\n", "1 or 0"),
    ("[j]\nsize=1m\ntime_based\n", "needs a runtime"),
    ("[j]\nrw=read\n", "needs size or filesize"),
    ("[j]\nsize=${SIZE}\n", r"\$ substitution"),
    ("[j]\ninclude other.fio\n", "include"),
    ("size=1m\n[j]\n", "outside of a \\[job\\] section"),
    ("[a]\nsize=1m\n[a]\nsize=2m\n", "unique"),
])
def test_what_fio_refuses_or_ztwin_does_not_model_is_an_error(text, pattern):
    with pytest.raises(FioError, match=pattern):
        resolved(text)


@settings(max_examples=60)
@given(name=st.from_regex(r"[a-z][a-z_]{2,20}", fullmatch=True), value=st.sampled_from([None, "1", "4k", "abc"]))
def test_unknown_options_are_rejected_with_option_job_and_file_named(name, value):
    if name in OPTIONS:
        return
    line = name if value is None else f"{name}={value}"
    with pytest.raises(FioError) as e:
        resolved(f"[global]\nsize=1m\n[myjob]\n{line}\n")
    msg = str(e.value)
    assert repr(name) in msg and "[myjob]" in msg and "t.fio:4" in msg, msg


def test_an_option_error_names_option_job_and_line():
    with pytest.raises(FioError) as e:
        resolved("[global]\nsize=1m\n[seq]\nrw=read\nbs=1.5k\n")
    assert re.search(r"t\.fio:5: job \[seq\]: option bs: '1.5k'", str(e.value)), str(e.value)


# ---------------------------------------------------------------------------------------
# Scenarios


BASE = {
    "name": "fio-test",
    "machine": {"preset": "lab-guest"},
    "devices": {"disk": {"preset": "virtio-throttled", "iops_limit": 300}},
    "filesystem": {"type": "zfs", "vdevs": ["disk"], "recordsize": "16K", "compression": "lz4", "arc": {"zfs_arc_max": "256M"}},
    "workload": {"type": "fio", "jobs": """
[global]
filename=/tank/f
size=256m
[write]
rw=write
bs=1m
[randread]
rw=randread
bs=16k
numjobs=4
randrepeat=0
norandommap
time_based
runtime=10
group_reporting
"""},
    "phases": [
        {"type": "fio", "name": "prep", "jobs": ["write"]},
        {"type": "restart", "name": "boot"},
        {"type": "fio", "name": "run", "jobs": ["randread"], "runs": 2},
    ],
}


def with_(**kw):
    d = json.loads(json.dumps(BASE))
    d.update(kw)
    return d


def test_a_fio_scenario_resolves_to_the_core_config():
    cfg = ztwin.resolve(BASE)["base"]
    assert cfg["database"] is None
    assert cfg["dataset"] == {"type": "files", "files": [{"name": "/tank/f", "size": 256 << 20}]}
    assert cfg["workload"]["fio_version"] == "3.36"
    assert [j["name"] for j in cfg["workload"]["jobs"]] == ["write", "randread"]
    assert [(p["name"], p.get("jobs")) for p in cfg["phases"]] == [("prep", [0]), ("boot", None), ("run-1", [1]), ("run-2", [1])]


@pytest.mark.parametrize("change, where, message", [
    ({"database": {"type": "innodb"}}, "database", "has no [database]"),
    ({"dataset": {"type": "sysbench"}}, "dataset", "has no [dataset]"),
    ({"run": {"duration": "60s"}}, "run.duration", "does not apply to fio"),
    ({"phases": [{"type": "fio", "jobs": ["nosuch"]}]}, "phases[0].jobs", "no job named 'nosuch'"),
    ({"phases": [{"type": "restart"}]}, "phases", "needs at least one fio phase"),
    ({"workload": {"type": "fio", "jobs": "[j]\nsize=1m\nrw=write\nwrite_barrier=4\n"}}, "workload.jobs", "'write_barrier' is not modelled"),
    ({"workload": {"type": "fio", "fio_version": "3.20", "jobs": "[j]\nfilename=/x/f\nsize=1m\nrw=write\nsync=dsync\n"}, "phases": []},
     "workload.jobs", "before 3.24"),
    ({"filesystem": {"type": "zfs", "release": "0.6", "vdevs": ["disk"]}, "workload": {"type": "fio", "jobs": "[j]\nfilename=/x/f\nsize=1m\nrw=write\nfsync=1\n"},
      "phases": []}, "filesystem.release", "intent log of release 0.6"),
    ({"phases": [{"type": "workload"}]}, "phases[0].type", "not workload"),
    ({"workload": {"type": "fio", "jobs": "[j]\nsize=1m\nfadvise_hint=willneed\n"}}, "workload.jobs", "allowed: 0, 1, random, sequential"),
    ({"machine": {"preset": "lab-guest", "mem_available": "8GiB"}}, "machine.mem_available", "to the machine's RAM"),
    ({"machine": {"preset": "lab-guest", "vm": {"dirty_ratio": 101}}}, "machine.vm.dirty_ratio", "100"),
    ({"workload": {"type": "fio", "jobs": "[j]\nsize=1m\nbogus=1\n"}}, "workload.jobs", "'bogus'"),
    ({"workload": {"type": "fio"}}, "workload", "needs job_file, jobs (inline) or options"),
    ({"workload": {"type": "fio", "job_file": "nosuch.fio"}}, "workload.job_file", "nosuch.fio"),
    ({"workload": dict(BASE["workload"], fio_version="1.99")}, "workload.fio_version", "2.0 or later"),
])
def test_fio_scenario_errors_name_the_field(change, where, message):
    with pytest.raises(ScenarioError) as e:
        ztwin.resolve(with_(**change))
    text = str(e.value)
    assert where in text and message in text, text


def test_sync_options_parse_as_fio_reads_them():
    j = jobs_of("[a]\nsize=1m\nrw=write\nfsync=32\n[b]\nsize=1m\nrw=randwrite\nfdatasync=4\nsync\nend_fsync\n"
                "[c]\nsize=1m\nrw=write\nsync=dsync\nfsync_on_close=1\n[d]\nsize=1m\nrw=write\nsync=0\n")
    pick = lambda job: (job["fsync"], job["fdatasync"], job["sync"], job["end_fsync"], job["fsync_on_close"])  # noqa: E731
    assert [pick(x) for x in j] == [(32, 0, "none", False, False), (0, 4, "sync", True, False),
                                   (0, 0, "dsync", False, True), (0, 0, "none", False, False)]
    for text, word in [("sync=1", "sync"), ("sync=sync", "sync"), ("sync=none", "none"), ("sync=DSYNC", "dsync")]:
        assert jobs_of(f"[j]\nsize=1m\n{text}\n")[0]["sync"] == word
    old = lambda text: resolve_jobs(parse_job_file(f"[j]\nsize=1m\n{text}\n", "t.fio"), [], "t.fio", (3, 20)).jobs[0]["sync"]  # noqa: E731
    assert old("sync=1") == "sync" and old("sync=0") == "none"
    for text, pattern in [("sync=always", "allowed: none or 0"), ("fsync=-1", "out of range"), ("end_fsync=yes", "1 or 0"),
                          ("sync_file_range=write:8", "not modelled")]:
        with pytest.raises(FioError, match=pattern):
            resolved(f"[j]\nsize=1m\n{text}\n")
    with pytest.raises(FioError, match="before 3.24"):
        resolve_jobs(parse_job_file("[j]\nsize=1m\nsync=sync\n", "t.fio"), [], "t.fio", (3, 23))


SYNC_BASE = with_(
    devices={"disk": {"preset": "virtio-throttled", "iops_limit": 3000}},
    workload={"type": "fio", "jobs": """
[w]
filename=/tank/f
size=16m
rw=randwrite
bs=16k
io_size=2m
sync=1
[f]
filename=/tank/g
size=16m
rw=randwrite
bs=16k
io_size=2m
fsync=8
"""},
    phases=[{"type": "fio", "jobs": ["w"]}, {"type": "fio", "name": "fsync", "jobs": ["f"]}],
)


def test_sync_writes_and_fsyncs_report_the_log_and_the_flushes():
    r = ztwin.run(SYNC_BASE)
    doc = r.summary["variants"]["base"]
    w, f = doc["phases"]
    assert w["fio"]["write"]["ios"] == 128
    assert w["zil"]["zil_commit_count"] == 128 and w["zil"]["zil_itx_count"] >= 128
    # O_SYNC writes wait for the log block's write and its flush (500us on this preset).
    assert w["fio"]["write"]["clat_ms"]["p50"] >= 0.2 + 0.5
    assert w["devices"]["disk"]["flushes_per_sec"] > 0
    assert f["fio"]["sync"]["ios"] == 15 and f["zil"]["zil_commit_count"] == 15
    assert f["fio"]["write"]["clat_ms"]["p50"] < 0.2, "the writes themselves do not wait for the disk"
    row = r.summary_frame().filter(pl.col("phase") == "fsync").row(0, named=True)
    assert row["zil_zil_commit_count"] == 15 and row["fio_sync_ios"] == 15
    assert row["devices_disk_flushes_per_sec"] > 0


@pytest.mark.parametrize("fs, kind", [("ext4", "jbd2"), ("xfs", "xfs-log")])
def test_syncs_on_ext4_and_xfs_commit_the_journal(fs, kind):
    d = json.loads(json.dumps(SYNC_BASE))
    d["filesystem"] = {"type": fs, "device": "disk"}
    d["workload"]["jobs"] = d["workload"]["jobs"].replace("/tank/", "/data/").replace("io_size=2m", "io_size=2m\ndirect=1")
    w, f = ztwin.run(d).summary["variants"]["base"]["phases"]
    # An O_SYNC write whose mtime moved to a new tick of the coarse clock (4 ms at HZ 250)
    # commits the journal, which ends with a cache flush (500us on this preset); one in the
    # same tick has nothing to log and flushes the cache itself. About 1 ms a write: about
    # one in four commits.
    j = w["journal"]
    assert j["kind"] == kind and j["syncs"] == 128
    assert 128 / 8 <= j["commits"] <= 128 / 2, j
    assert j["commits"] + j["sync_flushes"] >= 128, j
    assert w["devices"]["disk"]["flushes_per_sec"] > 0
    assert w["fio"]["write"]["clat_ms"]["p50"] >= 0.2 + 0.5
    # fsync=8: the writes return at the device's pace, each fsync commits what they dirtied.
    assert f["fio"]["sync"]["ios"] == 15 and f["journal"]["syncs"] == 15
    assert f["fio"]["sync"]["lat_ms"]["p50"] >= 0.5
    assert f["fio"]["write"]["clat_ms"]["p50"] < w["fio"]["write"]["clat_ms"]["p50"]


def test_the_cli_prints_fio_sync_lines(tmp_path):
    import tomli_w
    from typer.testing import CliRunner

    from ztwin.cli import app

    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps(SYNC_BASE))
    out = CliRunner().invoke(app, ["run", str(path)], env={"COLUMNS": "200"}).output
    assert "fsync/fdatasync/sync_file_range:" in out and "sync percentiles (msec): 50.00th=[" in out, out


def test_sysbench_phases_and_fio_phases_do_not_mix():
    from test_phases import BASE as SB

    with pytest.raises(ScenarioError, match="need a fio workload"):
        ztwin.resolve(dict(SB, phases=[{"type": "fio"}]))


def test_job_file_is_relative_to_the_scenario(tmp_path):
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "r.fio").write_text("[r]\nfilename=/tank/f\nsize=16m\nrw=randread\nbs=16k\n")
    sc = dict(BASE, workload={"type": "fio", "job_file": "jobs/r.fio"})
    sc.pop("phases")
    import tomli_w

    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps(sc))
    cfg = ztwin.load_scenario(path).variants["base"]
    assert cfg["workload"]["jobs"][0]["io_size"] == 16 << 20
    assert cfg["phases"] == []


def test_results_per_run_in_fio_terms_with_arcstats():
    doc = json.loads(ztwin.run(BASE).to_json())["variants"]["base"]
    names = [p["name"] for p in doc["phases"]]
    assert names == ["prep", "boot", "run-1", "run-2"]
    prep = doc["phases"][0]
    assert prep["timing_modelled"] is True and prep["fio"]["write"]["io_bytes"] == 256 << 20
    # The reboot syncs what the write left dirty before the runs.
    assert "zfs_write" in doc["phases"][1] or prep["zfs_write"]["dirty_left_bytes"] == 0
    for p in doc["phases"][2:]:
        r = p["fio"]["read"]
        assert set(r) >= {"iops", "bw_mbps", "clat_ms"} and set(r["clat_ms"]) >= {"p50", "p95", "p99"}
        assert {"hits", "misses", "mru_hits", "mfu_hits", "mru_ghost_hits", "mfu_ghost_hits"} <= set(p["arc"])
        assert p["devices"]["disk"]["read_iops"] > 0
        assert p["fio"]["jobs"][0]["jobs"] == 4, "group_reporting: one line for the 4 clones"
        # The disk binds at 300 IOPS; reads the ARC serves come on top.
        assert p["devices"]["disk"]["read_iops"] == pytest.approx(300, rel=0.01)
        assert r["iops"] >= 297
        assert r["bw_mbps"] == pytest.approx(r["iops"] * 16384 / 1e6, rel=1e-6)
    assert doc["fio"] == doc["phases"][-1]["fio"], "the variant's summary is its last measured run"
    assert "fio_iops" in ztwin.run(BASE).series.columns


def test_the_cli_prints_fio_lines_and_the_arc_per_run(tmp_path):
    import tomli_w
    from typer.testing import CliRunner

    from ztwin.cli import app

    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps(BASE))
    out = CliRunner().invoke(app, ["run", str(path)], env={"COLUMNS": "200"}).output
    assert "randread: (groupid=0, jobs=4)" in out
    assert re.search(r"read: IOPS=\d+, BW=\d+KiB/s \(\d+kB/s\)", out), out
    assert "clat percentiles (msec): 50.00th=[" in out
    assert "ARC per run, variant base" in out and "run-2" in out
    assert "prep: write pass" not in out
    assert re.search(r"  write: IOPS=[\d.]+k?, BW=\d+", out), out


def test_inputs_that_broke_the_parser_are_clear_errors(tmp_path):
    with pytest.raises(FioError, match="names no file"):
        resolve_jobs(parse_job_file("[j]\nrw=randread\nfilename=:\nsize=1m\n", "x.fio"), [], "x.fio")
    with pytest.raises(FioError, match="No closing quotation"):
        parse_command_line("--name=j --rw=randread '--filename=a")
    bad = tmp_path / "j.fio"
    bad.write_bytes(b"\xff\xfe[j]\n")
    with pytest.raises(FioError, match="not UTF-8"):
        ztwin.fio.load(str(bad), None, None, tmp_path)


def test_page_cache_options_parse_as_fio_reads_them():
    """invalidate (default 1) and fadvise_hint (default 1: by the job's type)."""
    j = jobs_of("[a]\nsize=1m\n[b]\nsize=1m\ninvalidate=0\nfadvise_hint=0\n[c]\nsize=1m\nfadvise_hint=sequential\n")
    assert [(x["invalidate"], x["fadvise_hint"]) for x in j] == [(True, "type"), (False, "none"), (True, "sequential")]


BUFFERED = with_(
    filesystem={"type": "ext4", "device": "disk"},
    machine={"preset": "lab-guest", "mem_available": "64MiB", "vm": {"dirty_background_bytes": "1MiB"}},
    workload={"type": "fio", "jobs": """
[global]
filename=/data/f
size=16m
bs=16k
[read]
rw=randread
invalidate=0
[write]
rw=write
bs=64k
"""},
    phases=[{"type": "fio", "name": "first", "jobs": ["read"]}, {"type": "fio", "name": "again", "jobs": ["read"]},
            {"type": "fio", "name": "write", "jobs": ["write"]}],
)


def test_direct_0_on_ext4_goes_through_the_page_cache_and_reports_it():
    """fio's default direct=0 on ext4: the first random pass reads every 16 KiB block from
    the device into the page cache (64 MiB stated as MemAvailable), the second (invalidate=0)
    finds it all there; writes over vm.dirty_background_bytes are written back by the
    flusher. Each phase has a page_cache section in /proc/meminfo and /proc/vmstat terms."""
    cfg = ztwin.resolve(BUFFERED)["base"]
    assert cfg["machine"]["mem_available_bytes"] == 64 << 20 and cfg["machine"]["vm"]["dirty_background_bytes"] == 1 << 20
    assert [j["direct"] for j in cfg["workload"]["jobs"]] == [False, False]
    r = ztwin.run(BUFFERED)
    first, again, write = r.summary["variants"]["base"]["phases"]
    assert first["page_cache"]["pgpgin"] == 16 << 10 and first["page_cache"]["read_miss_pages"] == 4096
    assert again["page_cache"]["read_hit_ratio"] == 1.0 and again["devices"]["disk"]["read_iops"] == 0
    assert again["page_cache"]["cached_kb"] == 16 << 10
    assert again["page_cache"]["mem_available_bytes"] == 64 << 20
    assert write["page_cache"]["nr_dirtied"] == 4096 and write["page_cache"]["pgpgout"] > 0
    assert write["page_cache"]["flusher_runs"] > 0 and write["page_cache"]["dirty_kb"] < 1024


def test_the_cli_summary_has_the_page_cache_rows(tmp_path):
    import tomli_w
    from typer.testing import CliRunner

    from ztwin.cli import app

    path = tmp_path / "s.toml"
    path.write_text(tomli_w.dumps(BUFFERED))
    out = CliRunner().invoke(app, ["run", str(path)], env={"COLUMNS": "200"}).output
    assert re.search(r"page cache pgpgout \(MB/s\)\s+│\s+[1-9][\d,.]*", out), out
    assert "page cache Dirty at end (MiB)" in out and "page cache read hit ratio" in out
