"""The tool endpoint for AI assistants: MCP over JSON-RPC 2.0 at POST /mcp.

jsonrpc    the JSON-RPC 2.0 envelope: methods, tools/call, errors (handle)
revisions  what each MCP protocol revision gets, in one place
tools      the tools (TOOLS): each the twin of one HTTP handler, same service calls
"""
