"""Test setup. The tests import the installed `ztwin` (the README's test command installs
this checkout first), so they exercise the compiled core exactly as users get it."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fake_core_result() -> dict:
    """FORMATTING FIXTURE, NOT A MODEL RESULT: a hand-written document with the documented
    shape of the core's per-variant answer (numbers invented), for testing output formats."""
    doc = json.loads((FIXTURES / "fake_core_result.json").read_text())
    doc.pop("_comment", None)
    return doc


@pytest.fixture
def fake_run_variant(monkeypatch, fake_core_result):
    """Replaces _core.run_variant by a function answering the fixture (XFS variants lose "arc")."""
    import ztwin
    from ztwin import _core

    calls = []

    def run_variant(config_json: str, *progress_args: object) -> str:
        cfg = json.loads(config_json)
        calls.append(cfg)
        doc = copy.deepcopy(fake_core_result)
        if cfg["filesystem"]["type"] != "zfs":
            doc.pop("arc")
            for k in list(doc["series"]):
                if k.startswith("arc_"):
                    del doc["series"][k]
        return json.dumps(doc)

    monkeypatch.setattr(_core, "run_variant", run_variant)
    assert ztwin  # imported for side effects
    return calls


@pytest.fixture
def write_toml(tmp_path):
    """Writes TOML text to a file in tmp_path and returns its path."""

    def write(text: str, name: str = "scenario.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return write
