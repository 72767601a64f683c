// The reference for bench/mcp: a bare stateless MCP server built with the SDK the usual way
// (Express, express.json(), a fresh McpServer + StreamableHTTPServerTransport per request, JSON
// responses) with one trivial tool. Prints its port on stdout.
// With BARE_SHARED_VALIDATOR=1 it shares one JSON Schema validator between its servers, as Loom does,
// so the bench can also show Loom's own overhead against a like-for-like bare server.
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';

const options = process.env.BARE_SHARED_VALIDATOR === '1' ? { jsonSchemaValidator: new AjvJsonSchemaValidator() } : undefined;
const app = express();
app.use(express.json({ limit: '10mb' }));
app.post('/mcp', async (req, res) => {
  const server = new McpServer({ name: 'bare', version: '0.0.0' }, options);
  server.registerTool('echo', { description: 'Echo the command', inputSchema: { topic: z.string().min(1), cmd: z.string().min(1) } },
    async ({ cmd }) => ({ content: [{ type: 'text', text: cmd }], isError: false }));
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => { void transport.close(); void server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
const srv = app.listen(0, '127.0.0.1', () => console.log(`port ${srv.address().port}`));
process.on('SIGTERM', () => { srv.closeAllConnections(); srv.close(() => process.exit(0)); });
