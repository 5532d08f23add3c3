"""Optional: the same ledger as an hledger journal, `hledger bal` timed side by side."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from . import ledger_gen


def write_journal(path: str, n: int, seed: int) -> None:
    names = {i: f"{kind}:{name.replace(' ', '')}" for i, name, kind in ledger_gen.accounts()}
    with Path(path).open("w") as f:
        for _, day, description, legs in ledger_gen.transactions(n, seed):
            f.write(f"{day.isoformat()} {description}\n")
            for account_id, cents in legs:
                sign = "-" if cents < 0 else ""
                whole, part = divmod(abs(cents), 100)
                f.write(f"    {names[account_id]}  {sign}{whole}.{part:02d}\n")
            f.write("\n")


def compare(n: int, seed: int, ceiling: dict) -> dict:
    exe = shutil.which("hledger")
    if exe is None:
        return {"summary": "hledger: not installed; skipped"}
    folder = tempfile.mkdtemp(prefix="ledger-bench-hledger-")
    try:
        journal = str(Path(folder) / "books.journal")
        write_journal(journal, n, seed)
        start = time.perf_counter()
        done = (
            subprocess.run(
                ["/usr/bin/time", "-f", "%M", exe, "bal", "-f", journal],
                capture_output=True,
                text=True,
                check=False,
            )
            if Path("/usr/bin/time").exists()
            else subprocess.run(
                [exe, "bal", "-f", journal], capture_output=True, text=True, check=False
            )
        )
        seconds = time.perf_counter() - start
        peak = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        peak_mib = int(peak) / 1024 if peak.isdigit() else None
        memory = f", peak {peak_mib:.0f} MiB" if peak_mib else ""
        return {
            "seconds": seconds,
            "peak_mib": peak_mib,
            "returncode": done.returncode,
            "summary": f"hledger bal: {seconds:.2f} s{memory} (exit {done.returncode})",
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)
