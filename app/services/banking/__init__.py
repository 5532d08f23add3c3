"""Bank statements: the bank's own files read on the server, their lines matched,
filed by rules and reconciled (docs/statements.md).

bankfile      what every reader produces (BankFile, BankStatement, BankLine) and the
              refusals a reader raises (StatementFormatError, NotAStatement)
readers       OFX 1.x/2.x (QFX, card statements), camt.053, MT940: bytes -> BankFile
statements    upload, list, the file as uploaded, delete, reconcile from the closing
              balance
status        each line's status at upload (duplicate, match, new); a match's entry
lines         post, match or ignore lines, all or nothing, through the ledger's posting
rules         the person's filing rules, suggestions, the preview
verify_statements  verify's check of every stored statement file and rule against the trail

Arrows: banking -> ledger (postings, reconciliation, accounts), errors, clock; the
one arrow back is ledger.verify calling verify_statements.check and check_rules.
"""
