"""The books: accounts, transactions, reports, settings and their shared parsers.

accounts          list, create, rename, archive; names unique after normalisation
transactions      the write side: record (the balance rule at the service), correct
                  (`replaces`), delete; the one write path for postings
listing           GET /transactions and list_transactions: filters, keyset pages, and
                  the renderer that writes the listing's JSON text
register          one account's register: entries newest first with the running balance
search            the description index behind the listing's q filter
cursors           every pager's cursors: keyset (c1) and sequence (a1), encoded and checked
validate          THE argument parsers HTTP and MCP share (dates, windows, cents, text,
                  limit, cursor)
reports           account_sums (the one per-account SUM), the one sign rule, three reports
trends            the series: every account's change per month, quarter or year, from
                  the pieces the reports read
comparisons       `compare`: an earlier period's figures beside the income statement's
                  and the balance sheet's
settings          the book style (the one settings row)
postable          what a posting must pass (its own checks, the lock date, the accounts,
                  64-bit balances): one set for record_transaction and the import preview
lock              the lock date: refuse_if_locked(day) before any dated change
reconciliation    entries cleared, then reconciled against a statement
lookalikes        look_alikes: the look-alike hint served as possible_duplicates
                  (record_transaction's result, the import preview)
idempotency       Idempotency-Key / idempotency_key: a keyed write answered once, replayed
documents         receipts: upload, list (paged), move, delete, document_count, bytes
document_rules    what a document is held to before it is stored: the limits, the type
                  read from the bytes, the stored name
budgets           twelve-month plans: the exact annual split, lines, approval (frozen)
budget_actuals    a plan against actuals: its twelve months, last year's actuals, the
                  income statement against a budget
schedules         what is expected: schedules created, read, changed, deleted; next_due_on
schedule_occurrences  the occurrences of the schedules: GET /schedules/occurrences, the
                  actions on one (match, skip, post, reopen)
schedule_meeting  a transaction meets an open occurrence: new, existing, deleted, corrected
schedule_posting  posting by the service in mode post: at a schedule's change, post_due(today)
schedule_rules    a schedule's RFC 5545 rule: the parts taken, checked; its dates
                  (dateutil.rrule) and the weekend rule
derived           the per-day and per-month balance tables: kept, checked, rebuilt
audit/            the hash-chained audit trail (a package: actor, hashing, objects,
                  writing, reading); record() one event per change
verify            `ledger-service verify`: the trail re-walked and replayed; runs the checks
verify_trail      verify's chain walk, head and pending events, and the replay's state
verify_transactions  verify's exact comparison of the stored transactions with the trail
verify_books      verify's accounts, entry flags, settings, balance tables and budgets
verify_documents  verify's check of every document's bytes and link against the trail

May call: services.errors, services.clock, models, extensions. No other service package.
"""
