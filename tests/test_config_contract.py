"""The resolved variants match the core's VariantConfig exactly (crates/ztwin-core/src/config/).

The Rust structs are parsed from the source, so a field added, renamed or removed on
either side fails here before it fails at run time (serde deny_unknown_fields)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import ROOT
from ztwin import SimulationError, load_scenario, resolve

CONFIG_DIR = ROOT / "crates" / "ztwin-core" / "src" / "config"
L2ARC_RS = ROOT / "crates" / "ztwin-core" / "src" / "cache" / "l2arc" / "mod.rs"
SCENARIO_FILES = sorted((ROOT / "python" / "ztwin" / "scenarios").glob("*.toml")) + sorted((ROOT / "scenarios").glob("*.toml"))


def _rust_items():
    src = "\n".join(p.read_text() for p in sorted(CONFIG_DIR.glob("*.rs"))) + "\n" + L2ARC_RS.read_text()
    structs, enums = {}, {}
    for m in re.finditer(r"((?:#\[[^\]]*\]\s*)*)pub (struct|enum) (\w+) \{(.*?)\n\}", src, re.S):
        attrs, kind, name, body = m.groups()
        body = re.sub(r"///[^\n]*", "", body)
        if kind == "struct":
            structs[name] = dict(re.findall(r"pub (\w+): ([^,\n]+),", body))
        else:
            rename_all = re.search(r'rename_all = "(\w+)"', attrs)
            tag = re.search(r'tag = "(\w+)"', attrs)
            variants = {}
            for vm in re.finditer(r'(?:#\[serde\(rename = "([^"]+)"\)\]\s*)?(\w+)(?:\((\w+)\))?,', body):
                ren, vname, payload = vm.groups()
                if ren:
                    wire = ren
                elif rename_all and rename_all.group(1) == "lowercase":
                    wire = vname.lower()
                elif rename_all and rename_all.group(1) == "snake_case":
                    wire = re.sub(r"(?<!^)([A-Z])", r"_\1", vname).lower()
                else:
                    wire = vname
                variants[wire] = payload
            enums[name] = {"tag": tag.group(1) if tag else None, "variants": variants, "untagged": "untagged" in attrs}
    return structs, enums


STRUCTS, ENUMS = _rust_items()


def check(value, rust_type: str, where: str) -> None:
    rust_type = rust_type.strip()
    if m := re.fullmatch(r"Option<(.+)>", rust_type):
        if value is not None:
            check(value, m.group(1), where)
        return
    if m := re.fullmatch(r"Vec<(.+)>", rust_type):
        assert isinstance(value, list), where
        for i, v in enumerate(value):
            check(v, m.group(1), f"{where}[{i}]")
        return
    if rust_type in STRUCTS:
        fields = STRUCTS[rust_type]
        assert isinstance(value, dict), where
        assert set(value) == set(fields), f"{where}: python {sorted(value)} vs rust {rust_type} {sorted(fields)}"
        for k, t in fields.items():
            check(value[k], t, f"{where}.{k}")
        return
    if rust_type in ENUMS:
        e = ENUMS[rust_type]
        if e["untagged"]:  # serde tries each variant's payload in order
            fails = []
            for payload in e["variants"].values():
                try:
                    check(value, payload, where)
                    return
                except AssertionError as err:
                    fails.append(str(err))
            pytest.fail(f"{where}={value!r} matches no variant of {rust_type}: {fails}")
        if e["tag"]:
            tag = value[e["tag"]]
            assert tag in e["variants"], f"{where}.{e['tag']}={tag!r} not in {list(e['variants'])}"
            check({k: v for k, v in value.items() if k != e["tag"]}, e["variants"][tag], where)
        else:
            assert value in e["variants"], f"{where}={value!r} not in {list(e['variants'])}"
        return
    if rust_type in ("u8", "u16", "u32", "u64"):
        assert isinstance(value, int) and not isinstance(value, bool) and value >= 0, f"{where}={value!r}"
    elif rust_type == "f64":
        assert isinstance(value, float), f"{where}={value!r} should be a float"
    elif rust_type == "bool":
        assert isinstance(value, bool), where
    elif rust_type == "String":
        assert isinstance(value, str), where
    else:  # pragma: no cover
        pytest.fail(f"{where}: unhandled rust type {rust_type}")


def test_parser_found_the_structs():
    assert {"VariantConfig", "MachineConfig", "CpuCosts", "DeviceConfig", "ZfsConfig", "ArcTunables", "RunConfig"} <= set(STRUCTS)
    assert {"FioWorkload", "FioJob", "FioBuffers", "FioPhase", "FilesDataset"} <= set(STRUCTS)
    assert ENUMS["WorkloadConfig"]["variants"].keys() == {"sysbench", "fio"}
    assert ENUMS["ZfsRelease"]["variants"].keys() == {"0.6", "0.8", "2.1", "2.2", "2.3"}
    assert "oltp_point_select" in ENUMS["SysbenchTest"]["variants"]
    assert ENUMS["VdevConfig"]["untagged"] and list(ENUMS["VdevConfig"]["variants"].values()) == ["String", "MirrorVdev"]


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.name)
def test_scenario_files_match_variant_config(path):
    for name, cfg in resolve(path).items():
        check(cfg, "VariantConfig", f"{path.name}:{name}")


def test_every_filesystem_and_preset_matches_variant_config():
    from ztwin.presets import raw_device_presets, raw_machine_presets

    zfs_mirror = {"type": "zfs", "vdevs": [{"mirror": ["d", "e"]}], "log": ["e2"], "pool": {"mirror_read_policy": "offset"}}
    for fs in ({"type": "xfs", "device": "d"}, {"type": "ext4", "device": "d"}, {"type": "zfs", "vdevs": ["d"]}, zfs_mirror):
        for machine in raw_machine_presets():
            for dev in raw_device_presets():
                devs = {"d": {"preset": dev, "size": "100GiB"}}
                if "mirror" in str(fs):
                    devs |= {"e": {"preset": dev, "size": "100GiB"}, "e2": {"preset": "ram-slog"}}
                d = {"name": "t", "machine": {"preset": machine}, "devices": devs,
                     "filesystem": fs, "workload": {"test": "select_random_points"},
                     "database": {"innodb_flush_method": "O_DIRECT"}, "dataset": {}}
                for cfg in resolve(d).values():
                    check(cfg, "VariantConfig", f"{machine}/{dev}/{fs['type']}")


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.name)
def test_core_accepts_resolved_variants(path):
    """Pushes every variant of every scenario file through the core's own validation and a
    short run: the core accepts what Python resolved, and queries (or fio reads) complete."""
    from ztwin import _core

    full = load_scenario(path)
    fio = any(c["workload"]["type"] == "fio" for c in full.variants.values())
    if fio:
        # fio runs are as long as their jobs say: keep one reading phase of each variant
        # (a read job lays its files out itself).
        for name, cfg in full.variants.items():
            jobs = cfg["workload"]["jobs"]
            first = next((p for p in cfg["phases"] if p["type"] == "fio" and any(jobs[k]["rw"] in ("read", "randread") for k in p["jobs"])), None)
            if first is None:
                # A write-only workload (fio-slog.toml): the run as written.
                doc = json.loads(_core.run_variant(json.dumps(cfg)))
                assert doc["fio"]["write"]["ios"] > 0, f"{path.name}:{name}"
                continue
            doc = json.loads(_core.run_variant(json.dumps(dict(cfg, phases=[first]))))
            assert doc["fio"]["read"]["ios"] > 0, f"{path.name}:{name}"
        return
    # Phases dropped too: a cat phase reads the whole dataset (hours of simulated time for
    # experiment 1), which the scenario's own tests cover where it is affordable.
    sc = load_scenario(path, overrides={"run": {"warmup": "0s", "duration": "1s", "report_interval": "1s"}, "phases": []})
    for name, cfg in sc.variants.items():
        doc = json.loads(_core.run_variant(json.dumps(cfg)))
        assert doc["queries"] > 0, f"{path.name}:{name}"
