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
import time
import warnings

from flask import Flask, send_file
from waitress.channel import HTTPChannel

from harness.inprocess import InProcessServer


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
