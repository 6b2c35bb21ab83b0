// The search over the owner's data, as its users see it: the owner's routes and CLI, the
// dashboard's search box and the assistants' search tool all ask through this one interface, and
// know nothing of the engine behind it. A hit names one record inside one stored version.

export interface SearchQuery {
  /** The query text: words (each a prefix with a trailing `*`), "quoted phrases". */
  q: string
  /** One scope pattern the asker chose: an exact scope, `source.*` or `*` (default: every scope). */
  scope?: string
  /**
   * The patterns the asker may see at all (an assistant's grant); a hit must be covered by one of
   * them as well as by `scope`. Undefined: everything (the owner).
   */
  within?: readonly string[]
  /** Only records whose time is at or after / before this ISO 8601 instant. */
  since?: string
  until?: string
  /** Hits per page (the engine caps it). */
  limit?: number
  /** The opaque `next` of the previous page. */
  cursor?: string
}

export interface SearchHit {
  scope: string
  /** The version's file, relative to the data folder (`{scope}/{name}.json`): the index's key. */
  path: string
  /** The version's collectedAt (ISO 8601), what `GET /v1/data/{scope}?at=` takes to open it. */
  collectedAt: string
  /** JSON pointer (RFC 6901) to the record inside the envelope's `data` (`/conversations/3/messages/7`). */
  pointer: string
  /** The record's own time when it has one (ISO 8601), else null. */
  at: string | null
  /** Which field of the record matched (`text`, `title`, `artist`, …). */
  field: string
  /** A short excerpt around the match; the matched words are between `[` `]` markers given in `marks`. */
  snippet: string
  /** [start, end) offsets of the matched words in `snippet` (UTF-16 code units). */
  marks: Array<[number, number]>
  /** Higher is better (BM25, normalised so callers can compare within one answer only). */
  score: number
}

export interface SearchAnswer {
  hits: SearchHit[]
  /** Pass as `cursor` for the next page; null on the last one. */
  next: string | null
  /** False while the index is catching up with the stored versions: the answer may miss some. */
  complete: boolean
  /** Versions waiting to be indexed (0 when complete). */
  pending: number
  /**
   * True when more records match than the engine ranks (the newest 1,000 matches are ranked and
   * paged): more words, a scope or a time range find the others.
   */
  capped?: boolean
  /** How long the query took, in ms. */
  tookMs: number
}

export interface Search {
  /** INVALID_ARGUMENT (a stable code) for a query it cannot run; never throws on odd text. */
  search (query: SearchQuery): Promise<SearchAnswer>
}
