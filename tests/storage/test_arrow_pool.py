"""Tables are built in jemalloc where pyarrow has it, and a pool the user chose wins."""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest

from dims._arrowpool import USER_CHOICE, building_pool

pytestmark = pytest.mark.skipif(
    "jemalloc" not in pa.supported_memory_backends(), reason="this pyarrow has no jemalloc"
)

# An export in a fresh process, then how much jemalloc ever held and the pool left behind.
_EXPORT = """
import sys
import pyarrow as pa
from dims.sandbox import fleet_dump_bytes, generate_fleet
from dims._snapshot import snapshot_from_dump
before = pa.default_memory_pool().backend_name
dump = sys.argv[1] + "/fleet.json"
open(dump, "wb").write(fleet_dump_bytes(generate_fleet(300, seed=3)))
snapshot_from_dump(dump, sys.argv[1] + "/out", workers=0)
after = pa.default_memory_pool().backend_name
print(pa.jemalloc_memory_pool().max_memory(), before, after)
"""


def _export(tmp_path, **env: str) -> tuple[int, str, str]:
    environ = {k: v for k, v in os.environ.items() if k != USER_CHOICE} | env
    out = subprocess.run(
        [sys.executable, "-c", _EXPORT, str(tmp_path)],
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(out[0]), out[1], out[2]


def test_an_export_builds_its_tables_in_jemalloc_and_restores_the_pool(tmp_path):
    used, before, after = _export(tmp_path)
    assert used > 0
    assert after == before


def test_a_pool_the_user_chose_is_left_alone(tmp_path):
    used, before, after = _export(tmp_path, **{USER_CHOICE: "system"})
    assert used == 0
    assert before == after == "system"


def test_the_pool_is_restored_after_the_block_even_on_error(monkeypatch):
    monkeypatch.delenv(USER_CHOICE, raising=False)
    before = pa.default_memory_pool().backend_name
    with pytest.raises(RuntimeError), building_pool():
        assert pa.default_memory_pool().backend_name == "jemalloc"
        raise RuntimeError("stop")
    assert pa.default_memory_pool().backend_name == before


def test_blocks_in_several_threads_restore_the_pool_once_the_last_one_leaves(monkeypatch):
    monkeypatch.delenv(USER_CHOICE, raising=False)
    before = pa.default_memory_pool().backend_name
    first, second = building_pool(), building_pool()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to enter leaves while the other still builds
    assert pa.default_memory_pool().backend_name == "jemalloc"
    second.__exit__(None, None, None)
    assert pa.default_memory_pool().backend_name == before
