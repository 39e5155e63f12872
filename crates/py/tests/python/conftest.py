"""Shared fixtures: the repository root (tests run from it) and the `smpsched` command the
Python results are compared with (SMPSCHED_BIN, set by crates/py/tests/python.rs)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """Runs the smpsched command in the repository root; returns the completed process."""
    exe = os.environ.get("SMPSCHED_BIN") or str(ROOT / "target" / "release" / "smpsched")
    if not Path(exe).is_file():
        pytest.fail(f"no smpsched command at {exe}: set SMPSCHED_BIN")

    def call(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"smpsched {' '.join(args)} exited {p.returncode}: {p.stderr}")
        return p

    return call
