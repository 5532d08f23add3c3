"""Every rule, query and validation, written once, grouped by domain.

Services never touch `request`, `g` or jsonify, never commit (they flush), and
raise ServiceError subclasses. Routes, MCP tools and CLI commands adapt to them.

ledger/       the books: accounts, transactions, listing, register, reports, budgets,
              documents, the audit trail, verify, and the parsers they share
identity/     users, passwords, throttle, sessions, sign-in, credentials, passkeys,
              WebAuthn, token trees
oauth/        the authorization server, one module per state machine
interchange/  plain-text parse/print, import, export, the audit pack, backup, restore
errors        the ServiceError tree (imports none of the packages)
clock         the injectable clock (app.config['CLOCK'])
crypto        tokens with a visible prefix, their digests, constant-time comparison

Arrows run one way: routes/mcp/cli -> services -> store -> models. Within
services: interchange -> ledger, identity; oauth -> identity (token trees only);
identity.users -> oauth (codes, device: a password change kills both); every
package -> errors, clock, crypto.
"""
