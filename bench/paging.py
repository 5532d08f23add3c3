"""python -m bench.paging: pages of the listing and of an account register over HTTP.

Example: python -m bench.paging --dialect sqlite --transactions 1000000
Loads the synthetic ledger (bench.ledger_gen, straight into the store as python -m bench
does), serves it with `ledger-service serve` and times, each as a median and p95 over
--repeat requests on one keep-alive connection:

  plain page          GET /transactions?limit=50
  deep cursor page    the same, from a cursor in the ledger's first year
  q filter            GET /transactions?limit=50&q=77 (~5 % of descriptions match)
  q filter, rare      GET /transactions?limit=50&q=synthetic 4242 (111 matches: the
                      trigram index, migration 0010; before it, a read of every row)
  account filter      GET /transactions?limit=50&account_id=7
  amount filter       GET /transactions?limit=50&min_cents=100000&max_cents=200000
  register page       GET /accounts/7/register?limit=50
  register deep page  the same, from a cursor in the ledger's first year
  unpaged month       GET /transactions?from&to for one month (the plain array, for comparison)

Deep cursors are made with the service's own cursor code (app.services.ledger.cursors),
as a client would get them after walking the pages before.
"""

from __future__ import annotations

import sys
from datetime import date
from urllib.parse import quote

from harness.server import BENCH_EMAIL, Service

from . import bulk, report
from .http_timing import Client, time_get

ACCOUNT = 7
DEEP_DAY = date(2016, 6, 1)
TARGET_MS = 5.0


def parse_args(argv):
    return bulk.books_parser("python -m bench.paging", __doc__, repeat=50).parse_args(argv)


def deep_cursors(url: str, n: int) -> dict[str, str]:
    """Cursors naming a row in the first year, as the service would issue them."""
    from app import create_app
    from app.services.ledger import cursors, listing
    from app.services.ledger.validate import ListingQuery

    app = create_app({"DATABASE_URL": url})
    with app.app_context():
        tx_id = max(1, n // 20)  # transactions are spread evenly over ten years
        listing_cursor = cursors.encode(
            listing.KIND, listing._scope(ListingQuery()), DEEP_DAY, tx_id
        )
        kind = f"register:{ACCOUNT}"
        register_cursor = cursors.encode(kind, cursors.scope_of(kind, None, None), DEEP_DAY, tx_id)
    return {"listing": listing_cursor, "register": register_cursor}


def paths(deep: dict[str, str]) -> dict[str, str]:
    return {
        "plain page": "/transactions?limit=50",
        "deep cursor page": f"/transactions?limit=50&cursor={deep['listing']}",
        "q filter": "/transactions?limit=50&q=77",
        "q filter, rare term": "/transactions?limit=50&q=" + quote("synthetic 4242"),
        "account filter": f"/transactions?limit=50&account_id={ACCOUNT}",
        "amount filter": "/transactions?limit=50&min_cents=100000&max_cents=200000",
        "register page": f"/accounts/{ACCOUNT}/register?limit=50",
        "register deep page": f"/accounts/{ACCOUNT}/register?limit=50&cursor={deep['register']}",
        "unpaged month (plain array)": "/transactions?from=2024-05-01&to=2024-05-31",
    }


def run(args) -> dict:
    results: dict = {"dialect": args.dialect, "transactions": args.transactions, "timings": {}}
    with bulk.loaded_books(args) as url:
        deep = deep_cursors(url, args.transactions)
        service = Service(url)
        token = service.cli("mint-token", BENCH_EMAIL, "--label", "bench")
        service.start()
        try:
            client = Client(service.origin, token)
            for name, path in paths(deep).items():
                results["timings"][name] = time_get(client, path, args.repeat)
            client.close()
        finally:
            service.stop()
    return results


def render(results: dict) -> str:
    lines = [
        f"{results['transactions']:,} transactions on {results['dialect']}"
        f" (target: a page of 50 under {TARGET_MS} ms median)",
        f"{'read':<36} {'median ms':>10} {'p95 ms':>8} {'bytes':>9}",
    ]
    for name, t in results["timings"].items():
        lines.append(
            f"{name:<36} {t['median_ms']:>10.2f} {t['p95_ms']:>8.2f} {t.get('bytes', 0):>9,}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    return report.main(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
