"""Bank statements: the bank's own files read on the server, their lines matched,
filed by rules and reconciled (docs/statements.md).

bankfile      what every reader produces (BankFile, BankStatement, BankLine) and the
              refusals a reader raises (StatementFormatError, NotAStatement)
readers       OFX 1.x/2.x (QFX, card statements), camt.053, MT940: bytes -> BankFile
statements    upload, list, the file as uploaded, delete, reconcile from the closing
              balance
status        each line's status at upload (duplicate, match, new); a match's entry
lines         post, match or ignore lines, all or nothing, through the ledger's posting
trail         the line events (statement_line.posted, .matched, .ignored)
rules         the person's filing rules, suggestions, the preview
verify_statements  verify's replay of the statements (files, headers, lines), the
              reconciliations, the entries' bank references and the rules

Arrows: banking -> ledger (postings, reconciliation, accounts), errors, clock; the
one arrow back is ledger.verify calling verify_statements (its BankTrail fed by the
chain's walk, check and check_rules).
"""
