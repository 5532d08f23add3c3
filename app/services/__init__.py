"""Every rule, query and validation, written once.

Services never touch `request`, `g` or jsonify, never commit (they flush), and
raise ServiceError subclasses. Routes, MCP tools and CLI commands adapt to them.
"""
