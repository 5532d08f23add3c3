"""Timing over HTTP with keep-alive connections: medians, p95, throughput."""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from urllib.parse import urlsplit


class Client:
    def __init__(self, base: str, token: str):
        parts = urlsplit(base)
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        self.headers = {"Authorization": f"Bearer {token}"}

    def call(self, method: str, path: str, body=None, extra=None) -> tuple[int, bytes]:
        headers = dict(self.headers)
        if extra:
            headers.update(extra)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self.conn.close()


def summary(samples: list[float]) -> dict:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median_ms": statistics.median(ordered) * 1000, "p95_ms": p95 * 1000, "n": len(ordered)}


def time_get(client: Client, path: str, repeat: int, warmup: int = 2) -> dict:
    for _ in range(warmup):
        status, _ = client.call("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        status, body = client.call("GET", path)
        samples.append(time.perf_counter() - start)
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
    result = summary(samples)
    result["bytes"] = len(body)
    return result


def time_call(fn, repeat: int, warmup: int = 2) -> dict:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return summary(samples)


def run_clients(loop, clients: int) -> float:
    """Run loop(k) in `clients` threads at once; return the wall-clock seconds taken."""
    started = time.perf_counter()
    threads = [threading.Thread(target=loop, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def post_throughput(
    base: str, token: str, make_body, clients: int, seconds: float, keyed: bool = False
) -> dict:
    """POST /transactions from `clients` threads for `seconds`; count every answer.

    keyed: every request carries a new Idempotency-Key (the idempotency check's cost)."""
    counts = [0] * clients
    errors: list[str] = []
    latencies: list[float] = []
    stop_at = time.perf_counter() + seconds
    lock = threading.Lock()

    def loop(k: int) -> None:
        client = Client(base, token)
        i = 0
        try:
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                extra = {"Idempotency-Key": f"bench-{k}-{i}-{t0}"} if keyed else None
                status, body = client.call("POST", "/transactions", make_body(k, i), extra)
                elapsed = time.perf_counter() - t0
                i += 1
                with lock:
                    latencies.append(elapsed)
                    if status == 201:
                        counts[k] += 1
                    else:
                        errors.append(f"{status} {body[:200]!r}")
        finally:
            client.close()

    elapsed = run_clients(loop, clients)
    result = summary(latencies) if latencies else {}
    result.update(
        per_second=sum(counts) / elapsed, ok=sum(counts), errors=errors[:5], error_count=len(errors)
    )
    return result
