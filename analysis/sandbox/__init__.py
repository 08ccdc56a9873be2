"""The embedded sandbox: a real HTTP service on loopback serving a seeded synthetic fleet.

It is the default target of `make demo`, the tests and the notebooks, so that everything
runs without access to the real service, deterministically, and with injectable faults.

Inside: `_fleet` (the seeded fleet), `_spec_records` (records drawn the spec's way, for
`--spec-records`), `_query` (a listing's parameters checked as the service
does), `_faults` (what can go wrong, and the counters), `_app` (the ASGI app), `_server` (it
served on loopback). It knows the spec, none of dims' layers. Its web server is the
`sandbox` extra (`pip install 'dims[sandbox]'`), asked for before anything imports it.
"""

from . import _extra  # noqa: F401  (first: the extra asked for, see _extra.py)
from ._app import create_app
from ._faults import Faults, SandboxStats
from ._fleet import Fleet, SecondDay, fleet_dump_bytes, generate_fleet, roll_out, second_day
from ._server import SandboxHandle, run_sandbox, serve
from ._spec_records import (
    EDGE_INTEGERS,
    EDGE_NUMBERS,
    HOSTILE_TEXT,
    ORDINARY_NUMBERS,
    SpecRecords,
)

__all__ = [
    "EDGE_INTEGERS",
    "EDGE_NUMBERS",
    "HOSTILE_TEXT",
    "ORDINARY_NUMBERS",
    "Faults",
    "Fleet",
    "SandboxHandle",
    "SandboxStats",
    "SecondDay",
    "SpecRecords",
    "create_app",
    "fleet_dump_bytes",
    "generate_fleet",
    "roll_out",
    "run_sandbox",
    "second_day",
    "serve",
]
