//! folio-mcp: the MCP server over folio-core (filled by the MCP issue).
