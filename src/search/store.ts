// The search index on disk: one SQLite database with an FTS5 table (BM25 ranking, prefix indexes
// of 2 and 3 characters, unicode61 tokens without diacritics). `rows` holds each record field's
// text once; the FTS5 table is an external-content index over it, kept in step by triggers. The
// file is derived data: it can always be deleted and built again from the stored versions, so it
// is written without fsync per transaction (WAL, synchronous=NORMAL).
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { CheckedQuery } from './query.js'
import type { TextRow } from './extract.js'

export const SEARCH_DB_FILE = 'search.db'

/** Bumped when the layout changes: an index of another layout is built again. */
const LAYOUT = 1

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS versions (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  scope TEXT NOT NULL,
  collected_at TEXT NOT NULL,
  sha256 TEXT NOT NULL
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
CREATE INDEX IF NOT EXISTS rows_version ON rows (version);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5 (text, content='rows', content_rowid='id', tokenize='unicode61 remove_diacritics 2', prefix='2 3');
CREATE TRIGGER IF NOT EXISTS rows_insert AFTER INSERT ON rows BEGIN
  INSERT INTO fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS rows_delete AFTER DELETE ON rows BEGIN
  INSERT INTO fts (fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
`

export interface StoredVersion { path: string; scope: string; collectedAt: string; sha256: string }

export interface RawHit {
  scope: string
  path: string
  collectedAt: string
  pointer: string
  at: string | null
  field: string
  snippet: string
  bm25: number
}

/** Marks around matched words in the engine's snippets (control characters never stored: see addRows). */
export const MARK_OPEN = '\u0002'
export const MARK_CLOSE = '\u0003'

/** Rows deleted per statement when a version leaves, so a large one never holds the thread long. */
const DELETE_CHUNK = 5000

export class SearchStore {
  readonly file: string
  readonly #db: Database.Database
  readonly #stmts: ReturnType<typeof prepare>

  constructor (dir: string, opts: { mustExist?: boolean } = {}) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    this.file = join(dir, SEARCH_DB_FILE)
    this.#db = new Database(this.file, { fileMustExist: opts.mustExist === true })
    try {
      this.#db.pragma('journal_mode = WAL')
      this.#db.pragma('synchronous = NORMAL')
      // a small page cache: the daemon's idle memory stays low whatever the index's size
      this.#db.pragma('cache_size = -8000')
      this.#db.pragma('temp_store = MEMORY')
      const layout = this.#layout()
      if (layout !== null && layout !== LAYOUT) throw Object.assign(new Error(`search index layout ${layout}, expected ${LAYOUT}`), { code: 'SQLITE_CORRUPT' })
      this.#db.exec(SCHEMA)
      this.#db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run('layout', String(LAYOUT))
      this.#stmts = prepare(this.#db)
    } catch (err) {
      this.#db.close()
      throw err
    }
  }

  #layout (): number | null {
    const hasMeta = this.#db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get() !== undefined
    if (!hasMeta) return null
    const row = this.#db.prepare("SELECT value FROM meta WHERE key = 'layout'").get() as { value: string } | undefined
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
    const row = this.#stmts.getVersionId.get(path) as { id: number } | undefined
    if (row === undefined) return true
    return this.#db.transaction(() => {
      const removed = this.#stmts.deleteRows.run(row.id, DELETE_CHUNK).changes
      if (removed < DELETE_CHUNK) { this.#stmts.deleteVersion.run(row.id); return true }
      return false
    })()
  }

  /** Starts a version (its earlier rows must be removed first); returns its id for addRows. */
  beginVersion (v: StoredVersion): number {
    this.#stmts.deleteVersionByPath.run(v.path)
    // the sha256 is set by finishVersion: a half-written version is written again after a crash
    return Number(this.#stmts.insertVersion.run(v.path, v.scope, v.collectedAt, '').lastInsertRowid)
  }

  addRows (versionId: number, rows: readonly TextRow[], timeOf: (row: TextRow) => number | null): void {
    this.#db.transaction(() => {
      for (const row of rows) {
        this.#stmts.insertRow.run(versionId, row.pointer, row.field, row.at, timeOf(row), row.text.replace(/[\u0002\u0003]/g, ' '))
      }
    })()
  }

  finishVersion (versionId: number, sha256: string, seq: number | null): void {
    this.#db.transaction(() => {
      this.#stmts.setSha.run(sha256, versionId)
      if (seq !== null) this.setCursor(seq)
    })()
  }

  counts (): { versions: number; rows: number } {
    const v = this.#db.prepare('SELECT count(*) AS n FROM versions').get() as { n: number }
    const r = this.#db.prepare('SELECT max(id) AS n FROM rows').get() as { n: number | null }
    return { versions: v.n, rows: r.n ?? 0 }
  }

  /** One page of hits (limit + 1 asked, so the caller knows whether another page follows). */
  query (c: CheckedQuery, limit: number): RawHit[] {
    const where: string[] = ['fts MATCH @match']
    const params: Record<string, unknown> = { match: c.match, limit, offset: c.offset }
    if (c.sinceMs !== null) { where.push('r.t >= @since'); params.since = c.sinceMs }
    if (c.untilMs !== null) { where.push('r.t < @until'); params.until = c.untilMs }
    if (c.scope !== null) where.push(patternSql([c.scope], params, 's'))
    if (c.within !== null) where.push(patternSql(c.within, params, 'w'))
    const sql = `SELECT v.scope, v.path, v.collected_at AS collectedAt, r.pointer, r.at, r.field,
        snippet(fts, 0, '${MARK_OPEN}', '${MARK_CLOSE}', '…', 24) AS snippet, bm25(fts) AS bm25
      FROM fts JOIN rows r ON r.id = fts.rowid JOIN versions v ON v.id = r.version
      WHERE ${where.join(' AND ')}
      ORDER BY bm25, r.id LIMIT @limit OFFSET @offset`
    return this.#db.prepare(sql).all(params) as RawHit[]
  }

  /** SQLite's and FTS5's own checks; the problems found (none: intact). */
  check (): string[] {
    const problems = (this.#db.pragma('quick_check') as Array<{ quick_check: string }>).map((r) => r.quick_check).filter((s) => s !== 'ok')
    try {
      this.#db.prepare("INSERT INTO fts (fts, rank) VALUES ('integrity-check', 1)").run()
    } catch (err) {
      problems.push(`full-text index: ${(err as Error).message}`)
    }
    return problems
  }
}

/** A scope pattern list as SQL over `v.scope` (exact names and `source.` prefixes, never LIKE on input). */
function patternSql (patterns: readonly string[], params: Record<string, unknown>, tag: string): string {
  if (patterns.includes('*')) return '1'
  if (patterns.length === 0) return '0'
  return '(' + patterns.map((p, i) => {
    const key = `${tag}${i}`
    if (p.endsWith('.*')) {
      // `source.` ≤ scope < `source/` ('/' follows '.'): every scope of the source
      params[`${key}lo`] = p.slice(0, -1)
      params[`${key}hi`] = p.slice(0, -2) + '/'
      return `(v.scope >= @${key}lo AND v.scope < @${key}hi)`
    }
    params[key] = p
    return `v.scope = @${key}`
  }).join(' OR ') + ')'
}

function prepare (db: Database.Database) {
  return {
    getMeta: db.prepare('SELECT value FROM meta WHERE key = ?'),
    setMeta: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    getVersion: db.prepare('SELECT path, scope, collected_at, sha256 FROM versions WHERE path = ?'),
    getVersionId: db.prepare('SELECT id FROM versions WHERE path = ?'),
    scopeVersions: db.prepare('SELECT path FROM versions WHERE scope = ?'),
    deleteRows: db.prepare('DELETE FROM rows WHERE id IN (SELECT id FROM rows WHERE version = ? LIMIT ?)'),
    deleteVersion: db.prepare('DELETE FROM versions WHERE id = ?'),
    deleteVersionByPath: db.prepare('DELETE FROM versions WHERE path = ?'),
    insertVersion: db.prepare('INSERT INTO versions (path, scope, collected_at, sha256) VALUES (?, ?, ?, ?)'),
    insertRow: db.prepare('INSERT INTO rows (version, pointer, field, at, t, text) VALUES (?, ?, ?, ?, ?, ?)'),
    setSha: db.prepare('UPDATE versions SET sha256 = ? WHERE id = ?')
  }
}

/** Deletes the index's files (the database and its WAL), for a rebuild. */
export function removeSearchFiles (dir: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, SEARCH_DB_FILE + suffix), { force: true })
}
