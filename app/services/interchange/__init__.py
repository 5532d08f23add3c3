"""The books as text: parse and print hledger, Beancount and CSV; import, export,
backup and restore.

plaintext         account names, amounts and fingerprints in the plain-text formats
parsed            the parsed-transaction types every parser produces
parse_journal     hledger journal -> Parsed
parse_beancount   Beancount -> Parsed
parse_csv         our CSV -> Parsed
importer          Parsed -> the books, all or nothing, rows already present skipped (by
                  content fingerprint); the browser's statement import (POST /import)
export            the books -> journal, Beancount or CSV, streamed
audit_pack        the auditor's zip for a period (export --format audit-pack), streamed
backup            every table to a file, on one snapshot
restore           a backup back into an empty database
upgrade_backup    the backup `serve` writes before it migrates books

May call: services.ledger (accounts, transactions), services.identity (users),
services.errors, clock; the store (backup's read intent); models.
"""
