// The connector plugin contract (docs/protocol.md §2.7, 3.6). A connector is a folder `plugins/<id>/` with
// `connector.json` (ConnectorMetadata) and `index.js` whose default export is a ConnectorModule.
// A connector only READS an export and yields items; runImport hands every item to the daemon,
// which validates, encrypts and stores it like any other file. Connectors never touch storage.
import type { Logger } from '../log.js'

/** One scope a connector produces, with the words a consent screen shows for it. */
export interface ConnectorScope {
  scope: string
  label: string
  description: string
  /** Imported only when asked for by name (raw, large or very sensitive data): ReadOptions.include. */
  optional?: boolean
}

/** `connector.json` (docs/protocol.md §2.7). */
export interface ConnectorMetadata {
  connectorId: string
  displayName: string
  version: string
  scopes: ConnectorScope[]
}

/** A file inside an export, addressed by its '/'-separated path relative to the export's root. */
export interface ExportEntry {
  readonly path: string
  /** Uncompressed size in bytes. */
  readonly size: number
  /** Modification time recorded for the entry (zip header or file system), null when unknown. */
  readonly modifiedAt: Date | null
}

/** One archive, folder or file an export was opened from. */
export interface ExportPart {
  readonly kind: 'zip' | 'folder' | 'file'
  /** Absolute path. */
  readonly location: string
}

/** An entry the source will not read, or a file a connector passed over, with the reason. */
export interface SkippedEntry {
  readonly path: string
  readonly reason: string
  /** The rule a record of the file broke (JSON_TOO_DEEP, NUMBER_NOT_REPRESENTABLE, JSON_TOO_MANY_VALUES), when that was why. */
  readonly errorCode?: string
}

/**
 * Uniform read access to a platform export, whether the user points at the downloaded zip, the
 * folder it was unzipped into, a single JSON file, or several archives of one export (platforms
 * split large exports into parts): the parts' entries form one tree. Entries are read on demand:
 * a zip's central directory is read once and only the entries a connector asks for are
 * inflated, so the media in a multi-gigabyte export are never decompressed.
 */
export interface ExportSource {
  /** 'parts' when the export was opened from more than one archive, folder or file. */
  readonly kind: ExportPart['kind'] | 'parts'
  /** Absolute path of the zip, folder or file (the first one's for several parts). */
  readonly location: string
  /**
   * When the platform produced the export: the newest modification time among its entries,
   * truncated to seconds (ISO 8601 UTC, `Z`). Deterministic for one archive, and the same for the
   * folder unzipped from it (unzip restores entry times), so snapshots dated with it are not
   * duplicated by a re-import. Falls back to the archive's own mtime when no entry has a time.
   */
  readonly exportedAt: string
  /** The archives, folders or files the export was opened from, in the order given. */
  parts (): readonly ExportPart[]
  /** Every file entry (no directories, no `__MACOSX/` or `.DS_Store` noise), sorted by path. */
  entries (): readonly ExportEntry[]
  /** Entries the source refuses to read (names pointing outside the export, a second copy of a path in another part). */
  refused (): readonly SkippedEntry[]
  /** Paths of the entries read so far (by any read method), for the import's list of what it left unread. */
  opened (): ReadonlySet<string>
  /**
   * Entries matching `pattern`: a string matches a path equal to it or ending in `/<pattern>`
   * (so `conversations.json` finds it at the root or inside the export's top folder); a RegExp is
   * tested against the whole path. Shallowest paths first, then by path.
   */
  find (pattern: string | RegExp): ExportEntry[]
  /**
   * Throws NOT_FOUND for a path that is not an entry, EXPORT_UNREADABLE when it cannot be read,
   * EXPORT_TOO_LARGE over MAX_ENTRY_BYTES (or when a zip entry inflates past its declared size).
   */
  readBytes (path: string): Promise<Uint8Array>
  /** UTF-8 text, byte-order mark removed. */
  readText (path: string): Promise<string>
  /**
   * Parsed JSON; EXPORT_UNREADABLE with the entry's path when it is not valid JSON, JSON_TOO_DEEP /
   * NUMBER_NOT_REPRESENTABLE / JSON_TOO_MANY_VALUES (details.file, details.path) past the rules a
   * request body has (the count is MAX_EXPORT_FILE_VALUES for a whole file).
   */
  readJson (path: string): Promise<unknown>
  /** The entry's bytes in chunks, for files too large to hold (up to MAX_STREAM_BYTES). */
  stream (path: string): AsyncIterable<Uint8Array>
  /**
   * The values at `paths` (JSONPath subset of @streamparser/json, default `$.*`: the elements of
   * a top-level array) one by one, parsed as the entry streams in: memory holds one value at a
   * time, whatever the file's size. EXPORT_UNREADABLE when the text stops being valid JSON. Each
   * value passes the rules a request body has (depth, exact numbers, value count); one that
   * breaks them is left out and reported in the import's result, and the next one is read.
   * `jsAssignment`: the file is JavaScript assigning the JSON to a name, as X archives write
   * (`window.YTD.tweets.part0 = [...]`); the name and `=` are passed over as the bytes stream.
   */
  streamJson (path: string, opts?: { paths?: string[]; jsAssignment?: boolean }): AsyncIterable<unknown>
  close (): Promise<void>
}

/** One data file a connector wants stored: the envelope's scope, collectedAt and data (docs/protocol.md §2.3). */
export interface ConnectorItem {
  scope: string
  /**
   * ISO 8601 UTC with `Z`. Must be derived from the export (a timestamp inside it, or
   * `source.exportedAt`), never from the clock, so importing the same export twice produces the
   * same files and the daemon answers `duplicate`.
   */
  collectedAt: string
  /** The envelope's `data`: always a JSON object, valid against the scope's schema. */
  data: Record<string, unknown>
  /** Names the item in reports, e.g. a conversation's title. Optional. */
  label?: string
}

export interface ReadOptions {
  /** Something the user should know, e.g. "no YourLibrary.json in this export: nothing for spotify.savedTracks". */
  note (message: string): void
  /**
   * A file of the export the connector passed over, and why (not valid JSON, an unknown shape, a
   * file it knows holds nothing for its scopes). The import goes on; the result lists each one.
   */
  skip (path: string, reason: string): void
  logger: Logger
  /**
   * The optional scopes (`"optional": true` in connector.json) the owner asked to import
   * (`hearth import --with <scope>`). A connector reads and yields an optional scope only when it
   * is here; otherwise it says so in a note or skip reason.
   */
  include?: ReadonlySet<string>
}

/** The default export of a plugin's `index.js`. */
export interface ConnectorModule {
  read (source: ExportSource, opts: ReadOptions): AsyncIterable<ConnectorItem>
}

/** A plugin whose connector.json is valid and which has an entry file; its code not yet run. */
export interface InstalledConnector {
  readonly id: string
  readonly metadata: ConnectorMetadata
  /** Absolute path of the plugin folder. */
  readonly dir: string
  /** The entry file's name inside `dir` (index.js, index.mjs or index.ts). */
  readonly entry: string
}

/** A plugin that loaded: metadata valid and module imported. */
export interface Connector {
  readonly id: string
  readonly metadata: ConnectorMetadata
  /** Absolute path of the plugin folder. */
  readonly dir: string
  readonly module: ConnectorModule
}

export interface PluginError {
  /** The plugin folder's name. */
  id: string
  code: 'PLUGIN_INVALID'
  message: string
}

export interface ScannedConnectors {
  connectors: InstalledConnector[]
  errors: PluginError[]
}

export interface LoadedConnectors {
  connectors: Connector[]
  errors: PluginError[]
}

export type SubmitStatus = 'stored' | 'duplicate' | 'rejected' | 'waiting-schema'

export interface SubmitResult {
  status: SubmitStatus
  /** Why the daemon rejected the item (schema validation failures, one line each). */
  reasons?: string[]
  /** The daemon's error code for a rejected item. */
  errorCode?: string
  /** Where the daemon keeps the data file (absolute path), when it says. */
  path?: string
}

/**
 * How runImport hands an item to the daemon. Resolves with the daemon's verdict; rejects only when
 * the import cannot go on (daemon gone, daemon error), which stops the import.
 */
export type Submit = (item: ConnectorItem) => Promise<SubmitResult>
