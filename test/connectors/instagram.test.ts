import assert from 'node:assert/strict'
import { test } from 'node:test'
// @ts-expect-error plain-JS plugin module without a declaration file
import { fixMojibake } from '../../plugins/instagram/index.js'
import { tempDir } from '../support/tmp.js'
import { writeBothExports, writeZipExport } from './fixtures/exports.js'
import { carouselPost, instagramExportFiles, metaJson, singlePost, type ProfileSpec } from './fixtures/instagram.js'
import { assertItemsValid, readItems, shippedConnector } from './fixtures/run.js'

const JANE: ProfileSpec = {
  username: 'jane.doe',
  name: 'Jane Dœ 🌸',
  bio: 'Café ☕ · 東京 · Ελληνικά · مرحبا',
  website: 'https://jane.example',
  gender: 'female',
  dateOfBirth: '1990-02-03',
  private: false,
  photo: { uri: 'media/other/profile_123.jpg', createdAt: 1600000000 }
}

const PAGE_1 = [
  carouselPost([
    { uri: 'media/posts/202402/17900000000000002.jpg', createdAt: 1707000000 },
    { uri: 'media/posts/202402/17900000000000003.mp4', createdAt: 1707000001, title: 'clip 🎬' }
  ], 1707000000, 'Trip to 東京 🗼 #travel'),
  singlePost('media/posts/202401/17900000000000001.jpg', 1704100000, 'First coffee of the year ☕'),
  { media: [], title: 'a post whose media are gone', creation_timestamp: 1704000000 }
]
const PAGE_2 = [singlePost('media/posts/202312/17800000000000009.heic', 1703000000, '')]

test('instagram: profile and posts from a current-layout export, mojibake repaired, zip equal to folder', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('instagram')
  const files = instagramExportFiles({ profile: JANE, posts: [PAGE_1, PAGE_2] })
  assert.match(files['personal_information/personal_information/personal_information.json'] as string, /Jane D\\u00c5\\u0093 \\u00f0\\u009f\\u008c\\u00b8/, 'the fixture is encoded the way Meta encodes it')
  const { zip, folder } = await writeBothExports(dir, 'instagram-jane.doe-2024-05-04-AbCdEf', files)

  const fromZip = await readItems(connector, zip)
  const fromFolder = await readItems(connector, folder)
  assert.deepEqual(fromFolder.items, fromZip.items)
  await assertItemsValid(fromZip.items)
  assert.deepEqual(fromZip.notes, ['1 post(s) without media or time skipped'])

  const [profile, posts] = fromZip.items
  assert.equal(fromZip.items.length, 2)
  assert.equal(profile!.scope, 'instagram.profile')
  assert.equal(profile!.collectedAt, '2024-05-04T10:20:30Z', 'a snapshot is dated by the export')
  assert.deepEqual(profile!.data, {
    username: 'jane.doe',
    name: 'Jane Dœ 🌸',
    bio: 'Café ☕ · 東京 · Ελληνικά · مرحبا',
    website: 'https://jane.example',
    gender: 'female',
    dateOfBirth: '1990-02-03',
    private: false,
    profilePhoto: { uri: 'media/other/profile_123.jpg', createdAt: '2020-09-13T12:26:40Z' }
  }, 'contact details (email, phone) are not part of the profile scope')

  assert.equal(posts!.scope, 'instagram.posts')
  assert.equal(posts!.collectedAt, '2024-05-04T10:20:30Z')
  assert.equal(posts!.label, '3 posts')
  assert.deepEqual(posts!.data, {
    posts: [
      {
        createdAt: '2024-02-03T22:40:00Z',
        caption: 'Trip to 東京 🗼 #travel',
        media: [
          { uri: 'media/posts/202402/17900000000000002.jpg', kind: 'photo', createdAt: '2024-02-03T22:40:00Z' },
          { uri: 'media/posts/202402/17900000000000003.mp4', kind: 'video', createdAt: '2024-02-03T22:40:01Z', caption: 'clip 🎬' }
        ]
      },
      {
        createdAt: '2024-01-01T09:06:40Z',
        caption: 'First coffee of the year ☕',
        media: [{ uri: 'media/posts/202401/17900000000000001.jpg', kind: 'photo', createdAt: '2024-01-01T09:06:40Z' }]
      },
      {
        createdAt: '2023-12-19T15:33:20Z',
        media: [{ uri: 'media/posts/202312/17800000000000009.heic', kind: 'photo', createdAt: '2023-12-19T15:33:20Z' }]
      }
    ]
  }, 'newest first, captions moved to the post, location EXIF left out')
})

test('instagram: the older layout (personal_information/ and content/ at the top) is read too', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('instagram')
  const zip = await writeZipExport(dir, 'old.zip', instagramExportFiles({ profile: { username: 'old_timer' }, posts: [PAGE_2], layout: 'older' }))
  const { items, notes } = await readItems(connector, zip)
  await assertItemsValid(items)
  assert.deepEqual(notes, [])
  assert.deepEqual(items.map((i) => [i.scope, i.data]), [
    ['instagram.profile', { username: 'old_timer' }],
    ['instagram.posts', { posts: [{ createdAt: '2023-12-19T15:33:20Z', media: [{ uri: 'media/posts/202312/17800000000000009.heic', kind: 'photo', createdAt: '2023-12-19T15:33:20Z' }] }] }]
  ])
})

test('instagram: missing files yield nothing for their scope, with a note; no posts at all is an empty snapshot', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('instagram')

  const profileOnly = await readItems(connector, await writeZipExport(dir, 'profile-only.zip', instagramExportFiles({ profile: JANE })))
  assert.deepEqual(profileOnly.items.map((i) => i.scope), ['instagram.profile'])
  assert.deepEqual(profileOnly.notes, ['no content/posts_1.json in this export: nothing for instagram.posts'])

  const postsOnly = await readItems(connector, await writeZipExport(dir, 'posts-only.zip', instagramExportFiles({ posts: [[]] })))
  assert.deepEqual(postsOnly.items.map((i) => [i.scope, i.data]), [['instagram.posts', { posts: [] }]])
  assert.deepEqual(postsOnly.notes, ['no personal_information/personal_information.json in this export: nothing for instagram.profile'])
  await assertItemsValid(postsOnly.items)

  const empty = await readItems(connector, await writeZipExport(dir, 'empty.zip', {}))
  assert.deepEqual(empty.items, [])
  assert.equal(empty.notes.length, 2)

  const nameless = await readItems(connector, await writeZipExport(dir, 'nameless.zip', {
    'personal_information/personal_information/personal_information.json': metaJson({ profile_user: [{ string_map_data: { Name: { value: 'x' } } }] })
  }))
  assert.deepEqual(nameless.items, [])
  assert.match(nameless.notes[0]!, /has no username/)
})

test('instagram: mojibake repair leaves genuine Latin-1 and already-correct text alone', () => {
  assert.equal(fixMojibake('caf\u00c3\u00a9'), 'café')
  assert.equal(fixMojibake('\u00f0\u009f\u0098\u0081'), '😁')
  assert.equal(fixMojibake('café'), 'café', 'a lone é is not valid UTF-8, so it is real Latin-1')
  assert.equal(fixMojibake('東京 café'), '東京 café', 'characters above U+00FF mean the text was never mangled')
  assert.equal(fixMojibake('plain ascii'), 'plain ascii')
  assert.deepEqual(fixMojibake({ 'Caf\u00c3\u00a9': ['\u00e2\u0098\u0095', 1, null, true] }), { Café: ['☕', 1, null, true] })
})
