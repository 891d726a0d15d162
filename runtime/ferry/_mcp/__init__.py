"""``ferry mcp``: the admin dashboard's screens and actions as MCP tools."""

from ferry._mcp.tools import MANAGE_TOOLS, READ_TOOLS, Backend, admin_tools

__all__ = ["MANAGE_TOOLS", "READ_TOOLS", "Backend", "admin_tools"]
