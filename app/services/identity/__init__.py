"""Who the caller is: users, passwords, sign-in, sessions, passkeys, bearer tokens.

users        add, list, passwd, rm (the CLI's); ending every session and token of a user
passwords    argon2 hashing and verify-with-rehash
throttle     login-failure rows per normalised email (429 with Retry-After)
sessions     the session state machine: create (half) -> elevate -> end
signin       the login and password-change flows (throttle, then argon2, then a session)
credentials  resolve(cookie, authorization) -> Principal; mint, list, revoke connections
webauthn     the four WebAuthn ceremonies over py_webauthn
passkeys     a user's passkeys: count, list, delete
token_trees  revoke a token with its descendants, or a whole refresh family

May call: services.errors, clock, crypto; services.oauth.codes and oauth.device (a
password change or removal kills the user's codes and device records); models.
"""
