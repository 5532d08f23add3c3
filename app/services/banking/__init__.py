"""Bank statements: the bank's own files read on the server, their lines matched,
filed by rules and reconciled (docs/statements.md).

bankfile      what every reader produces (BankFile, BankStatement, BankLine) and the
              refusals a reader raises (StatementFormatError, NotAStatement)
readers       OFX 1.x/2.x (QFX, card statements), camt.053, MT940: bytes -> BankFile
statements    upload, status (duplicate, match, new), posting and matching lines,
              reconcile from the closing balance
rules         the person's filing rules, suggestions, the preview

Arrows: banking -> ledger (postings, reconciliation, accounts), errors, clock.
"""
