"""The books as text: parse and print hledger, Beancount and CSV; import, export,
backup and restore.

plaintext         account names, amounts and fingerprints in the plain-text formats
parsed            the parsed-transaction types every parser produces
parse_journal     hledger journal -> Parsed
parse_beancount   Beancount -> Parsed
parse_csv         our CSV -> Parsed
importer          Parsed -> the books, all or nothing, duplicates skipped
export            the books -> journal, Beancount or CSV, streamed
backup, restore   every table to a file on one snapshot, and back into an empty database

May call: services.ledger (accounts, transactions), services.identity (users),
services.errors, clock; the store (backup's read intent); models.
"""
