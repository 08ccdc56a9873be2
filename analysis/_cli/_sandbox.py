"""`dims sandbox`: serve the synthetic fleet on loopback, with the faults and shapes asked for."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .. import _codehost as codehost
from .. import _defaults as defaults
from .._errors import ConfigurationError
from ._options import add_fleet, add_rollout, bounded, code_host, milliseconds

if TYPE_CHECKING:
    from ..sandbox import Faults


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port",
        type=bounded(0, 65535),
        default=8765,
        help="port on 127.0.0.1 (0: any free port; default 8765)",
    )
    add_fleet(parser)
    parser.add_argument(
        "--latency-ms",
        type=milliseconds,
        default=0.0,
        metavar="MS",
        help="delay every answer by MS milliseconds (default 0)",
    )
    parser.add_argument("--api-key", help=f"require this key in {defaults.API_KEY_HEADER}")
    parser.add_argument(
        "--code-host",
        type=code_host,
        metavar="NAME",
        help=f"serve the repositories under this path segment only (default {codehost.DEFAULT}, "
        f"as the interface spec writes it; {codehost.PUBLISHED} with --original-names, as the "
        "published service)",
    )
    add_rollout(parser, "serve the fleet with VERSION rolled out (same seed: the fleet after)")
    _add_faults(parser)
    _add_service_shapes(parser)


def _add_faults(sandbox: argparse.ArgumentParser) -> None:
    """The faults the sandbox can inject, each on every Nth request."""
    faults = sandbox.add_argument_group("faults (N = on every Nth API request; 0 = never)")
    faults.add_argument(
        "--rate-limit-every", type=bounded(0), default=0, metavar="N", help="429 Too Many Requests"
    )
    faults.add_argument(
        "--retry-after",
        type=bounded(0),
        default=1,
        metavar="S",
        help="the Retry-After the 429 sends (default 1)",
    )
    faults.add_argument("--error-every", type=bounded(0), default=0, metavar="N", help="a 5xx")
    faults.add_argument(
        "--error-status",
        type=bounded(500, 599),
        default=503,
        metavar="CODE",
        help="which 5xx (default 503)",
    )
    faults.add_argument(
        "--truncate-every",
        type=bounded(0),
        default=0,
        metavar="N",
        help="a 200 whose body is cut short (counts successful answers)",
    )
    faults.add_argument(
        "--reset-every", type=bounded(0), default=0, metavar="N", help="drop the connection"
    )
    faults.add_argument(
        "--stuck-offset",
        action="store_true",
        help="every page answers the request's own offset (dims counts on by itself)",
    )
    faults.add_argument(
        "--insert-while-paging",
        type=bounded(0),
        default=0,
        metavar="N",
        help="insert a deployment in front after N listing requests (the listing shifts)",
    )
    faults.add_argument(
        "--fail-tenant",
        metavar="TENANT",
        help="every request for this workspace (X-Tenant-Id) fails (see --fail-tenant-status)",
    )
    faults.add_argument(
        "--fail-tenant-status",
        type=bounded(400, 599),
        default=500,
        metavar="CODE",
        help="the status --fail-tenant answers (default 500; 403: no access)",
    )


def _add_service_shapes(sandbox: argparse.ArgumentParser) -> None:
    """Shapes of the real service's listing and records that the spec does not promise."""
    sandbox.add_argument(
        "--tenants",
        type=bounded(0, 50),
        default=0,
        metavar="N",
        help="spread the fleet over N workspaces (default 0: 1 to 3, by the seed); "
        "listings are scoped by X-Tenant-Id",
    )
    shapes = sandbox.add_argument_group("real-service shapes (listing and records)")
    shapes.add_argument(
        "--page-cap",
        type=bounded(0),
        default=0,
        metavar="N",
        help="serve at most N records a page, whatever `limit` asks (0: no cap)",
    )
    shapes.add_argument(
        "--final-offset",
        metavar="HOW",
        help="the last page answers an offset that does not advance: echo (the request's), "
        "zero, or back (one less)",
    )
    shapes.add_argument(
        "--ignore-offset",
        action="store_true",
        help="serve the first page for every offset (the response offset still advances)",
    )
    shapes.add_argument(
        "--untyped-every",
        type=bounded(0),
        default=0,
        metavar="N",
        help="every Nth deployment is in no typed listing and does not name its type",
    )
    shapes.add_argument(
        "--real-shaped",
        action="store_true",
        help="records carry status, source and (some) source_config.deployment_type, "
        "some of a type newer than the spec",
    )
    shapes.add_argument(
        "--spec-records",
        action="store_true",
        help="serve records drawn the spec's way, seeded: whatever openapi.yaml admits "
        "(optional objects absent or null, negative and huge numbers, control and bidi "
        "characters in text, free-form objects of any shape, both spellings, unnamed fields) "
        "instead of the realistic fleet",
    )
    shapes.add_argument(
        "--original-names",
        action="store_const",
        const="original",
        default="spec",
        dest="names",
        help="speak as the published service does: redis_* and langgraph_config_path for "
        "the spec's cache_* and graph_config_path, integers where its schema has them, "
        "and the repositories path's `github` segment (default: the spec's names)",
    )


def _check_spec_records(args: argparse.Namespace) -> None:
    """--spec-records draws every shape itself: a realistic shape beside it is a mistake."""
    shaped = {
        "--real-shaped": args.real_shaped,
        "--untyped-every": args.untyped_every,
        "--original-names": args.names != "spec",
    }
    clashing = [flag for flag, given in shaped.items() if given]
    if args.spec_records and clashing:
        raise ConfigurationError(
            f"--spec-records draws its own shapes: {', '.join(clashing)} does not apply to it"
        )


def run(args: argparse.Namespace) -> int:
    from ..sandbox import serve

    _check_spec_records(args)
    try:
        faults = _faults(args)
    except ValueError as exc:  # Faults checks its own values; the CLI names the option
        raise ConfigurationError(str(exc).replace("Faults.", "--").replace("_", "-")) from None
    serve(
        port=args.port,
        deployments=args.deployments,
        seed=args.seed,
        latency_ms=args.latency_ms,
        faults=faults,
        api_key=args.api_key,
        untyped_every=args.untyped_every,
        real_shaped=args.real_shaped,
        names=args.names,
        tenants=args.tenants,
        spec_records=args.spec_records,
        rollout=None if args.roll_out is None else (args.roll_out, args.share),
        code_host=args.code_host,
    )
    return 0


def _faults(args: argparse.Namespace) -> Faults:
    from ..sandbox import Faults

    return Faults(
        rate_limit_every=args.rate_limit_every,
        retry_after_s=args.retry_after,
        error_every=args.error_every,
        error_status=args.error_status,
        truncate_every=args.truncate_every,
        reset_every=args.reset_every,
        stuck_offset=args.stuck_offset,
        insert_while_paging=args.insert_while_paging,
        page_cap=args.page_cap,
        final_offset=args.final_offset,
        ignore_offset=args.ignore_offset,
        fail_tenant=args.fail_tenant,
        fail_tenant_status=args.fail_tenant_status,
    )
