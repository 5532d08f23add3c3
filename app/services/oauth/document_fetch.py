"""The guarded HTTPS GET of a client ID metadata document (metadata_documents.py says
which URLs name one, checks the document and keeps its copy; docs/oauth.md, "Client ID
metadata documents").

download(url) makes the one request; every way it cannot succeed is Unusable, with the
reason for the server log:
- https only; plain http is never fetched.
- SSRF guard: the host is resolved once and only an address that is global (not
  loopback, private, link-local, multicast, reserved, unspecified, shared, or an IPv6
  form embedding one of those) is connected to; the TLS handshake then names the host
  (SNI) and verifies the certificate against it, and the request's Host header names
  it. The check is on the address actually connected to, so a name that resolves
  differently a moment later (DNS rebinding) changes nothing. OAUTH_CIMD_ALLOW_PRIVATE
  lifts only the address rule (tests, intranets).
- Certificates are verified against the system trust store, or the bundle named by
  SSL_CERT_FILE when it is set.
- 5 seconds in all (DNS, connect, handshake, request, response); at most 64 KiB of
  body is read; Content-Type application/json or application/*+json; 200 only, no
  redirect is followed (a 3xx is unusable).
"""

from __future__ import annotations

import http.client
import io
import ipaddress
import os
import socket
import ssl
import threading
import time
from urllib.parse import urlsplit

MAX_BYTES = 64 * 1024
TIMEOUT_SECONDS = 5.0
USER_AGENT = "ledger-service (OAuth client metadata)"
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SITE_LOCAL = ipaddress.ip_network("fec0::/10")  # deprecated (RFC 3879), never global


class Unusable(Exception):
    """Why a document cannot be used (for the server log only)."""


def download(url: str, *, allow_private: bool) -> tuple[http.client.HTTPMessage, bytes]:
    deadline = time.monotonic() + TIMEOUT_SECONDS
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or 443
    target = parts.path + ("?" + parts.query if parts.query else "")
    try:
        addresses = _resolve(host, port, deadline)
        usable = [a for a in addresses if allow_private or is_public_address(a[1][0])]
        if not usable:
            shown = ", ".join(a[1][0] for a in addresses)
            raise Unusable(f"{host} has no public address ({shown}); not connecting")
        raw = _connect(usable, deadline)
        try:
            cafile = os.environ.get("SSL_CERT_FILE") or None
            context = ssl.create_default_context(cafile=cafile)
            raw.settimeout(_remaining(deadline))
            tls = context.wrap_socket(raw, server_hostname=host)  # SNI + hostname check
        except BaseException:
            raw.close()
            raise
        connection = http.client.HTTPSConnection(host, port)
        connection.sock = _DeadlineSocket(tls, deadline)  # connected and checked above
        try:
            connection.request(
                "GET",
                target,
                headers={"Accept": "application/json", "User-Agent": USER_AGENT},
            )
            response = connection.getresponse()
            return response.headers, _read_body(response)
        finally:
            connection.close()
            tls.close()
    except Unusable:
        raise
    except (OSError, http.client.HTTPException, ValueError, UnicodeError) as exc:
        raise Unusable(f"fetch failed: {type(exc).__name__}: {exc}") from exc


def _read_body(response: http.client.HTTPResponse) -> bytes:
    if 300 <= response.status < 400:
        raise Unusable(f"answered {response.status} (redirects are not followed)")
    if response.status != 200:
        raise Unusable(f"answered {response.status}")
    media_type = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if not _is_json_type(media_type):
        raise Unusable(f"content type {media_type!r} is not application/json")
    length = response.headers.get("Content-Length")
    if length is not None and length.strip().isdigit() and int(length) > MAX_BYTES:
        raise Unusable(f"larger than {MAX_BYTES} bytes (Content-Length {int(length)})")
    body = bytearray()
    while len(body) <= MAX_BYTES:
        chunk = response.read(MAX_BYTES + 1 - len(body))
        if not chunk:
            break
        body += chunk
    if len(body) > MAX_BYTES:
        raise Unusable(f"larger than {MAX_BYTES} bytes")
    return bytes(body)


def _is_json_type(media_type: str) -> bool:
    if media_type == "application/json":
        return True
    kind, _, subtype = media_type.partition("/")
    return kind == "application" and subtype.endswith("+json") and len(subtype) > len("+json")


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise Unusable(f"no answer within {TIMEOUT_SECONDS:g} seconds")
    return left


def _resolve(host: str, port: int, deadline: float) -> list[tuple[int, tuple]]:
    """(family, sockaddr) of every address of `host`, within the time budget."""
    found: dict = {}

    def lookup():
        try:
            found["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            found["error"] = exc

    worker = threading.Thread(target=lookup, daemon=True)  # getaddrinfo has no timeout
    worker.start()
    worker.join(_remaining(deadline))
    if worker.is_alive():
        raise Unusable(f"resolving {host} took longer than {TIMEOUT_SECONDS:g} seconds")
    if "error" in found:
        raise Unusable(f"cannot resolve {host}: {found['error']}")
    return [(family, sockaddr) for family, _, _, _, sockaddr in found["infos"]]


def _connect(addresses: list[tuple[int, tuple]], deadline: float) -> socket.socket:
    """A TCP connection to the first checked address that answers."""
    failure: OSError | None = None
    for family, sockaddr in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(_remaining(deadline))
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            failure = exc
        except BaseException:
            sock.close()
            raise
    raise Unusable(f"cannot connect: {failure}")


def is_public_address(text: str) -> bool:
    """A global unicast address, also when an IPv6 form embeds an IPv4 one."""
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv4 address written as IPv6 (mapped, or NAT64) is judged as that address.
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address in _NAT64:
            address = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _SITE_LOCAL:
        return False
    candidates: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [address]
    if isinstance(address, ipaddress.IPv6Address):  # tunnels name an IPv4 address too
        if address.sixtofour is not None:
            candidates.append(address.sixtofour)
        if address.teredo is not None:
            candidates.extend(address.teredo)
    return all(
        a.is_global
        and not (
            a.is_private
            or a.is_loopback
            or a.is_link_local
            or a.is_multicast
            or a.is_reserved
            or a.is_unspecified
        )
        for a in candidates
    )


class _DeadlineSocket:
    """The connected TLS socket as http.client uses it, every operation bounded by what
    is left of the one time budget (a server dripping bytes cannot stretch it)."""

    def __init__(self, sock: ssl.SSLSocket, deadline: float):
        self.sock = sock
        self.deadline = deadline

    def arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no answer within {TIMEOUT_SECONDS:g} seconds")
        self.sock.settimeout(left)

    def sendall(self, data) -> None:
        self.arm()
        self.sock.sendall(data)

    def makefile(self, mode: str = "rb", *args, **kwargs):
        return io.BufferedReader(_DeadlineReader(self))

    def close(self) -> None:
        """http.client closes its connection once the response holds it (Connection:
        close); the socket is closed by _download when the body has been read."""


class _DeadlineReader(io.RawIOBase):
    def __init__(self, owner: _DeadlineSocket):
        self.owner = owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self.owner.arm()
        return self.owner.sock.recv_into(buffer)
