"""The books: accounts, transactions, reports, settings and their shared parsers.

accounts      list_accounts, create_account
transactions  record, list and delete transactions (the balance rule at the service)
reports       account_sums (the one per-account SUM), the one sign rule, three reports
settings      the book style
validate      THE argument parsers HTTP and MCP share (dates, windows, cents, text)
audit         the hash-chained audit trail: record() one event per change
duplicates    possible_duplicates: the look-alike rule (record_transaction, import preview)
lock          the lock date: refuse_if_locked(day) before any dated change
derived       the per-day and per-month balance tables: kept, checked, rebuilt
budgets       twelve-month plans: the exact annual split, approval, the statement against one

May call: services.errors, services.clock, models, extensions. No other service package.
"""
