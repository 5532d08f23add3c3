"""python -m bench.pages: how long a person waits for each page of the web app.

Example: python -m bench.pages --store sqlite --transactions 1000000
         python -m bench.pages --store postgres --transactions 10000

Loads the synthetic books as `python -m bench` does (bench.bulk; `ledger-service
check` must find no difference), once per store, size and seed: the loaded books are
kept as a cache (PostgreSQL: the database `ledger_pages_<N>_<seed>`; SQLite:
`<cache>/ledger_pages_<N>_<seed>.db`) and every run works on a copy of them (`CREATE
DATABASE ... TEMPLATE`, a file copy), so a million transactions are loaded once.
On the copy it adds what some pages show: a budget planned from 2024's actuals and a
1,000-line bank statement (OFX) of account 1. It serves the copy with `ledger-service
serve` (API and web app on `localhost` ports), signs in with Debian's Chromium
through Playwright (password, then a virtual passkey: harness/browser.py, as the
browser tests do) and times each page:

  Books                           /
  Register, first page            /register?account=7
  Register, deep page             /register?account=7&statement_date=2016-06-30
  Reports                         /reports (with the budget against actual)
  Budgets: the plan               /budgets?budget=ID
  History                         /history
  Statements, 1,000 lines         /statements?account=1&statement=ID
  Year end                        /year-end
  Import: preview of 1,000 rows   /import, a 1,000-row CSV chosen, Preview clicked

from navigation (the page's performance.timeOrigin) until the page's ready mark
(`document.body.dataset.ready = "true"`, set once its figures are drawn; the tests
wait for the same mark), taken by a MutationObserver in the page; for Import, from
the click on Preview until the preview table is shown. Each page is loaded once as a
warm-up, then --repeat times (default 10), at 1280x800 and at 390x844; the table
gives the medians, the number of API requests the page made, and when the last API
answer arrived (from the same clock): what comes after it is the browser's parsing
and drawing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

from harness import browser as chromium
from harness import databases
from harness.server import BENCH_EMAIL, Service, cli, free_port

from . import bulk, report

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "bench-password"  # python -m bench's user (bench.__main__.load_books)
REGISTER_ACCOUNT = 7  # as bench.paging
BANK = 1  # "Asset 1": about 19 entries a day at 1M transactions (bench.statements)
COUNTER = 5
DEEP_DAY = "2016-06-30"
STATEMENT_LINES = 1000
STATEMENT_FIRST = date(2025, 6, 1)
CSV_ROWS = 1000
CSV_FIRST = date(2025, 9, 1)
SPAN_DAYS = 30
TARGET_MS = 300.0

# When the ready mark is set (performance.now(), from the navigation's start), and
# when the next frame after it begins (the mark's figures are on the screen).
READY_OBSERVER = """
(() => {
  const seen = () => {
    if (window.__readyAt !== undefined) return;
    if (document.body && document.body.dataset.ready === "true") {
      window.__readyAt = performance.now();
      requestAnimationFrame(() => { window.__frameAt = performance.now(); });
    }
  };
  new MutationObserver(seen).observe(document, {
    attributes: true, subtree: true, attributeFilter: ["data-ready"],
  });
})();
"""

# The page's API requests: how many, and when the last answer ended.
API_ENTRIES = """(api) => {
  const all = performance.getEntriesByType("resource");
  const calls = all.filter((e) => e.name.startsWith(api));
  return {
    count: calls.length,
    firstStart: Math.min(...calls.map((e) => e.startTime)),
    lastEnd: Math.max(0, ...calls.map((e) => e.responseEnd)),
    files: all.length - calls.length,
    calls: calls.map((e) =>
      [e.name.slice(api.length), Math.round(e.startTime), Math.round(e.responseEnd)]),
  };
}"""

# Import: click Preview, resolve when the preview section is shown: (ms, API figures).
PREVIEW_JS = """async (api) => {
  const section = document.getElementById("preview-section");
  const before = performance.getEntriesByType("resource").length;
  const start = performance.now();
  const shown = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      if (!section.hidden) { observer.disconnect(); resolve(performance.now()); }
    });
    observer.observe(section, {attributes: true, attributeFilter: ["hidden"]});
  });
  document.getElementById("preview").click();
  const end = await shown;
  const calls = performance.getEntriesByType("resource").slice(before)
    .filter((e) => e.name.startsWith(api));
  const lastEnd = Math.max(start, ...calls.map((e) => e.responseEnd));
  const spans = calls.map((e) =>
    [e.name.slice(api.length, api.length + 60), Math.round(e.startTime - start),
     Math.round(e.responseEnd - start)]);
  return {ms: end - start, count: calls.length, lastApi: lastEnd - start, calls: spans};
}"""


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m bench.pages", description=__doc__.splitlines()[0])
    p.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--transactions", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--repeat", type=int, default=10, help="timed loads of each page and size")
    p.add_argument("--admin-url", default=databases.PG_ADMIN_URL)
    p.add_argument(
        "--cache",
        default=str(ROOT / "build" / "bench-cache"),
        help="folder of the loaded SQLite books kept between runs",
    )
    p.add_argument("--no-cache", action="store_true", help="load afresh, keep nothing")
    p.add_argument(
        "--load-only", action="store_true", help="load the books into the cache and stop"
    )
    p.add_argument("--pages", help="comma-separated page names to time (default: all)")
    p.add_argument("--json", help="also write the figures to this file")
    return p.parse_args(argv)


def _dialect(store: str) -> str:
    return "postgresql" if store == "postgres" else "sqlite"


# --- the books: loaded once, copied per run -------------------------------------------


def _load(url: str, args, results: dict) -> None:
    """python -m bench's loader: the bench user, the synthetic books, the derived tables
    rebuilt, then `ledger-service check` (no difference allowed)."""
    cli(url, "user", "add", BENCH_EMAIL, "--password", "-", stdin=PASSWORD + "\n")
    t0 = time.perf_counter()
    load = bulk.load_postgresql if args.store == "postgres" else bulk.load_sqlite
    load(url, args.transactions, args.seed)
    bulk.rebuild_and_analyze(url)
    results["load_seconds"] = round(time.perf_counter() - t0, 1)
    t0 = time.perf_counter()
    check = cli(url, "check", check=False)
    results["check_seconds"] = round(time.perf_counter() - t0, 1)
    if check.returncode != 0:
        raise SystemExit("ledger-service check found differences:\n" + check.stdout[:4000])


def _pg(admin_url: str):
    import psycopg

    return psycopg.connect(
        admin_url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True
    )


def _pg_url(admin_url: str, name: str) -> str:
    return admin_url.rsplit("/", 1)[0] + "/" + name


@contextlib.contextmanager
def books(args, results: dict):
    """The url of a working copy of the loaded books, dropped on the way out."""
    if args.no_cache:
        with databases.throwaway(
            _dialect(args.store), args.admin_url, prefix="ledger_pages_"
        ) as url:
            _load(url, args, results)
            yield url
        return
    name = f"ledger_pages_{args.transactions}_{args.seed}"
    if args.store == "sqlite":
        folder = Path(args.cache)
        folder.mkdir(parents=True, exist_ok=True)
        cached = folder / f"{name}.db"
        if not cached.exists():
            loading = folder / f"{name}.loading.db"
            loading.unlink(missing_ok=True)
            _load(f"sqlite:///{loading}", args, results)
            _checkpoint(f"sqlite:///{loading}")
            loading.rename(cached)
            for suffix in ("-wal", "-shm", "-writer.lock"):
                Path(f"{loading}{suffix}").unlink(missing_ok=True)
        else:
            results["notes"].append(f"books from the cache: {cached}")
        work = folder / f"{name}.work-{os.getpid()}.db"
        shutil.copyfile(cached, work)
        try:
            yield f"sqlite:///{work}"
        finally:
            for suffix in ("", "-wal", "-shm", "-writer.lock"):
                Path(f"{work}{suffix}").unlink(missing_ok=True)
        return
    with _pg(args.admin_url) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
    if not exists:
        loading = f"{name}_loading"
        with _pg(args.admin_url) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{loading}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{loading}"')
        _load(_pg_url(args.admin_url, loading), args, results)
        with _pg(args.admin_url) as conn:
            conn.execute(f'ALTER DATABASE "{loading}" RENAME TO "{name}"')
    else:
        results["notes"].append(f"books from the cache: PostgreSQL database {name}")
    work = f"{name}_work_{os.getpid()}"
    with _pg(args.admin_url) as conn:
        conn.execute(f'CREATE DATABASE "{work}" TEMPLATE "{name}"')
    try:
        yield _pg_url(args.admin_url, work)
    finally:
        with _pg(args.admin_url) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{work}" WITH (FORCE)')


def _checkpoint(url: str) -> None:
    import sqlite3

    conn = sqlite3.connect(url.removeprefix("sqlite:///"))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


# --- what some pages show: a budget, a statement, a CSV ----------------------------------


def _amount(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def statement_file(seed: int) -> bytes:
    """An OFX 2 statement of STATEMENT_LINES lines over a month of account BANK."""
    rng = random.Random(seed)
    last = STATEMENT_FIRST + timedelta(days=SPAN_DAYS - 1)
    lines = sorted(
        (
            STATEMENT_FIRST + timedelta(days=rng.randrange(SPAN_DAYS)),
            rng.randint(1, 500_000) * rng.choice((1, -1)),
            f"Payee {rng.randint(1, 300)}",
        )
        for _ in range(STATEMENT_LINES)
    )
    body = "".join(
        f"<STMTTRN><TRNTYPE>OTHER</TRNTYPE><DTPOSTED>{day:%Y%m%d}</DTPOSTED>"
        f"<TRNAMT>{_amount(cents)}</TRNAMT><FITID>PAGES-{n}</FITID><NAME>{payee}</NAME></STMTTRN>"
        for n, (day, cents, payee) in enumerate(lines, start=1)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<?OFX OFXHEADER="200" VERSION="220" SECURITY="NONE"'
        ' OLDFILEUID="NONE" NEWFILEUID="NONE"?>\n'
        "<OFX><BANKMSGSRSV1><STMTTRNRS><TRNUID>1</TRNUID><STMTRS><CURDEF>EUR</CURDEF>"
        "<BANKACCTFROM><BANKID>1</BANKID><ACCTID>PAGES1</ACCTID><ACCTTYPE>CHECKING</ACCTTYPE>"
        f"</BANKACCTFROM><BANKTRANLIST><DTSTART>{STATEMENT_FIRST:%Y%m%d}</DTSTART>"
        f"<DTEND>{last:%Y%m%d}</DTEND>{body}</BANKTRANLIST>"
        f"<LEDGERBAL><BALAMT>0.00</BALAMT><DTASOF>{last:%Y%m%d}</DTASOF></LEDGERBAL>"
        "</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
    ).encode()


def csv_file(seed: int) -> bytes:
    """A bank's CSV of CSV_ROWS rows over a month: Date, Description, Amount."""
    rng = random.Random(seed + 1)
    rows = sorted(
        (
            CSV_FIRST + timedelta(days=rng.randrange(SPAN_DAYS)),
            f"Card payment {rng.randint(1, 400)}",
            rng.randint(1, 50_000) * rng.choice((1, -1)),
        )
        for _ in range(CSV_ROWS)
    )
    text = "Date,Description,Amount\n" + "".join(
        f"{day.isoformat()},{words},{_amount(cents)}\n" for day, words, cents in rows
    )
    return text.encode()


def add_fixtures(url: str, seed: int) -> dict:
    """A budget planned from 2024's actuals for 2025 and a 1,000-line statement of BANK,
    through the services (in process, committed); their ids."""
    from app import create_app, store
    from app.cli.common import upgrade_schema
    from app.extensions import db
    from app.services.banking import statements
    from app.services.ledger import budgets

    app = create_app({"DATABASE_URL": url})
    with app.app_context():
        # Books cached by an older checkout: brought to this one's schema first, as
        # serve would (without its backup; e.g. 0025's word index, about 20 s at 1M).
        upgrade_schema()
        with store.writing():
            budget = budgets.create_budget(
                {"name": "Bench plan 2025", "starts_on": "2025-01-01", "based_on": "actuals"}
            )
            store.commit()
        with store.writing():
            statement = statements.upload(BANK, statement_file(seed), None, None)
            store.commit()
        db.engine.dispose()
    return {"budget": budget["id"], "statement": statement["id"]}


# --- the browser ---------------------------------------------------------------------------


def page_paths(ids: dict) -> dict[str, str]:
    return {
        "Books": "/",
        "Register, first page": f"/register?account={REGISTER_ACCOUNT}",
        "Register, deep page": f"/register?account={REGISTER_ACCOUNT}&statement_date={DEEP_DAY}",
        "Reports": "/reports",
        "Budgets: the plan": f"/budgets?budget={ids['budget']}",
        "History": "/history",
        f"Statements, {STATEMENT_LINES:,} lines": (
            f"/statements?account={BANK}&statement={ids['statement']}"
        ),
        "Year end": "/year-end",
        f"Import: preview of {CSV_ROWS:,} rows": "/import",
    }


def _load_page(page, url: str, api: str) -> dict:
    page.goto(url, wait_until="commit")
    page.wait_for_selector("body[data-ready=true]", timeout=120_000)
    page.wait_for_function("() => window.__frameAt !== undefined", timeout=10_000)
    ready = page.evaluate("window.__readyAt")
    frame = page.evaluate("window.__frameAt")
    calls = page.evaluate(API_ENTRIES, api)
    return {
        "ms": frame,
        "mark_ms": ready,
        "count": calls["count"],
        "first_api_ms": calls["firstStart"],
        "last_api_ms": calls["lastEnd"],
        "files": calls["files"],
        "calls": calls["calls"],
    }


def _preview(page, url: str, api: str, csv: bytes) -> dict:
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]", timeout=120_000)
    page.set_input_files(
        "#csv-file", files=[{"name": "bank.csv", "mimeType": "text/csv", "buffer": csv}]
    )
    page.wait_for_selector("#mapping-section:not([hidden])")
    page.select_option("#import-bank", str(BANK))
    page.select_option("#import-counter", str(COUNTER))
    figures = page.evaluate(PREVIEW_JS, api)
    errors = page.locator("#mapping-message, #import-message").all_inner_texts()
    if page.locator("#preview-table tbody tr").count() != CSV_ROWS:
        raise RuntimeError(f"the preview did not show {CSV_ROWS} rows: {errors}")
    return {
        "ms": figures["ms"],
        "mark_ms": figures["ms"],
        "count": figures["count"],
        "first_api_ms": 0,
        "last_api_ms": figures["lastApi"],
        "files": 0,
        "calls": figures["calls"],
    }


def measure(web: str, api: str, ids: dict, args, results: dict) -> None:
    from playwright.sync_api import sync_playwright

    csv = csv_file(args.seed)
    wanted = set(args.pages.split(",")) if args.pages else None
    with sync_playwright() as playwright:
        chromium_browser = playwright.chromium.launch(
            executable_path=chromium.CHROMIUM, headless=True, args=chromium.CHROMIUM_ARGS
        )
        try:
            context = chromium_browser.new_context(viewport=chromium.SIZES["desktop"])
            context.add_init_script(READY_OBSERVER)
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            cdp = context.new_cdp_session(page)
            cdp.send("WebAuthn.enable", {"enableUI": False})
            chromium.add_authenticator(cdp)
            page.goto(web + "/")
            chromium.first_sign_in(page, BENCH_EMAIL, PASSWORD)
            page.wait_for_url(web + "/", timeout=30_000)
            page.wait_for_selector("body[data-ready=true]", timeout=120_000)
            for name, path in page_paths(ids).items():
                if wanted and not any(w.lower() in name.lower() for w in wanted):
                    continue
                row = results["pages"].setdefault(name, {"path": path})
                for size, viewport in chromium.SIZES.items():
                    page.set_viewport_size(viewport)
                    runs = []
                    for i in range(args.repeat + 1):
                        if path == "/import":
                            one = _preview(page, web + path, api, csv)
                        else:
                            one = _load_page(page, web + path, api)
                        if i:  # the first is the warm-up
                            runs.append(one)
                    row[size] = {
                        "median_ms": statistics.median(r["ms"] for r in runs),
                        "mark_ms": statistics.median(r["mark_ms"] for r in runs),
                        "max_ms": max(r["ms"] for r in runs),
                        "requests": statistics.median(r["count"] for r in runs),
                        "first_api_ms": statistics.median(r["first_api_ms"] for r in runs),
                        "last_api_ms": statistics.median(r["last_api_ms"] for r in runs),
                        "files": statistics.median(r["files"] for r in runs),
                        "calls": runs[len(runs) // 2]["calls"],
                    }
                    print(f"  {name} at {size}: {row[size]['median_ms']:.0f} ms", file=sys.stderr)
            if errors:
                results["notes"].append(f"errors in the pages: {errors[:5]}")
            context.close()
        finally:
            chromium_browser.close()


def run(args) -> dict:
    results: dict = {
        "store": args.store,
        "transactions": args.transactions,
        "seed": args.seed,
        "repeat": args.repeat,
        "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_start": _loads(),
        "pages": {},
        "notes": [],
    }
    with books(args, results) as url:
        if args.load_only:
            results["load_average_end"] = _loads()
            return results
        ids = add_fixtures(url, args.seed)
        api_port, web_port = free_port(), free_port()
        api, web = f"http://localhost:{api_port}", f"http://localhost:{web_port}"
        service = Service(
            url,
            port=api_port,
            WEB_BIND_ADDR=f"127.0.0.1:{web_port}",
            API_ORIGIN=api,
            WEB_ORIGIN=web,
        )
        service.start()
        try:
            service.wait_for(f"http://127.0.0.1:{web_port}/")
            measure(web, api, ids, args, results)
        finally:
            service.stop()
        count, first = service.errors_logged()
        if count:
            results["notes"].append(f"the service logged {count} unhandled errors: {first}")
    results["load_average_end"] = _loads()
    return results


def _loads() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def render(r: dict) -> str:
    out = [
        f"bench.pages: {r['transactions']:,} transactions on {r['store']}, seed {r['seed']},"
        f" median of {r['repeat']} after a warm-up; started {r['started']},"
        f" load average {r['load_average_start']} -> {r.get('load_average_end')}",
    ]
    if "load_seconds" in r:
        out.append(
            f"loaded and rebuilt in {r['load_seconds']} s, checked in {r['check_seconds']} s"
        )
    out += [
        "ms from navigation to the ready mark's frame (target: "
        f"{TARGET_MS:.0f} ms); at 1280x800: files and API requests made, when the first"
        " API request left and the last answer arrived (ms)",
        f"{'page':<32} {'1280x800':>9} {'390x844':>9} {'files':>6} {'API':>4}"
        f" {'first':>6} {'last':>6}",
    ]
    for name, row in r["pages"].items():
        d, p = row.get("desktop"), row.get("phone")
        if not d or not p:
            continue
        flag = " *" if max(d["median_ms"], p["median_ms"]) > TARGET_MS else ""
        out.append(
            f"{name:<32} {d['median_ms']:>9.0f} {p['median_ms']:>9.0f}"
            f" {d['files']:>6.0f} {d['requests']:>4.0f} {d['first_api_ms']:>6.0f}"
            f" {d['last_api_ms']:>6.0f}{flag}"
        )
    out += r["notes"]
    return "\n".join(out)


def main(argv=None) -> int:
    return report.main(argv, parse_args, run, render)


if __name__ == "__main__":
    sys.exit(main())
