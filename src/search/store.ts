// The search index on disk: one SQLite database with an FTS5 table (BM25 ranking, unicode61
// tokens without diacritics). `rows` holds each record field's text once; the FTS5 table is an
// external-content index over it, written in the same statements' transaction (not by triggers,
// which cost five times as much per row). A version's rows have consecutive ids, so it leaves by
// id range without a secondary index. The file is derived data: it can always be deleted and
// built again from the stored versions, so it is written without fsync per transaction (WAL,
// synchronous=NORMAL).
//
// Every better-sqlite3 object this module makes lives as long as the process (see KEPT): on Node
// ≥ 24.19 a Database or Statement of better-sqlite3 12 collected by a garbage collection that runs
// outside JavaScript (idle or at exit) aborts the process (its destructor asserts an entered
// environment). So no statement is prepared per call: each store prepares a fixed set once, the
// query's shape is one of eight (its filters' presence), and pragmas go through exec.
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { coveringPattern } from '../protocol/scope-pattern.js'
import type { CheckedQuery } from './query.js'
import type { TextRow } from './extract.js'
import type { SearchHit } from './types.js'

export const SEARCH_DB_FILE = 'search.db'

/** Bumped when the layout changes: an index of another layout is built again. */
const LAYOUT = 2

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  scope TEXT NOT NULL,
  collected_at TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  first_row INTEGER NOT NULL DEFAULT 0,
  last_row INTEGER NOT NULL DEFAULT -1
);
CREATE INDEX IF NOT EXISTS versions_scope ON versions (scope, collected_at);
CREATE TABLE IF NOT EXISTS rows (
  id INTEGER PRIMARY KEY,
  version INTEGER NOT NULL,
  pointer TEXT NOT NULL,
  field TEXT NOT NULL,
  at TEXT,
  t INTEGER,
  text TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5 (text, content='rows', content_rowid='id', tokenize='unicode61 remove_diacritics 2');
`

export interface StoredVersion { path: string; scope: string; collectedAt: string; sha256: string }

/** A hit as the engine gives it: the snippet still holds its marks, the score is BM25's. */
export type RawHit = Omit<SearchHit, 'marks' | 'score'> & { bm25: number }

/** Marks around matched words in the engine's snippets (control characters never stored: see addRows). */
export const MARK_OPEN = '\u0002'
export const MARK_CLOSE = '\u0003'

/** Most matches a query ranks (the newest ones); an answer says when there were more. */
export const MAX_RANKED = 5000

/** Rows deleted per statement when a version leaves, so a large one never holds the thread long. */
const DELETE_CHUNK = 5000

/**
 * Every Database and Statement ever made here, never released: what is unreachable can be
 * collected, and collecting one aborts Node 24 (above). Bounded: a store holds a fixed set of
 * statements and a daemon opens a handful of stores in its life (start, rebuilds).
 */
const KEPT: unknown[] = []

function keep<T> (thing: T): T {
  KEPT.push(thing)
  return thing
}

export class SearchStore {
  readonly file: string
  readonly #db: Database.Database
  readonly #stmts: ReturnType<typeof prepare>
  /** The query statements made so far, by the filters they have (at most eight). */
  readonly #queries = new Map<string, Database.Statement>()
  /** The scopes with indexed versions (null: not known since the last change). */
  #scopes: string[] | null = null

  constructor (dir: string, opts: { mustExist?: boolean } = {}) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    this.file = join(dir, SEARCH_DB_FILE)
    this.#db = keep(new Database(this.file, { fileMustExist: opts.mustExist === true }))
    try {
      // a small page cache: the daemon's idle memory stays low whatever the index's size
      this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -8000; PRAGMA temp_store = MEMORY')
      const layout = this.#layout()
      if (layout !== null && layout !== LAYOUT) throw Object.assign(new Error(`search index layout ${layout}, expected ${LAYOUT}`), { code: 'SQLITE_CORRUPT' })
      this.#db.exec(SCHEMA)
      this.#db.exec(`INSERT OR IGNORE INTO meta (key, value) VALUES ('layout', '${LAYOUT}')`)
      this.#stmts = prepare(this.#db)
    } catch (err) {
      this.#db.close()
      throw err
    }
  }

  #layout (): number | null {
    const hasMeta = keep(this.#db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'")).get() !== undefined
    if (!hasMeta) return null
    const row = keep(this.#db.prepare("SELECT value FROM meta WHERE key = 'layout'")).get() as { value: string } | undefined
    return row === undefined ? null : Number(row.value)
  }

  close (): void {
    if (this.#db.open) this.#db.close()
  }

  /** The last change of the file index this index has followed (0: none). */
  cursor (): number {
    const row = this.#stmts.getMeta.get('seq') as { value: string } | undefined
    return row === undefined ? 0 : Number(row.value)
  }

  setCursor (seq: number): void {
    this.#stmts.setMeta.run('seq', String(seq))
  }

  version (path: string): StoredVersion | null {
    const row = this.#stmts.getVersion.get(path) as { path: string; scope: string; collected_at: string; sha256: string } | undefined
    return row === undefined ? null : { path: row.path, scope: row.scope, collectedAt: row.collected_at, sha256: row.sha256 }
  }

  /** Paths of the scope's indexed versions. */
  scopeVersions (scope: string): string[] {
    return (this.#stmts.scopeVersions.all(scope) as Array<{ path: string }>).map((r) => r.path)
  }

  /**
   * Removes a chunk of the version's rows; true when it is gone entirely (its entry too). Called
   * until true, each call a bounded amount of work.
   */
  removeVersionChunk (path: string): boolean {
    const v = this.#stmts.getRange.get(path) as { id: number; first_row: number; last_row: number } | undefined
    if (v === undefined) return true
    return this.#db.transaction(() => {
      const end = Math.min(v.last_row, v.first_row + DELETE_CHUNK - 1)
      if (end >= v.first_row) {
        this.#stmts.unindexRows.run(v.first_row, end)
        this.#stmts.deleteRows.run(v.first_row, end)
      }
      if (end >= v.last_row) { this.#stmts.deleteVersion.run(v.id); this.#scopes = null; return true }
      this.#stmts.setFirstRow.run(end + 1, v.id)
      return false
    })()
  }

  /** Starts a version (its earlier rows must be removed first); returns its id for addRows. */
  beginVersion (v: StoredVersion): number {
    // the sha256 is set by finishVersion: a half-written version is written again after a crash
    const next = ((this.#stmts.maxRow.get() as { id: number | null }).id ?? 0) + 1
    this.#scopes = null
    return Number(this.#stmts.insertVersion.run(v.path, v.scope, v.collectedAt, '', next, next - 1).lastInsertRowid)
  }

  /** Adds rows to a version begun last (its rows' ids follow each other). */
  addRows (versionId: number, rows: readonly TextRow[], timeOf: (row: TextRow) => number | null): void {
    if (rows.length === 0) return
    this.#db.transaction(() => {
      let last = 0
      for (const row of rows) {
        const text = row.text.replace(/[\u0002\u0003]/g, ' ')
        last = Number(this.#stmts.insertRow.run(versionId, row.pointer, row.field, row.at, timeOf(row), text).lastInsertRowid)
        this.#stmts.indexRow.run(last, text)
      }
      this.#stmts.setLastRow.run(last, versionId)
    })()
  }

  finishVersion (versionId: number, sha256: string, seq: number | null): void {
    this.#db.transaction(() => {
      this.#stmts.setSha.run(sha256, versionId)
      if (seq !== null) this.setCursor(seq)
    })()
  }

  counts (): { versions: number; rows: number } {
    const v = this.#stmts.countVersions.get() as { n: number }
    const r = this.#stmts.maxRow.get() as { id: number | null }
    return { versions: v.n, rows: r.id ?? 0 }
  }

  /**
   * One page of hits (limit + 1 asked, so the caller knows whether another page follows). The
   * ranking reads only the full-text index (and the rows and versions a filter needs); the
   * details and the snippet are made for the page's hits alone, each found again by its row id
   * (constrained on rows.id: FTS5 here ignores an fts.rowid constraint beside MATCH).
   */
  query (c: CheckedQuery, limit: number): { hits: RawHit[]; capped: boolean } {
    const params: Record<string, unknown> = { match: c.match }
    if (c.sinceMs !== null) params.since = c.sinceMs
    if (c.untilMs !== null) params.until = c.untilMs
    const scopes = this.#scopesFor(c)
    if (scopes !== null) {
      if (scopes.length === 0) return { hits: [], capped: false }
      params.scopes = JSON.stringify(scopes)
    }
    // BM25 over the newest MAX_RANKED matches only: a word in half the records would otherwise
    // be scored in every one of them (the engine walks matches newest first and stops there)
    params.ranked = MAX_RANKED + 1
    const candidates = this.#queryStatement(params).all(params) as Array<{ id: number; bm25: number }>
    const capped = candidates.length > MAX_RANKED
    if (capped) candidates.pop()
    candidates.sort((a, b) => a.bm25 - b.bm25 || a.id - b.id)
    const ranked = candidates.slice(c.offset, c.offset + limit)
    const hits: RawHit[] = []
    for (const { id, bm25 } of ranked) {
      const hit = this.#stmts.hitDetails.get({ match: c.match, id }) as Omit<RawHit, 'bm25'> | undefined
      if (hit !== undefined) hits.push({ ...hit, bm25 })
    }
    return { hits, capped }
  }

  /**
   * The indexed scopes a query may see and asked for (null: no scope filter). Patterns are
   * matched here, against the few distinct scopes, so the statement only compares names.
   */
  #scopesFor (c: CheckedQuery): string[] | null {
    if (c.scope === null && (c.within === null || c.within.includes('*'))) return null
    this.#scopes ??= (this.#stmts.distinctScopes.all() as Array<{ scope: string }>).map((r) => r.scope)
    return this.#scopes.filter((scope) => (c.scope === null || coveringPattern([c.scope], scope) !== null) &&
      (c.within === null || coveringPattern(c.within, scope) !== null))
  }

  /** The ranking statement for the filters present in `params`, prepared once per shape. */
  #queryStatement (params: Record<string, unknown>): Database.Statement {
    const shape = ['since', 'until', 'scopes'].filter((k) => k in params).join(',')
    let stmt = this.#queries.get(shape)
    if (stmt === undefined) {
      const where = ['fts MATCH @match']
      if ('since' in params) where.push('r.t >= @since')
      if ('until' in params) where.push('r.t < @until')
      if ('scopes' in params) where.push('v.scope IN (SELECT value FROM json_each(@scopes))')
      const joins = where.length === 1 ? '' : 'JOIN rows r ON r.id = fts.rowid JOIN versions v ON v.id = r.version'
      stmt = keep(this.#db.prepare(`SELECT fts.rowid AS id, bm25(fts) AS bm25 FROM fts ${joins}
        WHERE ${where.join(' AND ')} ORDER BY fts.rowid DESC LIMIT @ranked`))
      this.#queries.set(shape, stmt)
    }
    return stmt
  }

  /** SQLite's and FTS5's own checks; the problems found (none: intact). */
  check (): string[] {
    const problems = (this.#stmts.quickCheck.all() as Array<{ quick_check: string }>).map((r) => r.quick_check).filter((s) => s !== 'ok')
    try {
      this.#stmts.integrityCheck.run()
    } catch (err) {
      problems.push(`full-text index: ${(err as Error).message}`)
    }
    return problems
  }
}

/** The store's statements, each kept as soon as it is made (a later one failing leaves none unkept). */
function prepare (db: Database.Database) {
  const p = (sql: string): Database.Statement => keep(db.prepare(sql))
  return {
    getMeta: p('SELECT value FROM meta WHERE key = ?'),
    setMeta: p('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    getVersion: p('SELECT path, scope, collected_at, sha256 FROM versions WHERE path = ?'),
    getRange: p('SELECT id, first_row, last_row FROM versions WHERE path = ?'),
    scopeVersions: p('SELECT path FROM versions WHERE scope = ?'),
    unindexRows: p("INSERT INTO fts (fts, rowid, text) SELECT 'delete', id, text FROM rows WHERE id BETWEEN ? AND ?"),
    deleteRows: p('DELETE FROM rows WHERE id BETWEEN ? AND ?'),
    deleteVersion: p('DELETE FROM versions WHERE id = ?'),
    setFirstRow: p('UPDATE versions SET first_row = ? WHERE id = ?'),
    setLastRow: p('UPDATE versions SET last_row = ? WHERE id = ?'),
    maxRow: p('SELECT max(id) AS id FROM rows'),
    insertVersion: p('INSERT INTO versions (path, scope, collected_at, sha256, first_row, last_row) VALUES (?, ?, ?, ?, ?, ?)'),
    insertRow: p('INSERT INTO rows (version, pointer, field, at, t, text) VALUES (?, ?, ?, ?, ?, ?)'),
    indexRow: p('INSERT INTO fts (rowid, text) VALUES (?, ?)'),
    setSha: p('UPDATE versions SET sha256 = ? WHERE id = ?'),
    hitDetails: p(`SELECT v.scope, v.path, v.collected_at AS collectedAt, r.pointer, r.at, r.field,
        snippet(fts, 0, '${MARK_OPEN}', '${MARK_CLOSE}', '…', 24) AS snippet
      FROM rows r JOIN fts ON fts.rowid = r.id JOIN versions v ON v.id = r.version
      WHERE fts MATCH @match AND r.id = @id`),
    countVersions: p('SELECT count(*) AS n FROM versions'),
    distinctScopes: p('SELECT DISTINCT scope FROM versions'),
    quickCheck: p('PRAGMA quick_check'),
    integrityCheck: p("INSERT INTO fts (fts, rank) VALUES ('integrity-check', 1)")
  }
}

/** Deletes the index's files (the database and its WAL), for a rebuild. */
export function removeSearchFiles (dir: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, SEARCH_DB_FILE + suffix), { force: true })
}
