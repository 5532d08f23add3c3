"""Test helper: a local HTTPS server for client ID metadata documents.

A throwaway certificate authority and a server certificate (for 127.0.0.1 and
localhost) are made with `cryptography`; the CA's PEM file is what the service is given
as SSL_CERT_FILE. The server runs in a thread on 127.0.0.1 and a free port, answers
each path as the test set it up (status, headers, body) and records every TCP
connection and every request it sees, so a test can assert that nothing reached it.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass
class Answer:
    status: int = 200
    headers: dict = field(default_factory=dict)
    body: bytes = b""
    content_length: bool = True  # False: no Content-Length, the body ends with the connection
    hang: threading.Event | None = None  # wait for this before answering


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, server.pem, server-key.pem): a throwaway CA and a server certificate."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(_name("ledger-service test CA"))
        .issuer_name(_name("ledger-service test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("localhost"))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = (
        folder / "ca.pem",
        folder / "server.pem",
        folder / "server-key.pem",
    )
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_file, cert_file, key_file


class DocumentServer:
    """HTTPS on 127.0.0.1: `answer(path, ...)` sets what a path returns; `requests` lists
    the paths asked for, `connections` counts TCP connections accepted."""

    def __init__(self, folder: Path):
        self.ca_file, cert_file, key_file = make_certificates(folder)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert_file, key_file)
        self.answers: dict[str, Answer] = {}
        self.requests: list[str] = []
        self.request_headers: list[dict] = []
        self.connections = 0
        self.release = threading.Event()  # set at stop(): hanging answers give up
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                self.request.do_handshake()
                super().setup()

            def do_GET(self):  # noqa: N802 - http.server's naming
                owner.requests.append(self.path)
                owner.request_headers.append(dict(self.headers))
                answer = owner.answers.get(self.path, Answer(status=404))
                if answer.hang is not None:
                    answer.hang.wait(30)
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                if answer.content_length:
                    self.send_header("Content-Length", str(len(answer.body)))
                self.send_header("Connection", "close")
                self.end_headers()
                with contextlib.suppress(OSError):  # the client stopped reading (the size cap)
                    self.wfile.write(answer.body)
                self.close_connection = True

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def get_request(self):
                sock, address = self.socket.accept()
                owner.connections += 1
                wrapped = owner.context.wrap_socket(
                    sock, server_side=True, do_handshake_on_connect=False
                )
                return wrapped, address

            def handle_error(self, request, client_address):
                pass  # a client that gave up mid-way (timeouts, refused certificates)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.origin = f"https://127.0.0.1:{self.port}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def url(self, path: str) -> str:
        return self.origin + path

    def answer(self, path: str, **kwargs) -> str:
        """Set the answer for `path`; returns its URL."""
        self.answers[path] = Answer(**kwargs)
        return self.url(path)

    def document(self, path: str, headers=None, **fields) -> str:
        """Serve a JSON document whose client_id is its own URL (unless given)."""
        url = self.url(path)
        body = json.dumps({"client_id": url, **fields}).encode()
        content_type = {"Content-Type": "application/json"}
        self.answer(path, body=body, headers={**content_type, **(headers or {})})
        return url

    def stop(self) -> None:
        self.release.set()
        for answer in self.answers.values():
            if answer.hang is not None:
                answer.hang.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


class SilentHost:
    """A TCP socket on 127.0.0.1 that accepts every connection and never sends a byte
    (a host that drops everything after the handshake): `connections` counts them."""

    def __init__(self):
        import socket

        self.listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port = self.listener.getsockname()[1]
        self.origin = f"https://127.0.0.1:{self.port}"
        self.connections = 0
        self.held: list = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        self.listener.settimeout(0.05)
        while not self.stopped.is_set():
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            self.held.append(sock)  # kept open, never answered

    def url(self, path: str) -> str:
        return self.origin + path

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)
        for sock in self.held:
            sock.close()
        self.listener.close()
