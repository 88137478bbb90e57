#!/usr/bin/env node
/**
 * cairn-mcp: Cairn's tool server (/api/mcp) for assistants that only speak MCP over stdio. It relays each
 * JSON-RPC message between stdin/stdout and the remote Streamable HTTP endpoint, unchanged.
 *   node clients/mcp-bridge/dist/cairn-mcp.js --url http://127.0.0.1:3000 --key cairn_… [--workspace <id>]
 * (from a clone, after `npm run clients:build`; or the package @cairn/mcp-bridge installed from its tarball)
 * (CAIRN_URL, CAIRN_API_KEY, CAIRN_WORKSPACE_ID work as well.)
 */
import { parseArgs } from 'node:util'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    key: { type: 'string' },
    workspace: { type: 'string' },
    help: { type: 'boolean', short: 'h' }
  }
})

const base = values.url ?? process.env.CAIRN_URL
const key = values.key ?? process.env.CAIRN_API_KEY
const workspace = values.workspace ?? process.env.CAIRN_WORKSPACE_ID
if (values.help || !base || !key) {
  console.error('usage: cairn-mcp --url <Cairn URL> --key <API key or JWT> [--workspace <workspace id>]')
  process.exit(values.help ? 0 : 2)
}

const endpoint = new URL(base)
if (!endpoint.pathname.replace(/\/+$/, '').endsWith('/api/mcp')) {
  endpoint.pathname = endpoint.pathname.replace(/\/+$/, '') + '/api/mcp'
}
const headers: Record<string, string> = { authorization: `Bearer ${key}` }
if (workspace) headers['x-workspace-id'] = workspace

const local = new StdioServerTransport()
const remote = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } })

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: string | number; method: string } => 'method' in m &&
  'id' in m

local.onmessage = (message) => {
  remote.send(message).catch((err: Error & { code?: number }) => {
    // a refused request (bad key, 403, server down) answers the assistant instead of hanging it
    if (isRequest(message)) void local.send({ jsonrpc: '2.0', id: message.id,
      error: { code: -32603, message: `Cairn: ${err.message}` } })
    else console.error(`cairn-mcp: ${err.message}`)
  })
}
remote.onmessage = (message) => {
  const result = (message as { result?: { protocolVersion?: unknown } }).result
  if (result && typeof result.protocolVersion === 'string') remote.setProtocolVersion(result.protocolVersion)
  void local.send(message)
}
remote.onerror = (err) => console.error(`cairn-mcp: ${err.message}`)
local.onclose = () => { void remote.close().finally(() => process.exit(0)) }

await remote.start()
await local.start()
