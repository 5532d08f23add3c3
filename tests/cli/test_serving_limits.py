"""What the embedded server accepts and how long it waits (app/cli/limits.py, applied by
`serve` and by the in-process server alike; docs/deploy.md, "Limits"), over raw sockets:

- a body larger than any route accepts is 413 from its headers, before it is sent,
  with no credential (waitress's default took 1 GiB into a temporary file first);
- a hundred half-sent uploads held open leave GET /health answering within a second
  (waitress's default of 100 connections locked it out);
- an idle connection, a half-sent upload and a trickling request are dropped after
  REQUEST_TIMEOUT_SECONDS (shortened here);
- clients that ask for the audit pack and read nothing never hold the serving threads
  (the pack goes to the server as a file its I/O loop sends).
"""

from __future__ import annotations

import json
import os
import socket
import time
from contextlib import ExitStack

import pytest

from app.config import DEFAULTS, largest_body
from app.routes.support import open_route
from harness.inprocess import InProcessServer
from tests.testkit import PDF, upload

UPLOAD = "POST /transactions/1/documents HTTP/1.1\r\nHost: test\r\n"


def connect(server: InProcessServer, timeout: float = 5.0) -> socket.socket:
    return socket.create_connection((server.host, server.port), timeout=timeout)


def answer_head(sock: socket.socket) -> bytes:
    """The status line and headers the server sent (or b"" if it closed)."""
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(4096)
        if not chunk:
            break
        got += chunk
    return got


def whole_answer(sock: socket.socket) -> bytes:
    """Everything the server sent until it closed the connection."""
    got = b""
    while chunk := sock.recv(4096):
        got += chunk
    return got


def health_within(server: InProcessServer, seconds: float) -> bytes:
    with connect(server, timeout=seconds) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        return answer_head(sock)


def waiting_answers(server: InProcessServer) -> list:
    """The connections holding an answer their client has not read."""
    from waitress.channel import HTTPChannel

    channels = list(server.map.values())
    return [c for c in channels if isinstance(c, HTTPChannel) and c.total_outbufs_len > 0]


def threads_idle(server: InProcessServer) -> bool:
    """No request is being served or waits for a thread."""
    dispatcher = server.servers[0].task_dispatcher
    return dispatcher.active_count == 0 and not dispatcher.queue


def closed_within(sock: socket.socket, seconds: float, trickle: bytes = b"") -> float | None:
    """Seconds until the server closed the connection (None: still open after `seconds`).
    trickle: sent a byte at a time, one every quarter second, meanwhile."""
    began = time.monotonic()
    sock.settimeout(0.25)
    sent = 0
    while time.monotonic() - began < seconds:
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - began
        except TimeoutError:
            pass
        except ConnectionResetError:
            return time.monotonic() - began
        if sent < len(trickle):
            try:
                sock.sendall(trickle[sent : sent + 1])
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - began
            sent += 1
    return None


def test_a_body_larger_than_any_route_takes_is_413_before_it_is_sent(app):
    too_large = largest_body(app.config) + 1
    assert too_large > app.config["MAX_DOCUMENT_BYTES"]
    with InProcessServer(app) as server, connect(server) as sock:
        # No credential, and not a byte of the body: the headers alone are refused.
        sock.sendall(
            f"{UPLOAD}Content-Type: multipart/form-data; boundary=x\r\n"
            f"Content-Length: {too_large}\r\n\r\n".encode()
        )
        head, _, body = whole_answer(sock).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413 ")
        # In the service's {error} shape, as every refusal (not waitress's text page).
        assert b"\r\nContent-Type: application/json\r\n" in head
        assert json.loads(body) == {
            "error": f"the request body is larger than the largest this service accepts "
            f"({too_large - 1} bytes); nothing was read or stored"
        }
    with InProcessServer(app) as server, connect(server) as sock:
        # Chunked: refused once it grows past the limit, long before waitress's 1 GiB.
        sock.sendall(f"{UPLOAD}Transfer-Encoding: chunked\r\n\r\n".encode())
        block = b"x" * 1024 * 1024
        head = b""
        for _ in range(too_large // len(block) + 2):
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(block), block))
            except (BrokenPipeError, ConnectionResetError):
                break
        head = answer_head(sock)
        assert head.startswith(b"HTTP/1.1 413 ")


def test_a_body_within_the_limit_reaches_the_route(app):
    within = largest_body(app.config)
    with InProcessServer(app) as server, connect(server) as sock:
        sock.sendall(
            f"{UPLOAD}Content-Type: text/plain\r\nContent-Length: {within}\r\n\r\n".encode()
        )
        sock.sendall(b"x" * within)
        assert answer_head(sock).startswith(b"HTTP/1.1 401 ")  # the route's own answer


@pytest.mark.slow
def test_a_hundred_held_open_uploads_leave_health_answering(app):
    with InProcessServer(app) as server, ExitStack() as held:
        for _ in range(105):
            sock = held.enter_context(connect(server))
            sock.sendall(f"{UPLOAD}Content-Length: 1000000\r\n\r\npart of it".encode())
        time.sleep(0.2)  # let the loop accept them all
        began = time.monotonic()
        assert health_within(server, 1.0).startswith(b"HTTP/1.1 200 ")
        assert time.monotonic() - began < 1.0


@pytest.mark.slow
def test_idle_half_sent_and_trickling_requests_are_dropped(make_app):
    timeout = 2
    app = make_app(REQUEST_TIMEOUT_SECONDS=timeout)
    with InProcessServer(app) as server:
        idle, half, trickling = connect(server), connect(server), connect(server)
        with idle, half, trickling:
            half.sendall(f"{UPLOAD}Content-Length: 1000000\r\n\r\npart of it".encode())
            trickle = f"{UPLOAD}Content-Length: 10\r\n\r\n0123456789".encode()
            # The trickle sends a byte every quarter second: busy, never done in time.
            assert closed_within(trickling, timeout + 1.5, trickle) is not None
            for sock in (idle, half):
                assert closed_within(sock, 1.0) is not None
        assert health_within(server, 1.0).startswith(b"HTTP/1.1 200 ")


@pytest.fixture
def big_pack(api, make_account, post_tx) -> str:
    """Books whose audit pack is 6 MiB that do not compress (more than the socket
    buffers take); the Authorization header that fetches it."""
    bank, food = make_account("Bank", "asset"), make_account("Food", "expense")
    tx_id = post_tx("2026-03-01", "shop", (food, 500), (bank, -500)).get_json()["id"]
    for n in range(3):
        data = PDF + os.urandom(2 * 1024 * 1024) + bytes([n])
        assert upload(api, tx_id, data, f"r{n}.pdf").status_code == 201
    return f"Bearer {api.token}"


@pytest.mark.slow
@pytest.mark.parametrize("pipelined", [1, 2], ids=["one", "pipelined"])
def test_clients_that_never_read_the_audit_pack_hold_no_thread(app, big_pack, pipelined):
    """pipelined: each client sends two requests at once (waitress then waited, in the
    serving thread, for the first answer to be read before taking the second)."""
    token = big_pack
    # The output watermark lowered from waitress's 16 MiB so a 6 MiB pack crosses it.
    small = {"outbuf_high_watermark": 64 * 1024}
    with InProcessServer(app, threads=2, adjust=small) as server, ExitStack() as held:
        for _ in range(4):  # more than the threads
            sock = held.enter_context(socket.socket())
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(5)
            sock.connect((server.host, int(server.port)))
            request = (
                f"GET /export?format=audit-pack HTTP/1.1\r\nHost: test\r\n"
                f"Authorization: {token}\r\n\r\n"
            )
            sock.sendall((request * pipelined).encode())
        began = time.monotonic()
        while time.monotonic() - began < 20 and not (
            len(waiting_answers(server)) == 4 and threads_idle(server)
        ):
            time.sleep(0.1)  # until every pack is built and waits for its reader
        # Every client's pack was built and waits, unread, in the server's I/O loop, with
        # no serving thread held: only then does /health answering prove anything.
        assert len(waiting_answers(server)) == 4
        assert threads_idle(server)
        for _ in range(3):
            assert health_within(server, 1.0).startswith(b"HTTP/1.1 200 ")


@pytest.mark.slow
def test_serve_with_workers_applies_the_same_limits(scratch_database_url, tmp_path):
    """The real `serve --workers 2`: every worker refuses the oversized body, outlasts a
    hundred held uploads and drops them after REQUEST_TIMEOUT_SECONDS."""
    from harness.server import Service

    with Service(scratch_database_url, tmp_path, workers=2, REQUEST_TIMEOUT_SECONDS=2) as service:
        service.start()
        address = ("127.0.0.1", service.port)
        too_large = largest_body(DEFAULTS) + 1  # serve runs with the defaults here
        for _ in range(4):  # each connection may land on either worker
            with socket.create_connection(address, timeout=5) as sock:
                sock.sendall(f"{UPLOAD}Content-Length: {too_large}\r\n\r\n".encode())
                assert answer_head(sock).startswith(b"HTTP/1.1 413 ")
        with ExitStack() as held:
            socks = []
            for _ in range(105):
                sock = held.enter_context(socket.create_connection(address, timeout=5))
                sock.sendall(f"{UPLOAD}Content-Length: 1000000\r\n\r\npart of it".encode())
                socks.append(sock)
            began = time.monotonic()
            with socket.create_connection(address, timeout=1.0) as sock:
                sock.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                assert answer_head(sock).startswith(b"HTTP/1.1 200 ")
            assert time.monotonic() - began < 1.0
            assert all(closed_within(sock, 4.0) is not None for sock in socks[:5])


@pytest.mark.slow
def test_a_thread_writing_to_a_client_that_reads_nothing_is_freed(make_app):
    """Any streamed answer, not only the pack: the serving thread waits for room to write
    while its client reads nothing; after REQUEST_TIMEOUT_SECONDS the connection is
    dropped and the thread is free again."""
    app = make_app(REQUEST_TIMEOUT_SECONDS=2)
    block = b"x" * 65536

    @app.get("/endless")
    @open_route
    def endless():
        return app.response_class(block for _ in range(10_000))

    small = {"outbuf_high_watermark": 64 * 1024}
    with InProcessServer(app, threads=1, adjust=small) as server, socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((server.host, int(server.port)))
        sock.sendall(b"GET /endless HTTP/1.1\r\nHost: test\r\n\r\n")
        time.sleep(0.5)  # the one thread now waits on this client
        with pytest.raises(TimeoutError):
            health_within(server, 0.5)
        time.sleep(2.5)
        assert health_within(server, 1.0).startswith(b"HTTP/1.1 200 ")
