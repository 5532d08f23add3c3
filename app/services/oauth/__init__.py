"""The OAuth 2.0 authorization server: one module per flow, in RFC vocabulary.

clients   registration (RFC 7591), redirect matching, resource canonicalisation
metadata_documents  clients identified by the URL of their metadata: the URL rule,
          the document's checks, HTTP caching in the database, the limits
document_fetch  the guarded HTTPS GET of a metadata document (the SSRF guard, the
          time and size budgets)
authorize the authorization request (RFC 6749 4.1 + PKCE RFC 7636), shared by
          GET /oauth/authorize and POST /oauth/authorize/approve
codes     the authorization-code state machine
refresh   the refresh-token family state machine (rotation, reuse detection)
device    the device-record state machine (RFC 8628)
tokens    issue_pair(): access 1 h, refresh 60 d, audience = API_ORIGIN
revoke    token revocation (RFC 7009)
metadata  the two discovery documents (RFC 8414, RFC 9728)
errors    one OAuthError class per error code ({error, error_description})

May call: services.errors, clock, crypto; services.identity: token_trees (revoking a
token's tree or a refresh family) and sessions (an approval holds its session row); models.
"""
