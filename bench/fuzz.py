"""Fuzz figures: schemathesis from app/openapi.yaml against the service under waitress.

    python -m bench.fuzz --dialect sqlite
    python -m bench.fuzz --dialect postgresql --max-examples 100 --seed 7

The same run as tests/system/test_fuzz.py (harness/fuzzing.py), over a throwaway database with a
minted bearer token and a small seeded ledger; prints the operations, the cases run,
the 5xx count and any failed check. Exit status 1 on any 5xx or failed check.
"""

from __future__ import annotations

import argparse
import json
import sys

from harness import databases
from harness.databases import PG_ADMIN_URL


def run(dialect: str, seed: int, max_examples: int, admin_url: str = PG_ADMIN_URL) -> dict:
    from flask_migrate import upgrade

    from app import create_app, store
    from app.extensions import db
    from app.services.identity import credentials, users
    from harness.fuzzing import (
        leak_pattern,
        load_description,
        only_routed,
        run_fuzz,
        seed_ledger,
    )
    from harness.inprocess import InProcessServer

    origin = "http://localhost:38081"
    with databases.throwaway(dialect, admin_url) as url:
        app = create_app({"DATABASE_URL": url, "API_ORIGIN": origin})
        with app.app_context():
            store.write_intent.set(True)
            upgrade()
            users.add_user("fuzz@example.com", "correct horse battery staple")
            token = credentials.mint_token(
                "fuzz@example.com", label="fuzz", days=1, audience=origin
            )
            store.commit()
            seed_ledger()
            leak = leak_pattern()
        description, not_routed = only_routed(load_description(), app)
        with InProcessServer(app) as server:
            result = run_fuzz(
                server.base_url, token, description, leak, seed=seed, max_examples=max_examples
            )
        with app.app_context():
            db.session.remove()
            db.engine.dispose()
    return {
        "dialect": dialect,
        "seed": seed,
        "max_examples_per_operation": max_examples,
        "operations": len(result.operations),
        "not_routed": not_routed,
        "cases": result.cases,
        "responses_by_status": dict(sorted(result.by_status.items())),
        "server_errors_5xx": result.server_errors,
        "failed_checks": result.failures,
        "errors": result.errors,
        "seconds": round(result.seconds, 1),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.fuzz", description=__doc__.splitlines()[0])
    p.add_argument("--dialect", choices=("sqlite", "postgresql"), default="sqlite")
    p.add_argument("--seed", type=int, default=None, help="default: the test suite's seed")
    p.add_argument(
        "--max-examples",
        type=int,
        default=None,
        help="generated cases per operation (default: the test suite's)",
    )
    p.add_argument("--admin-url", default=PG_ADMIN_URL)
    args = p.parse_args(argv)
    from harness.fuzzing import MAX_EXAMPLES, SEED

    report = run(
        args.dialect,
        args.seed if args.seed is not None else SEED,
        args.max_examples or MAX_EXAMPLES,
        args.admin_url,
    )
    print(json.dumps(report, indent=2))
    clean = not report["server_errors_5xx"] and not report["failed_checks"] and not report["errors"]
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main())
