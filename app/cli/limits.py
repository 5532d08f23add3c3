"""What the embedded server (waitress) accepts, and how long it waits for a client.

One set of settings for `serve` (serving.py, every worker) and the in-process test
server (harness/inprocess.py); docs/deploy.md, "Limits":

- a body larger than the largest any route accepts (config.largest_body: the JSON
  limit, or the document or statement limit plus the multipart framing) is answered
  413 from its headers, before a byte of it is read or spooled to a temporary file,
  whoever sends it (waitress's max_request_body_size, which refuses a declared length
  at or above it, and a chunked body once it grows past it), in the {error} shape as
  every other refusal (waitress's own plain-text page replaced);
- a connection is dropped once it has been idle for REQUEST_TIMEOUT_SECONDS (30): no
  byte received or sent, and no request in a serving thread; so is a request still not
  received whole that long after its first byte (a trickle of a byte every few seconds
  keeps a connection busy but not alive), and an answer its client has read nothing of
  for that long while a serving thread waits for room to write it. waitress alone
  drops only the first kind, after 120 s, and a dropped channel waited for a socket
  that could take more bytes: a client that reads nothing never gave it one;
- a serving thread never waits for a client to read bytes of a file handed to the
  server whole (wsgi.file_wrapper: the audit pack), not even before taking a second
  request the client pipelined behind the first;
- up to CONNECTION_LIMIT connections (waitress's default is 100: a hundred held-open
  uploads locked everyone else out, GET /health included), watched with poll(2),
  which has no 1024-descriptor ceiling as select(2) has.
"""

from __future__ import annotations

import logging
import time
from functools import partial

from ..config import DEFAULTS, largest_body

log = logging.getLogger(__name__)

CONNECTION_LIMIT = 1000
# How often the deadlines are checked (seconds; waitress's cleanup_interval). A
# connection is dropped between REQUEST_TIMEOUT_SECONDS - CHECK_EVERY and
# REQUEST_TIMEOUT_SECONDS after its deadline began.
CHECK_EVERY = 1


def settings(config) -> dict:
    """waitress's adjustments for an app with this config (a mapping; missing keys take
    the defaults, so a plain WSGI app served in a test gets them all)."""
    merged = {
        **DEFAULTS,
        **{key: value for key, value in dict(config).items() if value is not None},
    }
    return {
        # waitress answers 413 when the declared length is at or above this
        "max_request_body_size": largest_body(merged) + 1,
        "channel_timeout": max(1, int(merged["REQUEST_TIMEOUT_SECONDS"])),
        "cleanup_interval": CHECK_EVERY,
        "connection_limit": CONNECTION_LIMIT,
        "asyncore_use_poll": True,
    }


def open_files() -> None:
    """Raise this process's soft limit on open files (1024 under systemd's default) so
    CONNECTION_LIMIT connections, each perhaps with a spooled body, fit; never above
    the hard limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * CONNECTION_LIMIT + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        except (ValueError, OSError) as err:  # pragma: no cover - a refusing platform
            log.warning("could not raise the open-files limit to %d: %s", ceiling, err)


def guard(socket_map: dict) -> None:
    """Give every waitress server in the map the deadlines above (its maintenance, run
    by the serving loop every CHECK_EVERY seconds, and a channel that knows when its
    current request began)."""
    from waitress.server import BaseWSGIServer

    channel = _channel_class()
    for server in list(socket_map.values()):
        if isinstance(server, BaseWSGIServer):
            server.channel_class = channel
            server.maintenance = partial(_maintenance, server)


def error_message(error) -> str:
    """The sentence of the server's own refusal (waitress's Error: code, reason, body)."""
    if error.code == 413:
        return (
            "the request body is larger than the largest this service accepts "
            f"({largest_body_of(error)} bytes); nothing was read or stored"
        )
    return f"{error.reason.lower()}: {error.body}" if error.body else error.reason.lower()


def largest_body_of(error) -> str:
    """The limit waitress names in its 413 ("exceeds max_body of N": N is one above it)."""
    limit = str(error.body).rsplit(" ", 1)[-1]
    return str(int(limit) - 1) if limit.isdigit() else "the limit"


def _error_task_class():
    """waitress's answer to a request it refuses itself (a body over the limit, broken
    framing), in the service's {error} JSON shape rather than its plain-text page."""
    import orjson
    from waitress.task import ErrorTask

    class JsonErrorTask(ErrorTask):
        def execute(self):
            error = self.request.error
            body = orjson.dumps({"error": error_message(error)})
            self.status = f"{error.code} {error.reason}"
            self.response_headers.extend(
                [
                    ("Content-Type", "application/json"),
                    ("Cache-Control", "no-store"),
                    ("X-Content-Type-Options", "nosniff"),
                ]
            )
            self.set_close_on_finish()
            self.content_length = len(body)
            self.write(body)

    return JsonErrorTask


def _channel_class():
    from waitress.buffers import ReadOnlyFileBasedBuffer
    from waitress.channel import HTTPChannel

    class Channel(HTTPChannel):
        request_began = 0.0  # when the first byte of the request in progress arrived
        error_task_class = _error_task_class()

        def received(self, data):
            if self.request is None:
                self.request_began = time.time()
            return super().received(data)

        def _flush_outbufs_below_high_watermark(self):
            # A serving thread waits here, before writing more or taking a pipelined
            # request, until the client has read the output down to the watermark.
            # Bytes of a file handed over whole (wsgi.file_wrapper: the audit pack)
            # are already stored; waiting on them protects nothing and held the
            # thread for as long as a client that pipelined a second request read
            # nothing. Only the other output counts.
            handed_over = sum(
                len(buf) for buf in list(self.outbufs) if isinstance(buf, ReadOnlyFileBasedBuffer)
            )
            if self.total_outbufs_len - handed_over > self.adj.outbuf_high_watermark:
                super()._flush_outbufs_below_high_watermark()

    return Channel


def expired(channel, now: float, timeout: float, watermark: int) -> bool:
    """Whether the channel has outlived its deadline (see the module docstring)."""
    cutoff = now - max(timeout - CHECK_EVERY, timeout / 2)
    if channel.requests:  # a serving thread has it: only one stuck writing to a client
        return channel.total_outbufs_len > watermark and channel.last_activity < cutoff
    if channel.last_activity < cutoff:
        return True
    return channel.request is not None and channel.request_began < cutoff


def _maintenance(server, now: float) -> None:
    adj = server.adj
    for channel in list(server.active_channels.values()):
        if expired(channel, now, adj.channel_timeout, adj.outbuf_high_watermark):
            # Closed here, not only marked: a channel marked will_close is closed when
            # its socket can take more bytes, which one whose client reads nothing never can.
            channel.handle_close()
