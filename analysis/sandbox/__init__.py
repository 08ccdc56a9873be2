"""The embedded sandbox: a real HTTP service on loopback serving a seeded synthetic fleet.

It is the default target of `make demo`, the tests and the notebooks, so that everything
runs without access to the real service, deterministically, and with injectable faults.
"""

from .app import create_app
from .faults import Faults, SandboxStats
from .fleet import Fleet, fleet_dump_bytes, generate_fleet, roll_out
from .server import SandboxHandle, run_sandbox, serve

__all__ = [
    "Faults",
    "Fleet",
    "SandboxHandle",
    "SandboxStats",
    "create_app",
    "fleet_dump_bytes",
    "generate_fleet",
    "roll_out",
    "run_sandbox",
    "serve",
]
