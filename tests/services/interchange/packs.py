"""Test helper: an audit pack (GET /export?format=audit-pack, `ledger-service export --format
audit-pack`) read back: its files by name, in the pack's order, the zip checked whole."""

import io
import zipfile


def read_pack(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as pack:
        assert pack.testzip() is None
        return {name: pack.read(name) for name in pack.namelist()}
