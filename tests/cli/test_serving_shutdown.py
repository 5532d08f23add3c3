"""Stopping the server closes the answers it has not sent yet (app/cli/serving.py
close_sockets, used by `serve`'s shutdown and by the in-process test server).

A file answer (send_file, as the web app's favicon) goes into the connection's output
as the open file. If the loop stops before it is sent, closing the sockets alone left
the file open until the garbage collector found it, with a ResourceWarning: a browser
test once failed on exactly that (its favicon request raced the teardown).
"""

from __future__ import annotations

import gc
import socket
import threading
import time
import warnings

import pytest
from flask import Flask, send_file
from waitress.channel import HTTPChannel

from harness.inprocess import InProcessServer
from harness.server import _ephemeral_range, free_port


def _file_app(path) -> Flask:
    app = Flask(__name__)

    @app.get("/file")
    def file():
        return send_file(path, mimetype="application/octet-stream")

    return app


def _unsent_channel(server: InProcessServer) -> HTTPChannel:
    """The connection whose answer is waiting in its output, once the worker wrote it."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for channel in list(server.map.values()):
            if isinstance(channel, HTTPChannel) and channel.total_outbufs_len > 0:
                return channel
        time.sleep(0.01)
    raise AssertionError("the answer never reached the connection's output")


def test_stopping_closes_a_file_answer_not_sent_yet(tmp_path, monkeypatch):
    path = tmp_path / "answer.bin"
    path.write_bytes(b"x" * 50_000)
    # The loop sends nothing: every answer stays in its connection's output.
    monkeypatch.setattr(HTTPChannel, "_flush_some", lambda self, do_close=True: False)
    server = InProcessServer(_file_app(path)).start()
    client = socket.create_connection((server.host, server.port), timeout=5)
    try:
        client.sendall(b"GET /file HTTP/1.1\r\nHost: test\r\n\r\n")
        channel = _unsent_channel(server)
        gc.collect()  # what earlier tests left is theirs, not this server's
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            server.stop()
            del channel
            gc.collect()
        unclosed = [w for w in caught if issubclass(w.category, ResourceWarning)]
        assert unclosed == [], [str(w.message) for w in unclosed]
        assert server.map == {}
    finally:
        client.close()


def test_a_port_already_taken_leaves_nothing_open():
    """The second app's port is taken: the first app's listener, the trigger and the
    worker threads are closed before the error reaches the caller, not left to the
    garbage collector (whose ResourceWarning would fail whichever test runs then)."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", free_port()))
    taken.listen()
    try:
        gc.collect()
        threads_before = threading.active_count()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(OSError):
                InProcessServer(
                    _file_app(__file__), _file_app(__file__), ports=[0, taken.getsockname()[1]]
                )
            gc.collect()
        unclosed = [w for w in caught if issubclass(w.category, ResourceWarning)]
        assert unclosed == [], [str(w.message) for w in unclosed]
        # Each worker leaves waitress's set before its thread returns: give them a moment.
        deadline = time.monotonic() + 5
        while threading.active_count() > threads_before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert threading.active_count() == threads_before, threading.enumerate()
    finally:
        taken.close()


def test_free_ports_come_from_below_the_ephemeral_range():
    """The kernel gives ports of its ephemeral range to outgoing connections (to
    PostgreSQL, Chromium's requests); a test server's port taken from there could be
    gone by the time the server binds it. Below the range, only a bind can take it."""
    low, _ = _ephemeral_range()
    ports = {free_port() for _ in range(50)}
    assert all(1024 <= port < low for port in ports), sorted(ports)
    assert len(ports) > 1  # chosen at random, so two servers rarely reach for one port
