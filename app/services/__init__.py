"""Every rule, query and validation, written once, grouped by domain.

Services never touch `request`, `g` or jsonify, never commit (they flush), and
raise ServiceError subclasses. Routes, MCP tools and CLI commands adapt to them.

ledger/       accounts, transactions, reports, settings, validate, derived tables
identity/     users, passwords, throttle, sessions, sign-in, credentials, passkeys,
              WebAuthn, token trees
oauth/        the authorization server, one module per state machine
interchange/  plain-text parse/print, import, export, backup, restore
errors.py     the ServiceError tree (imports none of the packages)
clock.py, crypto.py   shared leaves: the injectable clock, token and digest helpers

Arrows run one way: routes/mcp/cli -> services -> store -> models. Within
services: interchange -> ledger, identity; oauth -> identity (token trees only);
identity.users -> oauth (codes, device: a password change kills both); every
package -> errors, clock, crypto.
"""
