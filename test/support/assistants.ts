// A real daemon holding an imported ChatGPT export (the shipped connector, through `hearth import`)
// and an Instagram profile, for the assistants' tests; and the owner's steps they share.
import assert from 'node:assert/strict'
import type { TestContext } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { startDaemonProcess, runCli, NODE_ARGS, REPO_ROOT, type DaemonProcess } from './daemon.js'
import { tempDir } from './tmp.js'
import { writeFolderExport } from '../connectors/fixtures/exports.js'
import { chatgptExportFiles, simpleConversation } from '../connectors/fixtures/chatgpt.js'

export async function daemonWithHistory (t: Pick<TestContext, 'after'>, args: string[] = []): Promise<DaemonProcess> {
  const d = await startDaemonProcess(t, { args, timeoutMs: 120_000 })
  const exports = await tempDir(t, 'hearth-export-')
  const folder = await writeFolderExport(exports, 'chatgpt', chatgptExportFiles([
    simpleConversation('conv-lease', 'Flat lease questions', 1704067200, [['Can my landlord raise the rent mid-lease?', 'Usually not before the lease ends, unless the lease allows it.']]),
    simpleConversation('conv-bread', 'Sourdough starter', 1706745600, [['How often do I feed a sourdough starter?', 'Once a day at room temperature.']])
  ]))
  const imported = await runCli(d.home, ['import', 'chatgpt', folder])
  assert.equal(imported.code, 0, imported.stderr + imported.stdout)
  const profile = await d.request({ method: 'POST', path: '/v1/data/instagram.profile', body: { username: 'jane.doe', name: 'Jane' } })
  assert.equal(profile.status, 201, JSON.stringify(profile.json))
  return d
}

/** The one pending assistant request (the daemon's own list, as `hearth requests` shows it). */
export async function pendingAssistantRequest (d: DaemonProcess): Promise<{ id: string; connectionId: string; kind: string; scopes: string[] }> {
  const r = await d.request({ path: '/v1/assistants/requests' })
  assert.equal(r.status, 200, JSON.stringify(r.json))
  assert.equal(r.json.requests.length, 1, JSON.stringify(r.json))
  return r.json.requests[0]
}

/** The text of a tool call's answer. */
export function textOf (result: unknown): string {
  const content = (result as { content: Array<{ type: string; text?: string }> }).content
  return content.map((c) => c.text ?? '').join('\n')
}

/** The SDK's Client over stdio, spawning `hearth mcp` as a local assistant does; closed after the test. */
export async function stdioClient (t: Pick<TestContext, 'after'>, d: DaemonProcess, name: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...NODE_ARGS, 'mcp'],
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HEARTH_HOME: d.home.root, HEARTH_LOG_LEVEL: 'warn' },
    stderr: 'pipe'
  })
  const client = new Client({ name, version: '1.0.0' })
  await client.connect(transport)
  t.after(async () => { await client.close() })
  return client
}
