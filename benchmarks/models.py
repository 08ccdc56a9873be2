"""The generated models' `from_dict` vs the path the analysis layer uses, on the same bytes.

20,000 sandbox records as list-deployments response pages of 100 (the bytes the service
sends). Generated: `orjson.loads` of each page + `DeploymentPage.from_dict` (attrs models,
`datetime.fromisoformat`, UUIDs, enums). Ours: `orjson.loads` of each page +
`Flattener.add_page` (validated rows for every table); and the same plus `take()`, the
Arrow tables ready to write. Typed: each page's records split as raw JSON text by msgspec
and read by the compiled lane (what `--from-json` does; the fetch path still parses with
orjson, see dims._fetch). All parse with the collector paused (dims._gcpause), so
the figure compares the model building, not the collector.
"""

from __future__ import annotations

from typing import Any

import msgspec
import orjson

from dims._gcpause import paused_gc
from dims._pages import Page
from dims._tables import Flattener
from dims_client.models import DeploymentPage

from .fleetdata import dump_path
from .timing import measure, save, table

PAGE = 100


class _RawPage(msgspec.Struct):
    resources: list[msgspec.Raw]


_RAW_PAGE = msgspec.json.Decoder(_RawPage)


def pages_of(size: int) -> list[bytes]:
    records = orjson.loads(dump_path(size).read_bytes())
    return [
        orjson.dumps({"resources": records[i : i + PAGE], "offset": i + PAGE})
        for i in range(0, len(records), PAGE)
    ]


def generated(pages: list[bytes]) -> int:
    count = 0
    with paused_gc():
        for raw in pages:
            count += len(DeploymentPage.from_dict(orjson.loads(raw)).resources)
    return count


def ours(pages: list[bytes], take: bool) -> int:
    flattener = Flattener()
    with paused_gc():
        for raw in pages:
            page = orjson.loads(raw)
            flattener.add_page(Page(records=page["resources"], source="bench"))
        if take:
            flattener.take()
    return flattener.counts["records"]


def typed(pages: list[bytes]) -> int:
    flattener = Flattener()
    with paused_gc():
        for raw in pages:
            flattener.add_page(Page(records=_RAW_PAGE.decode(raw).resources, source="bench"))
    return flattener.counts["records"]


def run(size: int = 20_000, runs: int = 5) -> dict[str, Any]:
    pages = pages_of(size)
    assert generated(pages) == ours(pages, True) == typed(pages) == size
    timings = [
        measure(f"{size}: orjson + DeploymentPage.from_dict", lambda: generated(pages), runs),
        measure(f"{size}: orjson + Flattener.add_page", lambda: ours(pages, False), runs),
        measure(f"{size}: orjson + add_page + take (Arrow)", lambda: ours(pages, True), runs),
        measure(f"{size}: msgspec raw split + add_page (typed)", lambda: typed(pages), runs),
    ]
    from_dict, flatten, with_take, typed_flatten = timings
    result = {
        "page_size": PAGE,
        "timings": timings,
        "from_dict_vs_flatten": from_dict.median_s / flatten.median_s,
        "from_dict_vs_flatten_and_arrow": from_dict.median_s / with_take.median_s,
        "from_dict_vs_typed_flatten": from_dict.median_s / typed_flatten.median_s,
    }
    print(table(timings))
    print(
        f"  from_dict takes {result['from_dict_vs_flatten']:.1f}x as long as our flatten "
        f"({result['from_dict_vs_flatten_and_arrow']:.1f}x with the Arrow conversion, "
        f"{result['from_dict_vs_typed_flatten']:.1f}x the compiled lane's), and yields "
        "objects, not tables\n"
    )
    save("models", {"records": size, **result})
    return result


if __name__ == "__main__":
    run()
