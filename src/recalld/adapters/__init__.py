"""Adapters translate the outside world (CLI, HTTP, MCP) onto :class:`MemoryService`."""
