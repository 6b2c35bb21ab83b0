// @ts-check
// Reddit "Request your data" export (a zip of CSV files) → reddit.posts, reddit.comments,
// reddit.saved, reddit.votes and reddit.subscriptions.
//
// Layouts read (files found by name under any folder): the GDPR export since 2018 — posts.csv,
// comments.csv, saved_posts.csv, saved_comments.csv, post_votes.csv, comment_votes.csv,
// subscribed_subreddits.csv — with the columns Reddit has used over the years (rows.js). Later
// exports add post_headers.csv / comment_headers.csv (the same without text), messages_archive.csv
// and chat_history.csv; those and the account's files are listed as left out with the reason
// (known-files.js). Every CSV is streamed row by row.
//
// Posts and comments are event logs: one item per calendar month, oldest first, dated by its
// newest entry (held at most 20,000 at a time, handed out as the file moves past their month).
// Saved items, votes and subscriptions carry no time: snapshots dated source.exportedAt, in parts
// past 50,000 entries. The ip column of posts and comments is never read.

/** @typedef {import('../../src/connectors/types.js').ExportSource} ExportSource */
/** @typedef {import('../../src/connectors/types.js').ReadOptions} ReadOptions */
/** @typedef {import('../../src/connectors/types.js').ConnectorItem} ConnectorItem */

import { monthsAsTheyEnd, skipKnownFiles, snapshotParts, streamCsvOrSkip, text } from '../_shared/read.js'
import { KNOWN_FILES } from './known-files.js'
import { toComment, toPost, toReference, toVote } from './rows.js'

const MAX_HELD = 20_000
const PER_ITEM = 50_000

/** @param {string} name */
const csv = (name) => new RegExp(`(^|/)${name}\\.csv$`)

export default {
  /**
   * @param {ExportSource} source
   * @param {ReadOptions} opts
   * @returns {AsyncGenerator<ConnectorItem>}
   */
  async * read (source, opts) {
    yield * readLog(source, opts, { scope: 'reddit.posts', file: 'posts', key: 'posts', convert: toPost })
    yield * readLog(source, opts, { scope: 'reddit.comments', file: 'comments', key: 'comments', convert: toComment })
    yield * readSnapshot(source, opts, {
      scope: 'reddit.saved', key: 'saved', noun: 'saved items',
      files: [['saved_posts', (r) => toReference(r, 'post')], ['saved_comments', (r) => toReference(r, 'comment')]]
    })
    yield * readSnapshot(source, opts, {
      scope: 'reddit.votes', key: 'votes', noun: 'votes',
      files: [['post_votes', (r) => toVote(r, 'post')], ['comment_votes', (r) => toVote(r, 'comment')]]
    })
    yield * readSnapshot(source, opts, {
      scope: 'reddit.subscriptions', key: 'subreddits', noun: 'subreddits',
      files: [['subscribed_subreddits', (r) => text(r.subreddit?.trim()) ?? null]]
    })
    skipKnownFiles(source, opts, KNOWN_FILES)
  }
}

/**
 * @param {ExportSource} source @param {ReadOptions} opts
 * @param {{scope: string, file: string, key: string, convert: (r: Record<string, string>) => ({createdAt: string} & Record<string, unknown>) | null}} log
 * @returns {AsyncGenerator<ConnectorItem>}
 */
async function * readLog (source, opts, log) {
  const file = source.find(csv(log.file))[0]
  if (file === undefined) { opts.note(`no ${log.file}.csv in this export: nothing for ${log.scope}`); return }
  const counts = { rows: 0, unusable: 0 }
  async function * entries () {
    for await (const row of streamCsvOrSkip(source, /** @type {{path: string}} */ (file).path, opts)) {
      counts.rows++
      const entry = log.convert(row)
      if (entry === null) counts.unusable++
      else yield entry
    }
  }
  for await (const [month, list] of monthsAsTheyEnd(entries(), (e) => e.createdAt, MAX_HELD)) {
    yield { scope: log.scope, collectedAt: /** @type {string} */ (list.at(-1)?.createdAt), data: { month, [log.key]: list }, label: `${month}: ${list.length} ${log.key}` }
  }
  if (counts.rows > 0 && counts.unusable === counts.rows) opts.skip(file.path, `no row has Reddit's id, permalink, date and subreddit columns: not Reddit's ${log.file}.csv`)
  else if (counts.unusable > 0) opts.note(`${counts.unusable} row(s) of ${log.file}.csv without an id, permalink, date or subreddit left out`)
}

/**
 * @template T
 * @param {ExportSource} source @param {ReadOptions} opts
 * @param {{scope: string, key: string, noun: string, files: Array<[string, (r: Record<string, string>) => T | null]>}} snapshot
 * @returns {AsyncGenerator<ConnectorItem>}
 */
async function * readSnapshot (source, opts, snapshot) {
  const found = snapshot.files.flatMap(([name, convert]) => source.find(csv(name)).slice(0, 1).map((f) => ({ path: f.path, convert })))
  if (found.length === 0) { opts.note(`no ${snapshot.files.map(([name]) => `${name}.csv`).join(' or ')} in this export: nothing for ${snapshot.scope}`); return }
  /** @type {T[]} */
  const list = []
  let read = 0
  let unusable = 0
  for (const { path, convert } of found) {
    let broken = false
    const watched = { ...opts, skip: (/** @type {string} */ p, /** @type {string} */ reason) => { broken = true; opts.skip(p, reason) } }
    for await (const row of streamCsvOrSkip(source, path, watched)) {
      const entry = convert(row)
      if (entry === null) unusable++
      else list.push(entry)
    }
    if (!broken) read++
  }
  if (unusable > 0) opts.note(`${unusable} row(s) without an id, or with an unknown vote direction, left out of ${snapshot.scope}`)
  if (read === 0) return // every file broken: no snapshot saying "none"
  yield * snapshotParts({ scope: snapshot.scope, collectedAt: source.exportedAt, key: snapshot.key, noun: snapshot.noun, perItem: PER_ITEM }, list)
}
