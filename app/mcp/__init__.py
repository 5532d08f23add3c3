"""The tool endpoint for AI assistants: MCP over JSON-RPC 2.0 at POST /mcp."""
