// The search index on disk: one SQLite database with an FTS5 table (unicode61 tokens without
// diacritics). `rows` holds each record field's text once; the FTS5 table is a contentless index
// of it (the text, and the row's filter words: scope and time, see tags.ts), written in the same
// transaction (not by triggers, which cost five times as much per row). A version's rows have
// consecutive ids, so it leaves by id range without a secondary index. The file is derived data:
// it can always be deleted and built again from the stored versions, so it is written without
// fsync per transaction (WAL, synchronous=NORMAL). The engine only answers which rows match,
// newest first; ranking and snippets are find.ts's.
//
// Every better-sqlite3 object this module makes lives as long as the process (see KEPT): on Node
// ≥ 24.19 a Database or Statement of better-sqlite3 12 collected by a garbage collection that runs
// outside JavaScript (idle or at exit) aborts the process (its destructor asserts an entered
// environment). So no statement is prepared per call: each store prepares a fixed set once, and
// pragmas go through exec.
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import type { TextRow } from './extract.js'
import { rowTags } from './tags.js'

export const SEARCH_DB_FILE = 'search.db'

/** Bumped when the layout changes: an index of another layout is built again. */
const LAYOUT = 3

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
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5 (text, tags, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
`

export interface StoredVersion { path: string; scope: string; collectedAt: string; sha256: string }

/** A candidate row as find.ts reads it. */
export interface CandidateRow { id: number; version: number; pointer: string; field: string; at: string | null; t: number | null; text: string }

/** A version as a hit names it. */
export interface HitVersion { id: number; scope: string; path: string; collectedAt: string }

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
  /** The scopes with indexed versions (null: not known since the last change). */
  #scopes: string[] | null = null
  /** The version addRows adds to, and its scope (for the rows' filter words). */
  #adding: { id: number; scope: string } | null = null
  /** Earliest and latest row time indexed (ms; they only widen, a deletion leaves them). */
  #times: { min: number; max: number } | null = null

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

  /** Opens a transaction around several versions' writes (theirs become savepoints in it). */
  begin (): void {
    this.#stmts.begin.run()
  }

  commit (): void {
    if (this.#db.inTransaction) this.#stmts.commit.run()
  }

  /** Takes back what the open transaction wrote (the row times remembered are read again). */
  rollback (): void {
    if (this.#db.inTransaction) this.#stmts.rollback.run()
    this.#times = null
    this.#scopes = null
  }

  /** The digest of the search declarations this index was built with (null: not recorded). */
  declarations (): string | null {
    return (this.#stmts.getMeta.get('declarations') as { value: string } | undefined)?.value ?? null
  }

  setDeclarations (digest: string): void {
    this.#stmts.setMeta.run('declarations', digest)
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
    const id = Number(this.#stmts.insertVersion.run(v.path, v.scope, v.collectedAt, '', next, next - 1).lastInsertRowid)
    this.#adding = { id, scope: v.scope }
    return id
  }

  /** Adds rows to a version begun last (its rows' ids follow each other). */
  addRows (versionId: number, rows: readonly TextRow[], timeOf: (row: TextRow) => number | null): void {
    if (rows.length === 0) return
    const scope = this.#adding?.id === versionId ? this.#adding.scope : (this.#stmts.versionScope.get(versionId) as { scope: string }).scope
    const times = this.timeBounds() ?? { min: Infinity, max: -Infinity }
    this.#db.transaction(() => {
      let last = 0
      for (const row of rows) {
        const t = timeOf(row)
        last = Number(this.#stmts.insertRow.run(versionId, row.pointer, row.field, row.at, t, row.text).lastInsertRowid)
        this.#stmts.indexRow.run(last, row.text, rowTags(scope, t))
        if (t !== null) { times.min = Math.min(times.min, t); times.max = Math.max(times.max, t) }
      }
      this.#stmts.setLastRow.run(last, versionId)
      if (times.min <= times.max && (this.#times?.min !== times.min || this.#times.max !== times.max)) {
        this.#stmts.setMeta.run('times', JSON.stringify(times))
        this.#times = times
      }
    })()
  }

  /** Earliest and latest row time indexed (null: no row has one). */
  timeBounds (): { min: number; max: number } | null {
    if (this.#times === null) {
      const row = this.#stmts.getMeta.get('times') as { value: string } | undefined
      if (row !== undefined) this.#times = JSON.parse(row.value) as { min: number; max: number }
    }
    return this.#times === null ? null : { ...this.#times }
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

  /** The scopes with indexed versions. */
  scopes (): string[] {
    this.#scopes ??= (this.#stmts.distinctScopes.all() as Array<{ scope: string }>).map((r) => r.scope)
    return this.#scopes
  }

  /** Ids of the newest rows matching the FTS5 expression below `beforeId`, newest first. */
  matching (match: string, beforeId: number, limit: number): number[] {
    return this.#stmts.matching.all({ match, before: beforeId, limit }) as number[]
  }

  /** The rows of these ids (any order). */
  rows (ids: readonly number[]): CandidateRow[] {
    if (ids.length === 0) return []
    return this.#stmts.rowsByIds.all(JSON.stringify(ids)) as CandidateRow[]
  }

  /** The versions of these ids. */
  versions (ids: readonly number[]): HitVersion[] {
    if (ids.length === 0) return []
    return this.#stmts.versionsByIds.all(JSON.stringify(ids)) as HitVersion[]
  }

  /** The highest row id (0: none), the size the frequencies of words are estimated against. */
  lastRowId (): number {
    return (this.#stmts.maxRow.get() as { id: number | null }).id ?? 0
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
    unindexRows: p('DELETE FROM fts WHERE rowid BETWEEN ? AND ?'),
    deleteRows: p('DELETE FROM rows WHERE id BETWEEN ? AND ?'),
    deleteVersion: p('DELETE FROM versions WHERE id = ?'),
    setFirstRow: p('UPDATE versions SET first_row = ? WHERE id = ?'),
    setLastRow: p('UPDATE versions SET last_row = ? WHERE id = ?'),
    maxRow: p('SELECT max(id) AS id FROM rows'),
    insertVersion: p('INSERT INTO versions (path, scope, collected_at, sha256, first_row, last_row) VALUES (?, ?, ?, ?, ?, ?)'),
    insertRow: p('INSERT INTO rows (version, pointer, field, at, t, text) VALUES (?, ?, ?, ?, ?, ?)'),
    indexRow: p('INSERT INTO fts (rowid, text, tags) VALUES (?, ?, ?)'),
    versionScope: p('SELECT scope FROM versions WHERE id = ?'),
    begin: p('BEGIN'),
    commit: p('COMMIT'),
    rollback: p('ROLLBACK'),
    matching: p('SELECT rowid FROM fts WHERE fts MATCH @match AND rowid < @before ORDER BY rowid DESC LIMIT @limit').pluck(),
    rowsByIds: p('SELECT id, version, pointer, field, at, t, text FROM rows WHERE id IN (SELECT value FROM json_each(?))'),
    versionsByIds: p('SELECT id, scope, path, collected_at AS collectedAt FROM versions WHERE id IN (SELECT value FROM json_each(?))'),
    setSha: p('UPDATE versions SET sha256 = ? WHERE id = ?'),
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
