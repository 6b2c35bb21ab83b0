import assert from 'node:assert/strict'
import { test } from 'node:test'
// @ts-expect-error plain-JS plugin module without a declaration file
import { fixMojibake } from '../../plugins/instagram/index.js'
import { tempDir } from '../support/tmp.js'
import { writeBothExports, writeZipExport } from './fixtures/exports.js'
import { carouselPost, instagramExportFiles, metaJson, PROFILE_PATH, singlePost, type Categories, type Layout, type ProfileSpec } from './fixtures/instagram.js'
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

const ABSENT_NOTES = [
  'no followers in this export: nothing for instagram.followers',
  'no followed accounts in this export: nothing for instagram.following',
  'no likes in this export: nothing for instagram.likes',
  'no saved posts in this export: nothing for instagram.saved',
  'no comments in this export: nothing for instagram.comments',
  'no stories in this export: nothing for instagram.stories',
  'no profile photos in this export: nothing for instagram.profilePhotos',
  'no messages/inbox/ in this export: nothing for instagram.conversations'
]

const T = 1717000000
const CATEGORIES: Categories = {
  followers: [['friend.one', T], ['zoë_ü', T + 60]],
  following: [['friend.one', T + 120], ['café.tokyo', T + 180]],
  likedPosts: [['friend.one', 'https://www.instagram.com/p/AbC123/', T + 200]],
  likedComments: [['zoë_ü', 'https://www.instagram.com/p/XyZ789/', T + 210]],
  saved: [['café.tokyo', 'https://www.instagram.com/p/SaVeD1/', T + 300]],
  comments: [['friend.one', 'Magnifique 😍 vue', T + 400]],
  reelComments: [['zoë_ü', 'lol 😂', T + 500]],
  stories: [['media/stories/202405/17900000000000020.mp4', T + 600, 'Zürich 🇨🇭'], ['media/stories/202405/17900000000000019.jpg', T + 550, '']],
  profilePhotos: [['media/profile/202405/17900000000000030.jpg', T + 700, true], ['media/profile/201901/17800000000000031.jpg', T - 100000, undefined]],
  threads: [{
    folder: 'friendone_1234567890',
    title: 'friend.one',
    participants: ['friend.one', 'Jane Dœ 🌸'],
    pages: 2,
    messages: [
      { sender_name: 'friend.one', timestamp_ms: T * 1000 + 1, content: 'Salut ! On se voit à Zürich ? 🇨🇭', is_geoblocked_for_viewer: false },
      { sender_name: 'Jane Dœ 🌸', timestamp_ms: T * 1000 + 2000, content: 'Oui 😀', reactions: [{ reaction: '❤', actor: 'friend.one' }] },
      { sender_name: 'friend.one', timestamp_ms: T * 1000 + 3000, photos: [{ uri: 'your_instagram_activity/messages/inbox/friendone_1234567890/photos/1.jpg', creation_timestamp: T }] },
      { sender_name: 'Jane Dœ 🌸', timestamp_ms: T * 1000 + 4000, share: { link: 'https://www.instagram.com/p/AbC123/', share_text: 'look', original_content_owner: 'friend.one' } },
      { sender_name: 'friend.one', timestamp_ms: T * 1000 + 5000, audio_files: [{ uri: 'your_instagram_activity/messages/inbox/friendone_1234567890/audio/2.mp4', creation_timestamp: T }], is_unsent: false }
    ]
  }]
}

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
  assert.deepEqual(fromZip.notes, ['1 post(s) without media or time skipped', ...ABSENT_NOTES])

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
  assert.deepEqual(notes, ABSENT_NOTES)
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
  assert.deepEqual(profileOnly.notes, ['no posts_1.json (content/ or media/) in this export: nothing for instagram.posts', ...ABSENT_NOTES])

  const postsOnly = await readItems(connector, await writeZipExport(dir, 'posts-only.zip', instagramExportFiles({ posts: [[]] })))
  assert.deepEqual(postsOnly.items.map((i) => [i.scope, i.data]), [['instagram.posts', { posts: [] }]])
  assert.deepEqual(postsOnly.notes, ['no personal_information.json in this export: nothing for instagram.profile', ...ABSENT_NOTES])
  await assertItemsValid(postsOnly.items)

  const empty = await readItems(connector, await writeZipExport(dir, 'empty.zip', {}))
  assert.deepEqual(empty.items, [])
  assert.equal(empty.notes.length, 2 + ABSENT_NOTES.length)

  const nameless = await readItems(connector, await writeZipExport(dir, 'nameless.zip', {
    'personal_information/personal_information/personal_information.json': metaJson({ profile_user: [{ string_map_data: { Name: { value: 'x' } } }] })
  }))
  assert.deepEqual(nameless.items, [])
  assert.deepEqual(nameless.skipped, [{ path: 'personal_information/personal_information/personal_information.json', reason: 'no username in it: nothing for instagram.profile' }])
})

test('instagram: every category of an export, in each layout (2023, 2024, 2025–2026), gives the same items', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('instagram')
  const read = async (layout: Layout): Promise<Awaited<ReturnType<typeof readItems>>> =>
    await readItems(connector, await writeZipExport(dir, `ig-${layout}.zip`, instagramExportFiles({ layout, profile: JANE, posts: [PAGE_2], categories: CATEGORIES })))
  const layouts = { 2023: await read('2023'), 2024: await read('2024'), 2025: await read('2025') }
  for (const [layout, r] of Object.entries(layouts)) {
    await assertItemsValid(r.items)
    assert.deepEqual(r.notes, [], layout)
    assert.deepEqual(r.skipped, [{ path: layout === '2023' ? 'index.html' : 'start_here.html', reason: "the export's own index page" }], layout)
    assert.deepEqual(r.items.map((i) => i.scope), ['instagram.profile', 'instagram.posts', 'instagram.followers', 'instagram.following', 'instagram.likes', 'instagram.saved', 'instagram.comments', 'instagram.stories', 'instagram.profilePhotos', 'instagram.conversations'], layout)
    assert.doesNotMatch(JSON.stringify(r.items), /latitude|48\.85|android-0123/, `${layout}: no camera, place or device data`)
  }
  const data = (layout: keyof typeof layouts, scope: string): any => layouts[layout].items.find((i) => i.scope === scope)!.data
  for (const layout of [2023, 2024, 2025] as const) {
    assert.deepEqual(data(layout, 'instagram.followers').accounts.map((a: any) => [a.username, a.since]), [['friend.one', '2024-05-29T16:26:40Z'], ['zoë_ü', '2024-05-29T16:27:40Z']], `${layout} followers`)
    assert.deepEqual(data(layout, 'instagram.following').accounts.map((a: any) => [a.username, a.since]), [['friend.one', '2024-05-29T16:28:40Z'], ['café.tokyo', '2024-05-29T16:29:40Z']], `${layout} following, username from title in 2025`)
    assert.deepEqual(data(layout, 'instagram.likes').likes.map((l: any) => [l.kind, l.owner, l.url, l.likedAt]), [
      ['post', 'friend.one', 'https://www.instagram.com/p/AbC123/', '2024-05-29T16:30:00Z'],
      ['comment', 'zoë_ü', 'https://www.instagram.com/p/XyZ789/', '2024-05-29T16:30:10Z']
    ], `${layout} likes`)
    assert.deepEqual(data(layout, 'instagram.saved'), { saved: [{ owner: 'café.tokyo', url: 'https://www.instagram.com/p/SaVeD1/', savedAt: '2024-05-29T16:31:40Z' }] })
    assert.deepEqual(data(layout, 'instagram.comments'), { comments: [
      { text: 'Magnifique 😍 vue', on: 'post', mediaOwner: 'friend.one', createdAt: '2024-05-29T16:33:20Z' },
      { text: 'lol 😂', on: 'reel', mediaOwner: 'zoë_ü', createdAt: '2024-05-29T16:35:00Z' }
    ] })
    assert.deepEqual(data(layout, 'instagram.stories'), { stories: [
      { createdAt: '2024-05-29T16:36:40Z', uri: 'media/stories/202405/17900000000000020.mp4', kind: 'video', caption: 'Zürich 🇨🇭' },
      { createdAt: '2024-05-29T16:35:50Z', uri: 'media/stories/202405/17900000000000019.jpg', kind: 'photo' }
    ] }, `${layout} stories, mojibake repaired`)
    assert.deepEqual(data(layout, 'instagram.profilePhotos'), { photos: [
      { uri: 'media/profile/202405/17900000000000030.jpg', createdAt: '2024-05-29T16:38:20Z', current: true },
      { uri: 'media/profile/201901/17800000000000031.jpg', createdAt: '2024-05-28T12:40:00Z' }
    ] }, `${layout} profile photos`)
    assert.deepEqual(data(layout, 'instagram.conversations'), data(2024, 'instagram.conversations'))
    assert.deepEqual(data(layout, 'instagram.posts'), data(2024, 'instagram.posts'), `${layout}: posts from content/ or media/`)
  }
  const dm = layouts[2025].items.find((i) => i.scope === 'instagram.conversations')!
  assert.equal(dm.collectedAt, new Date(T * 1000 + 5000).toISOString(), 'a thread is dated by its last message')
  const inboxPrefix = 'your_instagram_activity/messages/inbox/friendone_1234567890'
  assert.deepEqual(dm.data, {
    id: 'friendone_1234567890',
    folder: 'inbox',
    title: 'friend.one',
    participants: ['friend.one', 'Jane Dœ 🌸'],
    messages: [
      { sender: 'friend.one', sentAt: new Date(T * 1000 + 1).toISOString(), text: 'Salut ! On se voit à Zürich ? 🇨🇭' },
      { sender: 'Jane Dœ 🌸', sentAt: new Date(T * 1000 + 2000).toISOString(), text: 'Oui 😀', reactions: [{ reaction: '❤', actor: 'friend.one' }] },
      { sender: 'friend.one', sentAt: new Date(T * 1000 + 3000).toISOString(), attachments: [{ kind: 'photo', uri: `${inboxPrefix}/photos/1.jpg` }] },
      { sender: 'Jane Dœ 🌸', sentAt: new Date(T * 1000 + 4000).toISOString(), share: { url: 'https://www.instagram.com/p/AbC123/', text: 'look', owner: 'friend.one' } },
      { sender: 'friend.one', sentAt: new Date(T * 1000 + 5000).toISOString(), attachments: [{ kind: 'audio', uri: `${inboxPrefix}/audio/2.mp4` }] }
    ]
  }, 'two message files merged oldest first, mojibake repaired, media kept as paths')
})

test('instagram: a partial export with a broken file and an empty category imports the rest', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('instagram')
  const files = instagramExportFiles({ layout: '2025', categories: { following: CATEGORIES.following!, comments: CATEGORIES.comments! } })
  files['connections/followers_and_following/followers_1.json'] = '[{"title": "", "string_list_data": [{"href": '
  files['your_instagram_activity/saved/no-data.txt'] = 'No data'
  const r = await readItems(connector, await writeZipExport(dir, 'partial.zip', files))
  await assertItemsValid(r.items)
  assert.deepEqual(r.items.map((i) => i.scope), ['instagram.following', 'instagram.comments'])
  assert.deepEqual(r.skipped.map((s) => s.path), ['connections/followers_and_following/followers_1.json', 'start_here.html'])
  assert.match(r.skipped[0]!.reason, /is not valid JSON/)
})

test('instagram: mojibake repair leaves genuine Latin-1 and already-correct text alone', () => {
  assert.equal(fixMojibake('caf\u00c3\u00a9'), 'café')
  assert.equal(fixMojibake('\u00f0\u009f\u0098\u0081'), '😁')
  assert.equal(fixMojibake('café'), 'café', 'a lone é is not valid UTF-8, so it is real Latin-1')
  assert.equal(fixMojibake('東京 café'), '東京 café', 'characters above U+00FF mean the text was never mangled')
  assert.equal(fixMojibake('plain ascii'), 'plain ascii')
  assert.deepEqual(fixMojibake({ 'Caf\u00c3\u00a9': ['\u00e2\u0098\u0095', 1, null, true] }), { Café: ['☕', 1, null, true] })
})

test('instagram: the files it knows and leaves out say why; only unknown files are left to the import to list', async (t) => {
  const dir = await tempDir(t)
  const connector = await shippedConnector('instagram')
  const files = {
    ...instagramExportFiles({ layout: '2024', profile: JANE }),
    'ads_information/ads_and_topics/ads_viewed.json': metaJson({ impressions_history_ads_seen: [{ string_map_data: { Author: { value: 'Brand' } } }] }),
    'ads_information/instagram_ads_and_businesses/advertisers_using_your_activity_or_information.json': '{}',
    'apps_and_websites_off_of_instagram/apps_and_websites/your_activity_off_meta_technologies.json': '{}',
    'security_and_login_information/login_and_profile_creation/login_activity.json': metaJson({ account_history_login_history: [{ string_map_data: { 'IP Address': { value: '192.0.2.7' } } }] }),
    'connections/contacts/synced_contacts.json': metaJson({ contacts_contact_info: [{ string_map_data: { 'Contact Information': { value: '+33 6 00 00 00 00' } } }] }),
    'personal_information/personal_information/account_information.json': metaJson({ profile_account_insights: [{ string_map_data: { Email: { value: 'jane@example.com' } } }] }),
    'personal_information/information_about_you/locations_of_interest.json': '{}',
    'logged_information/recent_searches/account_searches.json': '{}',
    'preferences/media_settings/consents.json': '{}',
    'your_instagram_activity/story_sticker_interactions/polls.json': '{}',
    'your_instagram_activity/content/reels.json': '{}',
    'connections/followers_and_following/blocked_profiles.json': '{}',
    'your_instagram_activity/saved/saved_collections.json': '{}',
    'your_instagram_activity/messages/secret_conversations.json': '{}',
    'your_instagram_activity/hologram_posts/holograms_1.json': '{}'
  }
  const zip = await writeZipExport(dir, 'known.zip', { ...files, ...instagramExportFiles({ layout: '2024', categories: { stories: CATEGORIES.stories!, profilePhotos: CATEGORIES.profilePhotos! } }) })
  const r = await readItems(connector, zip)
  assert.deepEqual((await readItems(connector, zip)).items, r.items, 'reading the same export again gives the same items')
  assert.deepEqual(r.items.map((i) => i.scope), ['instagram.profile', 'instagram.stories', 'instagram.profilePhotos'])
  const reasons = new Map(r.skipped.map((s) => [s.path, s.reason]))
  assert.equal(reasons.get('ads_information/ads_and_topics/ads_viewed.json'), 'advertising data (ads seen and clicked, interests Meta inferred): left out')
  assert.equal(reasons.get('security_and_login_information/login_and_profile_creation/login_activity.json'), 'logins, devices and IP addresses: left out')
  assert.equal(reasons.get('connections/contacts/synced_contacts.json'), "your phone's contacts (other people's phone numbers and e-mails): left out")
  assert.equal(reasons.get('personal_information/personal_information/account_information.json'), 'account details (e-mail, phone, places Meta inferred): left out')
  assert.equal(reasons.get('your_instagram_activity/content/reels.json'), 'not imported yet')
  assert.equal(r.skipped.length, Object.keys(files).length - 3, 'every file but the profile, the photo and the unknown one (the stories and profile photos are read)')
  assert.equal(reasons.has('your_instagram_activity/hologram_posts/holograms_1.json'), false, 'an unknown file is left for the import to list as unknown')
  assert.equal(reasons.has(PROFILE_PATH), false, 'a rule never hides a file that was read')
  assert.doesNotMatch(JSON.stringify(r.items), /jane@example|192\.0\.2|\+33/)
})
