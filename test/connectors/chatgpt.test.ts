import assert from 'node:assert/strict'
import { test } from 'node:test'
// @ts-expect-error plain-JS plugin module without a declaration file
import { cleanCitations } from '../../plugins/chatgpt/citations.js'
// @ts-expect-error plain-JS plugin module without a declaration file
import { branchOf } from '../../plugins/chatgpt/tree.js'
import type { Connector } from '../../src/connectors/types.js'
import { tempDir } from '../support/tmp.js'
import { ConversationBuilder, chatgptExportFiles, simpleConversation } from './fixtures/chatgpt.js'
import { EXPORT_TIME, writeBothExports, writeZipExport } from './fixtures/exports.js'
import { assertItemsValid, readItems, shippedConnector } from './fixtures/run.js'

const T0 = 1704067200 // 2024-01-01T00:00:00Z

type Message = Record<string, unknown> & { id: string; parent?: string; text: string }
/** The branch a reader shows by default: the current message and its parents. */
const current = (data: Record<string, unknown>): Message[] => branchOf(data.messages as Message[], data.currentMessage as string | undefined)

/** A conversation with a regenerated answer, an edited prompt, tools, an image and hidden nodes. */
function branchyConversation (): Record<string, unknown> {
  const b = new ConversationBuilder({ id: 'conv-branchy', title: 'Plotting sales', createTime: T0 + 0.25, updateTime: T0 + 3600.5, model: 'gpt-4o' })
  const system = b.add(b.rootId, { role: 'system', text: '', hidden: true })
  const instructions = b.add(system, {
    role: 'user',
    content: { content_type: 'user_editable_context', user_profile: 'I am a data analyst', user_instructions: 'Be brief' },
    metadata: { is_visually_hidden_from_conversation: true, is_user_system_message: true }
  })
  const q1 = b.add(instructions, { role: 'user', text: 'Plot my sales', time: T0 + 10 })
  b.add(q1, { role: 'assistant', text: 'First answer (regenerated away)', time: T0 + 11, model: 'gpt-4o' })
  const a1 = b.add(q1, { role: 'assistant', text: 'Sure, send the CSV.', time: T0 + 12.123, model: 'gpt-4o' })
  // the user edited their second prompt: the first version stays in the tree, off the active branch
  b.chain(a1, [{ role: 'user', text: 'Here it is (old)', time: T0 + 20 }, { role: 'assistant', text: 'Old reply', time: T0 + 21 }])
  const q2 = b.add(a1, {
    role: 'user',
    time: T0 + 30,
    content: {
      content_type: 'multimodal_text',
      parts: [
        { content_type: 'image_asset_pointer', asset_pointer: 'file-service://file-Abc123', size_bytes: 12345, width: 800, height: 600, fovea: null, metadata: null },
        'Here is a screenshot of the CSV'
      ]
    }
  })
  const thinking = b.add(q2, { role: 'assistant', time: T0 + 31, content: { content_type: 'thoughts', thoughts: [{ summary: 'Reading', content: 'secret reasoning' }], source_analysis_msg_id: 'x' } })
  const code = b.add(thinking, { role: 'assistant', time: T0 + 32, recipient: 'python', model: 'gpt-4o', content: { content_type: 'code', language: 'python', text: 'import pandas as pd\ndf = pd.read_csv("sales.csv")' } })
  const output = b.add(code, { role: 'tool', name: 'python', time: T0 + 33, content: { content_type: 'execution_output', text: '   month  sales\n0  Jan    100' } })
  const empty = b.add(output, { role: 'assistant', text: '   ', time: T0 + 34 })
  const answer = b.add(empty, { role: 'assistant', text: 'Sales peaked in January.', time: T0 + 35, model: 'gpt-4o' })
  return b.build(answer)
}

function unicodeConversation (): Record<string, unknown> {
  return simpleConversation('conv-unicode', '東京旅行 🗼', T0 + 86400, [
    ['Où est la gare? 🚉 ¿Dónde? Ünïcödé', '駅はあちらです。한국어도 됩니다. مرحبا 👋🏽 e\u0301'],
    ['家族 👨‍👩‍👧‍👦 emoji ZWJ', '✅']
  ])
}

function noCurrentNodeConversation (): Record<string, unknown> {
  const b = new ConversationBuilder({ id: 'conv-nocurrent', title: '', createTime: T0 + 200000, updateTime: T0 + 200100 })
  const q = b.add(b.rootId, { role: 'user', text: 'hello' })
  b.add(q, { role: 'assistant', text: 'older regeneration' })
  b.add(q, { role: 'assistant', text: 'newest regeneration' })
  return b.build(null)
}

/** The chatgpt.conversations items only (the shared-links snapshot has its own test). */
async function conversationsOf (connector: Connector, location: string): Promise<Awaited<ReturnType<typeof readItems>>> {
  const r = await readItems(connector, location)
  return { ...r, items: r.items.filter((i) => i.scope === 'chatgpt.conversations') }
}

test('chatgpt: a realistic export, as zip and as folder, gives the whole tree of every conversation and which branch is current', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const files = chatgptExportFiles([branchyConversation(), unicodeConversation(), noCurrentNodeConversation()])
  const { zip, folder } = await writeBothExports(dir, 'chatgpt-export', files)

  const fromZip = await conversationsOf(connector, zip)
  const fromFolder = await conversationsOf(connector, folder)
  assert.deepEqual(fromFolder.items, fromZip.items, 'the zip and the unzipped folder give the same items')
  assert.equal(fromZip.exportedAt, fromFolder.exportedAt)
  assert.equal(fromZip.exportedAt, '2024-05-04T10:20:30Z')
  assert.deepEqual(fromZip.notes, [])
  await assertItemsValid(fromZip.items)

  const [branchy, unicode, nocurrent] = fromZip.items
  assert.equal(fromZip.items.length, 3)
  assert.equal(branchy!.scope, 'chatgpt.conversations')
  assert.equal(branchy!.collectedAt, '2024-01-01T01:00:00.500Z', 'dated by the conversation update_time')
  assert.equal(branchy!.label, 'Plotting sales')
  const data = branchy!.data as { id: string; title: string; createdAt: string; updatedAt: string; model: string; archived: boolean; currentMessage: string; messages: Message[] }
  assert.equal(data.id, 'conv-branchy')
  assert.equal(data.createdAt, '2024-01-01T00:00:00.250Z')
  assert.equal(data.updatedAt, '2024-01-01T01:00:00.500Z')
  assert.equal(data.model, 'gpt-4o')
  assert.equal(data.archived, false)
  assert.deepEqual(current(data).map((m) => [m.role, m.contentType, m.text]), [
    ['user', 'text', 'Plot my sales'],
    ['assistant', 'text', 'Sure, send the CSV.'],
    ['user', 'multimodal_text', 'Here is a screenshot of the CSV'],
    ['assistant', 'code', 'import pandas as pd\ndf = pd.read_csv("sales.csv")'],
    ['tool', 'execution_output', '   month  sales\n0  Jan    100'],
    ['assistant', 'text', 'Sales peaked in January.']
  ], 'the current branch: system prompt, custom instructions, hidden reasoning and empty messages are left out')
  assert.equal(data.currentMessage, 'conv-branchy-00013')
  assert.deepEqual(data.messages.map((m) => [m.id.slice(-5), m.parent?.slice(-5), m.text.slice(0, 16)]), [
    ['00003', undefined, 'Plot my sales'],
    ['00004', '00003', 'First answer (re'],
    ['00005', '00003', 'Sure, send the C'],
    ['00006', '00005', 'Here it is (old)'],
    ['00007', '00006', 'Old reply'],
    ['00008', '00005', 'Here is a screen'],
    ['00010', '00008', 'import pandas as'],
    ['00011', '00010', '   month  sales\n'],
    ['00013', '00011', 'Sales peaked in ']
  ], 'every branch is kept, each message after its parent; a hidden message\'s children hang under the message above it')
  const branch = current(data)
  assert.deepEqual(branch[1], {
    id: 'conv-branchy-00005', parent: 'conv-branchy-00003', role: 'assistant', text: 'Sure, send the CSV.', contentType: 'text', createdAt: '2024-01-01T00:00:12.123Z', model: 'gpt-4o'
  })
  assert.deepEqual(branch[2]!.attachments, [{ type: 'image', ref: 'file-service://file-Abc123', width: 800, height: 600 }])
  assert.equal(branch[3]!.language, 'python', 'a code block keeps its language')
  assert.equal(branch[4]!.name, 'python')

  const u = unicode!.data as { title: string; messages: Array<{ text: string }> }
  assert.equal(u.title, '東京旅行 🗼')
  assert.equal(u.messages[0]!.text, 'Où est la gare? 🚉 ¿Dónde? Ünïcödé')
  assert.equal(u.messages[1]!.text, '駅はあちらです。한국어도 됩니다. مرحبا 👋🏽 e\u0301')
  assert.equal(u.messages[2]!.text, '家族 👨‍👩‍👧‍👦 emoji ZWJ')

  assert.equal(nocurrent!.label, 'conv-nocurrent', 'an untitled conversation is labelled by its id')
  assert.deepEqual(current(nocurrent!.data).map((m) => m.text), ['hello', 'newest regeneration'], 'without current_node the newest branch is current')
  assert.deepEqual((nocurrent!.data.messages as Message[]).map((m) => m.text), ['hello', 'older regeneration', 'newest regeneration'])
})

test('chatgpt: reading the same export twice gives identical items (no clock in collectedAt)', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const zip = await writeZipExport(dir, 'export.zip', chatgptExportFiles([branchyConversation(), unicodeConversation()]))
  const first = await conversationsOf(connector, zip)
  await new Promise((resolve) => setTimeout(resolve, 1100))
  const second = await conversationsOf(connector, zip)
  assert.deepEqual(second.items, first.items)
})

test('chatgpt: an empty export and an export without conversations.json yield nothing, the latter with a note', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')

  const empty = await writeBothExports(dir, 'empty', chatgptExportFiles([]))
  for (const path of [empty.zip, empty.folder]) {
    const r = await conversationsOf(connector, path)
    assert.deepEqual(r.items, [])
    assert.deepEqual(r.notes, [])
  }

  const missing = await writeBothExports(dir, 'missing', { 'user.json': { id: 'user-abc' }, 'chat.html': '<html></html>' })
  const r = await conversationsOf(connector, missing.zip)
  assert.deepEqual(r.items, [])
  assert.deepEqual(r.notes, ['no conversations.json in this export: nothing for chatgpt.conversations', 'no shared_conversations.json in this export: nothing for chatgpt.conversations.shared'])
  assert.deepEqual(r.skipped.map((k) => k.path), ['chat.html', 'user.json'], 'known files it does not import are listed with why')

  const nothing = await writeZipExport(dir, 'nothing.zip', {})
  const n = await conversationsOf(connector, nothing)
  assert.deepEqual(n.items, [])
  assert.equal(n.notes.length, 2)
})

test('chatgpt: a very large conversation (6,000 messages, several MB) comes through whole', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const b = new ConversationBuilder({ id: 'conv-huge', title: 'Long project log', createTime: T0, updateTime: T0 + 7 * 86400 })
  let at = b.add(b.rootId, { role: 'system', text: '', hidden: true })
  const paragraph = 'Lorem ipsum dolor sit amet — 日本語 — 🚀 '.repeat(25)
  for (let i = 0; i < 3000; i++) {
    at = b.add(at, { role: 'user', text: `question ${i}: ${paragraph}`, time: T0 + i * 10 })
    at = b.add(at, { role: 'assistant', text: `answer ${i}: ${paragraph}`, time: T0 + i * 10 + 5, model: 'gpt-4o' })
  }
  const files = chatgptExportFiles([b.build(at)])
  const size = Buffer.byteLength(JSON.stringify(files['conversations.json']))
  assert.ok(size > 5_000_000, `fixture is ${size} bytes`)
  const { zip, folder } = await writeBothExports(dir, 'huge', files)

  for (const path of [zip, folder]) {
    const { items } = await conversationsOf(connector, path)
    assert.equal(items.length, 1)
    const messages = (items[0]!.data as { messages: Array<{ role: string; text: string; createdAt: string }> }).messages
    assert.equal(messages.length, 6000)
    assert.equal(messages[0]!.text, `question 0: ${paragraph}`)
    assert.equal(messages[5999]!.text, `answer 2999: ${paragraph}`)
    assert.equal(messages[5999]!.createdAt, new Date((T0 + 29995) * 1000).toISOString())
    await assertItemsValid(items)
  }
})

test('chatgpt: damaged conversations are skipped or cut short, never loop or crash', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const cyclic = simpleConversation('conv-cycle', 'cycle', T0, [['a', 'b']]) as { mapping: Record<string, { parent: string | null }>; current_node: string }
  // the root points back at the leaf: walking parents would never end
  cyclic.mapping['conv-cycle-root']!.parent = cyclic.current_node
  const noId = { ...simpleConversation('x', 'no id', T0, [['a', 'b']]), id: undefined, conversation_id: undefined }
  const noMapping = { id: 'conv-nomap', title: 'no mapping', create_time: T0, update_time: null, current_node: 'gone' }
  const nullTimes = { ...simpleConversation('conv-notime', 'no times', T0, [['a', 'b']]), create_time: null, update_time: null }
  const files = chatgptExportFiles([cyclic, noId, noMapping, 'not a conversation', nullTimes])
  const zip = await writeZipExport(dir, 'damaged.zip', files)
  const { items, notes, exportedAt } = await conversationsOf(connector, zip)
  await assertItemsValid(items)
  assert.deepEqual(items.map((i) => (i.data as { id: string }).id), ['conv-cycle', 'conv-nomap', 'conv-notime'])
  assert.deepEqual((items[0]!.data as { messages: Array<{ text: string }> }).messages.map((m) => m.text), ['a', 'b'])
  assert.deepEqual((items[1]!.data as { messages: unknown[] }).messages, [])
  assert.equal(items[1]!.collectedAt, '2024-01-01T00:00:00.000Z', 'no update_time: dated by create_time')
  assert.equal(items[2]!.collectedAt, exportedAt, 'no times at all: dated by the export')
  assert.equal(exportedAt, EXPORT_TIME.toISOString().replace('.000Z', 'Z'))
  assert.deepEqual(notes, ['2 conversation(s) without an id skipped'])
})

test('chatgpt: a conversations.json broken part way keeps the conversations before the damage and says so', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const whole = JSON.stringify([simpleConversation('conv-1', 'one', T0, [['a', 'b']]), simpleConversation('conv-2', 'two', T0, [['c', 'd']])])
  const zip = await writeZipExport(dir, 'broken.zip', { 'conversations.json': whole.slice(0, whole.length - 40) })
  const r = await conversationsOf(connector, zip)
  assert.deepEqual(r.items.map((i) => i.data.id), ['conv-1'])
  assert.equal(r.skipped.length, 1)
  assert.match(r.skipped[0]!.reason, /conversations\.json .* is not valid JSON: .*\(the 1 record\(s\) before the damage were read\)/)

  const notList = await conversationsOf(connector, await writeZipExport(dir, 'object.zip', { 'conversations.json': { conversations: [] } }))
  assert.deepEqual(notList.skipped, [{ path: 'conversations.json', reason: 'not a list of conversations' }])
})

test('chatgpt: voice-mode transcripts are text, images, audio and uploaded files are references, reasoning stays out', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const b = new ConversationBuilder({ id: 'conv-voice', title: 'Voice chat 🎙️', createTime: T0, updateTime: T0 + 100 })
  const at = b.chain(b.rootId, [
    { role: 'system', text: '', hidden: true },
    {
      role: 'user',
      metadata: { voice_mode_message: true },
      content: { content_type: 'multimodal_text', parts: [
        { content_type: 'real_time_user_audio_video_asset_pointer', expiry_datetime: null, frames_asset_pointers: [], video_container_asset_pointer: null,
          audio_asset_pointer: { expiry_datetime: null, content_type: 'audio_asset_pointer', asset_pointer: 'sediment://file_00000000aaaa', size_bytes: 120000, format: 'wav', metadata: { start: 0, end: 3.2 } } },
        { content_type: 'audio_transcription', text: 'Quelle heure est-il à Tōkyō ?', direction: 'in', decoding_id: null }
      ] }
    },
    { role: 'assistant', model: 'gpt-4o', content: { content_type: 'thoughts', thoughts: [{ summary: 'time zones', content: 'JST is UTC+9' }], source_analysis_msg_id: 'x' } },
    { role: 'assistant', model: 'gpt-4o', content: { content_type: 'reasoning_recap', content: 'Thought for 2 seconds' } },
    {
      role: 'assistant',
      model: 'gpt-4o',
      content: { content_type: 'multimodal_text', parts: [
        { content_type: 'audio_transcription', text: 'Il est 21 h à Tokyo.', direction: 'out', decoding_id: null },
        { content_type: 'audio_asset_pointer', asset_pointer: 'sediment://file_00000000bbbb', size_bytes: 90000, format: 'wav', metadata: {} }
      ] }
    },
    {
      role: 'user',
      metadata: { attachments: [{ id: 'file-Upl0aded', name: 'facture.pdf', size: 12345, mime_type: 'application/pdf' }] },
      content: { content_type: 'multimodal_text', parts: [
        { content_type: 'image_asset_pointer', asset_pointer: 'file-service://file-Img123', size_bytes: 2000, width: 800, height: 600, fovea: 512, metadata: null },
        'Résume ce document'
      ] }
    }
  ])
  const files = { ...chatgptExportFiles([b.build(at)]), 'file-Img123-photo.png': new Uint8Array([0x89, 0x50]), 'file_00000000aaaa.wav': new Uint8Array([0x52, 0x49]) }
  const r = await conversationsOf(connector, await writeZipExport(dir, 'voice.zip', files))
  await assertItemsValid(r.items)
  const messages = (r.items[0]!.data as { messages: Array<Record<string, unknown>> }).messages.map(({ id: _id, createdAt: _t, parent: _p, ...m }) => m)
  assert.deepEqual(messages, [
    { role: 'user', text: 'Quelle heure est-il à Tōkyō ?', contentType: 'multimodal_text', attachments: [{ type: 'audio', ref: 'sediment://file_00000000aaaa' }] },
    { role: 'assistant', text: 'Il est 21 h à Tokyo.', contentType: 'multimodal_text', model: 'gpt-4o', attachments: [{ type: 'audio', ref: 'sediment://file_00000000bbbb' }] },
    { role: 'user', text: 'Résume ce document', contentType: 'multimodal_text', attachments: [{ type: 'image', ref: 'file-service://file-Img123', width: 800, height: 600 }, { type: 'file', ref: 'file-Upl0aded' }] }
  ], 'the thoughts and the reasoning recap are not there')
  assert.doesNotMatch(JSON.stringify(r.items), /JST is UTC\+9|Thought for/)
})

test('chatgpt: shared_conversations.json gives one chatgpt.conversations.shared snapshot', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const files = {
    ...chatgptExportFiles([simpleConversation('conv-1', 'one', T0, [['a', 'b']])]),
    'shared_conversations.json': [
      { id: '67a0c0de-1111-2222-3333-444455556666', conversation_id: 'conv-1', title: 'one', is_anonymous: true },
      { id: '67a0c0de-7777-8888-9999-000011112222', conversation_id: 'conv-gone', title: 'Recette du pain 🥖', is_anonymous: false },
      { id: 'no-conversation' }
    ]
  }
  const { zip, folder } = await writeBothExports(dir, 'shared', files)
  for (const location of [zip, folder]) {
    const r = await readItems(connector, location)
    await assertItemsValid(r.items)
    const shared = r.items.filter((i) => i.scope === 'chatgpt.conversations.shared')
    assert.deepEqual(shared, [{
      scope: 'chatgpt.conversations.shared',
      collectedAt: EXPORT_TIME.toISOString().replace('.000Z', 'Z'),
      label: '2 shared conversations',
      data: { shares: [
        { id: '67a0c0de-1111-2222-3333-444455556666', conversationId: 'conv-1', title: 'one', anonymous: true },
        { id: '67a0c0de-7777-8888-9999-000011112222', conversationId: 'conv-gone', title: 'Recette du pain 🥖', anonymous: false }
      ] }
    }])
  }
})

test('chatgpt: web-search answers lose their private-use citation markers and keep their sources as fields', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const b = new ConversationBuilder({ id: 'conv-search', title: 'Weather and history', createTime: T0, updateTime: T0 + 100 })
  const cite = '\uE200cite\uE202turn0search5\uE202turn0news1\uE201'
  const lost = '\uE200cite\uE202turn9search9\uE201'
  const at = b.chain(b.rootId, [
    { role: 'user', text: 'Who was Ada Lovelace, and will it rain in Paris?' },
    {
      role: 'assistant',
      model: 'gpt-4o',
      text: `\uE203\uE200entity\uE202["people","Ada Lovelace","English mathematician"]\uE201 wrote the first program.\uE204 ${cite} Rain is likely tomorrow ${lost}.\uE206\n【重要】 bring an umbrella.`,
      metadata: {
        content_references: [
          {
            matched_text: cite,
            start_idx: 80,
            end_idx: 120,
            type: 'grouped_webpages',
            alt: '([Wikipedia](https://en.wikipedia.org/wiki/Ada_Lovelace))',
            items: [
              { title: 'Ada Lovelace - Wikipedia', url: 'https://en.wikipedia.org/wiki/Ada_Lovelace', attribution: 'Wikipedia', supporting_websites: [] },
              { title: 'Météo Paris', url: 'https://meteo.example/paris', attribution: 'meteo.example' }
            ],
            safe_urls: ['https://en.wikipedia.org/wiki/Ada_Lovelace'],
            refs: [{ turn_index: 0, ref_type: 'search', ref_index: 5 }]
          },
          { matched_text: ' ', type: 'sources_footnote', sources: [{ title: 'Météo Paris (again)', url: 'https://meteo.example/paris' }, { title: 'Almanac', url: 'https://almanac.example/', attribution: 'almanac' }] },
          { matched_text: '\uE200image_group\uE202{"query":["paris rain"]}\uE201', type: 'image_v2', images: [] }
        ]
      }
    },
    { role: 'user', text: 'And older browsing?' },
    {
      role: 'tool',
      name: 'browser',
      content: { content_type: 'tether_quote', url: 'https://archive.example/ada', domain: 'archive.example', text: 'Ada wrote notes on the engine.', title: 'Ada archive', tether_id: null }
    },
    {
      role: 'assistant',
      model: 'gpt-4',
      text: 'She translated Menabrea 【11†source】 and 【{"image_fetch": {"url": "https://img.example/a.png"}}】 more.',
      metadata: { citations: [{ start_ix: 24, end_ix: 35, citation_format_type: 'tether_og', metadata: { type: 'webpage', title: 'Menabrea', url: 'https://history.example/menabrea', text: '', extra: { cited_message_idx: 11 } } }] }
    }
  ])
  const files = chatgptExportFiles([b.build(at)])
  const r = await conversationsOf(connector, await writeZipExport(dir, 'search.zip', files))
  await assertItemsValid(r.items)
  const [, answer, , quote, older] = r.items[0]!.data.messages as Array<Record<string, unknown> & { text: string }>
  assert.equal(answer!.text, 'Ada Lovelace wrote the first program. Rain is likely tomorrow.\n【重要】 bring an umbrella.', 'markers gone, the entity shown by its name, ordinary 【】 brackets kept')
  assert.deepEqual(answer!.sources, [
    { url: 'https://en.wikipedia.org/wiki/Ada_Lovelace', title: 'Ada Lovelace - Wikipedia', attribution: 'Wikipedia' },
    { url: 'https://meteo.example/paris', title: 'Météo Paris', attribution: 'meteo.example' },
    { url: 'https://almanac.example/', title: 'Almanac', attribution: 'almanac' }
  ], 'each source once; the footnote list adds the pages it alone names')
  assert.deepEqual(answer!.citations, [{ at: 37, sources: [0, 1] }])
  assert.equal(answer!.text.slice(0, 37), 'Ada Lovelace wrote the first program.', 'a citation points just after what it supports')
  assert.deepEqual(quote!.sources, [{ url: 'https://archive.example/ada', title: 'Ada archive', attribution: 'archive.example' }], 'a quoted page is a source')
  assert.equal(older!.text, 'She translated Menabrea and more.')
  assert.deepEqual(older!.sources, [{ url: 'https://history.example/menabrea', title: 'Menabrea' }])
  assert.deepEqual(older!.citations, [{ at: 23, sources: [0] }])
  assert.doesNotMatch(JSON.stringify(r.items), /[\uE200-\uE206]|†|image_fetch|jane@example\.com/)
})

test('chatgpt: a conversation with hundreds of regenerations keeps every message, and re-reading gives the same item', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('chatgpt')
  const b = new ConversationBuilder({ id: 'conv-forks', title: 'Naming things', createTime: T0, updateTime: T0 + 9999 })
  let at = b.add(b.rootId, { role: 'system', text: '', hidden: true })
  let kept = 0
  for (let turn = 0; turn < 30; turn++) {
    const q = b.add(at, { role: 'user', text: `turn ${turn}` })
    kept++
    // every answer regenerated ten times; the conversation goes on from the 4th
    const answers = Array.from({ length: 10 }, (_, i) => b.add(q, { role: 'assistant', text: `answer ${turn}.${i}`, model: 'gpt-4o' }))
    kept += 10
    at = answers[3]!
  }
  const zip = await writeZipExport(dir, 'forks.zip', chatgptExportFiles([b.build(at)]))
  const first = await conversationsOf(connector, zip)
  await assertItemsValid(first.items)
  const data = first.items[0]!.data
  assert.equal((data.messages as unknown[]).length, kept)
  assert.equal(current(data).length, 60, 'the current branch: one question and its chosen answer per turn')
  assert.deepEqual(current(data).slice(-2).map((m) => m.text), ['turn 29', 'answer 29.3'])
  const again = await conversationsOf(connector, zip)
  assert.deepEqual(again.items, first.items)
})

test('chatgpt: hostile citation text (unclosed, endless or nested markers, lookalike brackets) is cleaned without a crash', () => {
  const cases = [
    '\uE200'.repeat(100_000) + 'end',
    `\uE200cite\uE202${'a'.repeat(100_000)}`,
    '【'.repeat(50_000) + '】',
    `【${'x'.repeat(5000)}†source】 tail`,
    `\uE200entity\uE202{not json\uE201 and \uE200entity\uE202[]\uE201.`,
    '\uE203\uE204\uE205\uE206 plain'
  ]
  for (const raw of cases) {
    const r = cleanCitations(raw, { content_references: [{ matched_text: raw, type: 'grouped_webpages', items: [{ url: 'javascript:alert(1)' }, { url: `https://x.example/${'y'.repeat(5000)}` }] }, 'junk', null] })
    assert.doesNotMatch(r.text, /[\uE200-\uE206]/)
    assert.ok(r.text.length <= raw.length)
    assert.deepEqual(r.sources, [], 'only http(s) URLs of a sane length are sources')
  }
  assert.equal(cleanCitations('【重要】 【第1章】', {}).text, '【重要】 【第1章】', 'brackets in ordinary text stay')
})
