// A batch of files the watcher has just seen written (a burst of dropped files) or a scan has
// found, ingested with the per-file work shared where it can be: every path's lock taken at once, their index records
// looked up in one LevelDB read, the schema an envelope names looked up once per batch; for files
// just written, each scope folder resolved once and each file read on this thread
// (readSmallDataFileSync: its pages are still cached, four system calls instead of four
// thread-pool round trips); a scan's files are stat'ed, and only a changed one is read, with that
// stat and record; then the files go through the same steps as any other (ingest-file.ts) side by
// side, so their ciphertext blocks and index records share the storage's and the index's group commits.
import { stat } from 'node:fs/promises'
import { asStorageFull } from '../errors.js'
import type { FileOrigin } from '../db/types.js'
import type { ResolvedSchema } from '../registry/types.js'
import { absoluteDataPath, classifyDataPath, resolveInsideDataSync } from './layout.js'
import { sizeAndMtime } from '../storage/file-times.js'
import { readSmallDataFileSync } from './data-file.js'
import type { PathLocks } from './path-locks.js'
import { goneFile, type DataPath, type FileIngest, type SeenFile } from './ingest-file.js'
import { JOURNAL_MAX_BYTES, type IngestDeps, type IngestResult } from './pipeline-contract.js'

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown }

/** `p`'s outcome as a value: never rejects. */
export async function settle<T> (p: Promise<T>): Promise<Settled<T>> {
  return await p.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }))
}

export interface IngestManyOptions {
  origin?: FileOrigin
  waitIfIncomplete?: boolean
  /**
   * The files were just written (the watcher saw them): read on this thread. Otherwise (a scan,
   * mostly of unchanged files whose inodes may not be cached) each is stat'ed off the thread and
   * compared with its record, and only a changed one is read.
   */
  justWritten?: boolean
}

export type IngestMany = (rels: readonly string[], opts?: IngestManyOptions) => Promise<Array<Settled<IngestResult>>>

export function createBatchIngest (ctx: { deps: IngestDeps; locks: PathLocks; maxFileBytes: number; ingestLocked: FileIngest['ingestLocked'] }): IngestMany {
  const { deps, locks, ingestLocked } = ctx
  // files read on this thread are bounded by what the journal takes (nearly every file); a
  // larger one is read by readDataFile off the main thread
  const syncReadMax = Math.min(ctx.maxFileBytes, JOURNAL_MAX_BYTES)

  /** Each scope folder's real path when it resolves inside the data folder, else null (readDataFile decides). */
  function scopeFolders (files: DataPath[]): Map<string, string | null> {
    const out = new Map<string, string | null>()
    for (const folder of new Set(files.map((f) => f.scopeFolder))) {
      try {
        out.set(folder, resolveInsideDataSync(deps.dataDir, folder))
      } catch {
        out.set(folder, null)
      }
    }
    return out
  }

  function schemaLookups (): (url: string) => Promise<ResolvedSchema | null> {
    const asked = new Map<string, Promise<ResolvedSchema | null>>()
    return async (url) => {
      let answer = asked.get(url)
      if (answer === undefined) {
        answer = deps.schemas.byDefinitionUrl?.(url).catch(() => null).then((s) => s ?? null) ?? Promise.resolve(null)
        asked.set(url, answer)
      }
      return await answer
    }
  }

  // never throws: a result or an error for each path
  return async function ingestMany (rels, opts = {}) {
    const results = new Array<Settled<IngestResult>>(rels.length)
    const files: Array<{ at: number; file: DataPath }> = []
    // a path named twice is ingested once (two locks on one path in one batch would wait on each other)
    const first = new Map<string, number>()
    const repeats: Array<{ at: number; of: number }> = []
    rels.forEach((rel, at) => {
      const cls = classifyDataPath(rel)
      const earlier = first.get(cls.rel)
      if (cls.kind !== 'data') results[at] = { ok: true, value: { outcome: 'ignored', path: cls.rel, reason: cls.reason } }
      else if (earlier !== undefined) repeats.push({ at, of: earlier })
      else { first.set(cls.rel, at); files.push({ at, file: cls }) }
    })
    if (files.length === 0) return results
    // work already running on one of these paths finishes first; nothing else starts on them until
    // each is done (a free path, nearly every one, is held at once)
    const releases: Array<() => void> = new Array(files.length)
    let busy: Array<Promise<void>> | null = null
    files.forEach(({ file }, i) => {
      const release = locks.tryAcquire(file.rel)
      if (release !== null) releases[i] = release
      else (busy ??= []).push(locks.acquire(file.rel).then((r) => { releases[i] = r }))
    })
    if (busy !== null) await Promise.all(busy)
    try {
      const paths = files.map(({ file }) => file.rel)
      const [records, folders] = await Promise.all([
        deps.index.getMany(paths),
        opts.justWritten === true ? scopeFolders(files.map(({ file }) => file)) : null
      ])
      const schemaByUrl = schemaLookups()
      await Promise.all(files.map(async ({ at, file }, i) => {
        try {
          const existing = records[i] ?? null
          if (opts.justWritten !== true) {
            // follows a symlink, as ingestLocked's stat does: the target's size and mtime change with the data
            const st = await stat(absoluteDataPath(deps.dataDir, file.rel), { bigint: true }).catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') return null; throw err })
            if (st === null) { results[at] = { ok: true, value: await goneFile(deps.index, file.rel, existing) }; return }
            if (st.isDirectory()) { results[at] = { ok: true, value: { outcome: 'ignored', path: file.rel, reason: 'a folder' } }; return }
            // a changed file: ingestLocked reads it, with the stat and record already here
            results[at] = { ok: true, value: await ingestLocked(file, opts.origin ?? 'local', opts.waitIfIncomplete === true, { existing, stat: sizeAndMtime(st), schemaByUrl }) }
            return
          }
          const real = folders!.get(file.scopeFolder) ?? null
          const read = real === null ? null : readSmallDataFileSync(real, file.name, syncReadMax)
          if (read === 'missing') { results[at] = { ok: true, value: await goneFile(deps.index, file.rel, existing) }; return }
          const seen: SeenFile | undefined = read === null ? undefined : { existing, stat: read, read, schemaByUrl }
          results[at] = { ok: true, value: await ingestLocked(file, opts.origin ?? 'local', opts.waitIfIncomplete === true, seen) }
        } catch (err) {
          // a full disk (blocks, index) is waited out like an unreachable storage backend
          results[at] = { ok: false, error: asStorageFull(err, `storing ${file.rel}`) }
        } finally {
          releases[i]!()
        }
      }))
    } catch (err) {
      // the batch's shared reads failed (a damaged index, a full disk): every file of it reports that
      for (const release of releases) release()
      for (const { at, file } of files) results[at] ??= { ok: false, error: asStorageFull(err, `storing ${file.rel}`) }
    }
    for (const { at, of } of repeats) results[at] = results[of]!
    return results
  }
}

