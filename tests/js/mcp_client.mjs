// Connects the official TypeScript MCP SDK client to a recalld MCP server,
// lists its tools, performs the calls it is given, and prints one JSON line:
//   {"tools": [{name, inputSchema}], "results": [CallToolResult, ...]}
// Usage: node mcp_client.mjs '<json config>'
//   config = {"transport": "stdio", "command": "...", "args": [...], "env": {...}, "calls": [...]}
//          | {"transport": "http", "url": "http://127.0.0.1:PORT/mcp", "calls": [...]}
//   calls  = [{"name": "remember", "arguments": {...}}, ...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const config = JSON.parse(process.argv[2]);
const transport =
  config.transport === "stdio"
    ? new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: { ...process.env, ...(config.env ?? {}) },
        stderr: "ignore",
      })
    : new StreamableHTTPClientTransport(new URL(config.url));

const client = new Client({ name: "recalld-ts-interop", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listTools();
const results = [];
for (const call of config.calls) {
  results.push(await client.callTool({ name: call.name, arguments: call.arguments }));
}
await client.close();
process.stdout.write(
  JSON.stringify({
    tools: listed.tools.map((tool) => ({ name: tool.name, inputSchema: tool.inputSchema })),
    results,
  }) + "\n",
);
