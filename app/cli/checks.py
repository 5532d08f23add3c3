"""`ledger-service check` (every derived figure recomputed from the entries, --repair
rebuilds) and `verify` (the audit trail's hash chain re-walked and replayed against the
books).

Both read on one snapshot (store.begin_snapshot), so writers carry on meanwhile; check's
repairs run through common.run (store.run_unit) under write intent.
"""

from __future__ import annotations

import sys

import click
from flask.cli import with_appcontext

from .. import store
from ..services.ledger import audit, derived, verify
from .common import run, upgrade_schema


@click.command("check")
@click.option("--repair", is_flag=True, help="rebuild the derived tables from the entries")
@with_appcontext
@store.reading()
def check_command(repair):
    """Recompute every derived figure from the entries; print each difference, exit 1 if any."""
    upgrade_schema()
    # A read-only unit on one snapshot (the command reads): writers carry on while it
    # runs (on SQLite a write-intent BEGIN IMMEDIATE would hold them off for the whole check).
    store.begin_snapshot()
    try:
        lines = derived.differences()
    finally:
        store.rollback()
    with store.writing():
        search_lines = run(derived.search_index_differences)
    for line in lines + search_lines:
        click.echo(line)
    if repair and lines:
        with store.writing():
            run(derived.rebuild)
        click.echo("rebuilt the derived tables from the entries", err=True)
    if repair and search_lines:
        with store.writing():
            run(derived.rebuild_search_index)
        click.echo("rebuilt the description search index", err=True)
    lines = lines + search_lines
    if lines:
        click.echo(f"check: {len(lines)} difference(s)", err=True)
        sys.exit(1)
    click.echo("check: every derived figure equals the entries", err=True)


@click.command("verify")
@with_appcontext
@store.reading()
def verify_command():
    """Re-walk the audit trail's hash chain and replay it against the stored books.

    Exit 0 with one summary line when both agree; exit 1 naming the first event,
    transaction, entry or account that disagrees.
    """
    upgrade_schema()
    audit.seal()  # PostgreSQL: events a crash left pending join the chain first
    store.begin_snapshot()  # one consistent read; writers carry on meanwhile
    try:
        summary = verify.run()
    except verify.Disagreement as problem:
        click.echo(f"verify: FAILED: {problem.message}")
        sys.exit(1)
    finally:
        store.rollback()
    click.echo(summary)
