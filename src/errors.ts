// The one catalogue of error codes. Every failure Hearth reports (CLI, socket API, logs) carries
// one of these codes and the HTTP status it maps to. Codes are stable: clients match on them.

import { redactSecrets } from './log-redact.js'

export const ERROR_CODES = {
  // input
  INVALID_SCOPE: 400,
  INVALID_BODY: 400,
  INVALID_JSON: 400,
  JSON_TOO_DEEP: 400,         // objects/arrays nested deeper than the limit (body or dropped file)
  NUMBER_NOT_REPRESENTABLE: 400, // a number literal a double cannot hold exactly (1e400, 1e-400, 2^53+1)
  JSON_TOO_MANY_VALUES: 400,  // more object members, objects and arrays than ingest.maxJsonValues in one body or file
  INVALID_ENVELOPE: 400,
  INVALID_SCHEMA_DEFINITION: 400,
  INVALID_ARGUMENT: 400,
  INVALID_PATH: 400,
  MALFORMED_REQUEST: 400,     // refused by the HTTP parser (bad request line or headers)
  HEADERS_TOO_LARGE: 431,
  REQUEST_TIMEOUT: 408,
  SCOPE_MISMATCH: 400,
  SCHEMA_VALIDATION_FAILED: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BODY_TOO_LARGE: 413,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,             // authenticated, but this caller may not do this (origin, grant)
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  // dashboard (loopback web page)
  UI_SESSION_REQUIRED: 401,   // no live dashboard session cookie: run `hearth ui` for a login link
  HOST_NOT_ALLOWED: 403,      // Host header is not a loopback name of the dashboard (DNS rebinding)
  ORIGIN_NOT_ALLOWED: 403,    // Origin missing on a state change, or another site's (CSRF)
  // schemas
  NO_SCHEMA_FOR_SCOPE: 404,
  SCHEMA_NOT_FOUND: 404,
  SCHEMA_SCOPE_MISMATCH: 422,
  // identity and crypto
  IDENTITY_MISSING: 409,
  IDENTITY_EXISTS: 409,
  INVALID_IDENTITY: 400,
  DECRYPTION_FAILED: 422,
  // local resources
  FILE_UNREADABLE: 422,
  FILE_TOO_LARGE: 413,        // a dropped data file over ingest.maxFileBytes: rejected without being read
  EXPORT_UNREADABLE: 422,     // a platform export (zip/folder) a connector cannot read: not a zip, corrupt, unsupported
  EXPORT_TOO_LARGE: 413,      // an export entry over the size limit, or inflating past its declared size (a zip bomb)
  PATH_OUTSIDE_DATA: 400,
  DAEMON_LOCKED: 409,
  DAEMON_NOT_RUNNING: 503,
  DAEMON_STARTING: 503,        // the part a request needs is still starting (Retry-After says when to ask again)
  DAEMON_STOPPED: 503,         // the daemon was stopped while it was starting
  CONFIG_INVALID: 400,
  // remote services
  STORAGE_FULL: 507,            // the disk (data folder, blocks or index) has no space left: retried when space returns
  INDEX_CORRUPT: 503,           // the index database is damaged: `hearth doctor` repairs or rebuilds it
  STORAGE_UNAVAILABLE: 503,
  STORAGE_NOT_FOUND: 404,
  STORAGE_VERIFY_FAILED: 502,   // a backend returned other bytes or another CID than it was given
  PINNING_UNAVAILABLE: 503,     // a pinning service (pinning.services) is unreachable, timed out or failed (5xx)
  PINNING_AUTH_REFUSED: 502,    // a pinning service refused its access token (401/403): check the token file
  PINNING_BAD_RESPONSE: 502,    // a pinning service answered something that is not the Pinning Service API
  PINNING_NOT_SERVED: 502,      // a pinning service says "pinned" but its gateway did not serve the verified bytes
  DPRPC_UNAVAILABLE: 503,
  DEFINITION_UNAVAILABLE: 503,
  CHAIN_UNAVAILABLE: 503,
  CHAIN_REVERTED: 502,
  UPSTREAM_UNAVAILABLE: 503,
  UPSTREAM_BAD_RESPONSE: 502,
  UPSTREAM_AUTH_EXPIRED: 401,
  UPSTREAM_AUTH_MISSING: 401,
  PEER_REJECTED: 403,
  SYNC_PROTOCOL_ERROR: 502,
  PLUGIN_INVALID: 422,
  TIMEOUT: 504,
  // worker threads (encryption of large files)
  WORKERS_BUSY: 503,               // every worker busy and the wait queue full: try again shortly
  WORKER_FAILED: 503,              // a worker died during the job (crash, out of memory); the next job gets a new one
  // builders (docs/protocol.md §3.8): every refused signed request has its own code
  SIGNATURE_MISSING: 401,          // no Authorization: Web3Signed header
  SIGNATURE_MALFORMED: 401,        // the header, its payload or its fields are not well-formed
  SIGNATURE_INVALID: 401,          // the signature does not recover, or recovers to another key than `iss`
  SIGNATURE_WRONG_AUDIENCE: 401,   // aud is not this daemon's builders.publicUrl
  SIGNATURE_WRONG_METHOD: 401,
  SIGNATURE_WRONG_URI: 401,        // uri is not the request's path and query
  SIGNATURE_WRONG_BODY: 401,       // bodyHash is not the SHA-256 of the body
  SIGNATURE_EXPIRED: 401,
  SIGNATURE_NOT_YET_VALID: 401,    // iat in the future (beyond 60 s of clock skew)
  SIGNATURE_WINDOW_TOO_LONG: 401,  // exp - iat over 600 s
  SIGNATURE_REPLAYED: 401,
  BUILDER_NOT_REGISTERED: 403,
  GRANT_NOT_FOUND: 403,
  GRANT_WRONG_OWNER: 403,          // the grant was given by another owner
  GRANT_WRONG_BUILDER: 403,        // the grant names another builder than the signer
  GRANT_EXPIRED: 403,
  GRANT_REVOKED: 403,
  SCOPE_NOT_GRANTED: 403,          // no scope pattern of the grant covers the scope
  FILE_NOT_IN_SCOPE: 403,          // ?fileId= names a file of another (uncovered) scope
  RATE_LIMITED: 429,
  ACCESS_REQUEST_LIMIT: 429,       // too many pending access requests from one builder
  WALLET_KEY_MISSING: 409,         // signing a grant needs the owner's wallet key, not only the master signature
  // assistants (MCP connections, src/assistants/)
  ASSISTANT_NOT_APPROVED: 403,     // the connection waits for the owner's approval (`hearth requests approve <id>`)
  ASSISTANT_REVOKED: 403,          // the owner revoked (or denied) this connection
  MCP_SESSION_LIMIT: 503,          // mcp.maxSessions sessions are open: close one or wait for an idle one to expire
  INTERNAL: 500
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export class HearthError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly details?: Record<string, unknown>

  constructor (code: ErrorCode, message: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'HearthError'
    this.code = code
    this.status = ERROR_CODES[code]
    if (details !== undefined) this.details = details
  }
}

/** Whether a failure (or one of its causes) is a full disk or an exhausted quota. */
export function isDiskFull (err: unknown): boolean {
  for (let e = err, depth = 0; e !== null && e !== undefined && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof HearthError && e.code === 'STORAGE_FULL') return true
    const code = (e as { code?: unknown }).code
    if (code === 'ENOSPC' || code === 'EDQUOT') return true
    if (/no space left on device|disk quota exceeded/i.test(String((e as { message?: unknown }).message ?? ''))) return true
  }
  return false
}

/** A disk-full failure as STORAGE_FULL (other failures are returned unchanged). */
export function asStorageFull (err: unknown, what: string): unknown {
  if (!isDiskFull(err) || isHearthError(err, 'STORAGE_FULL')) return err
  return new HearthError('STORAGE_FULL', `no space left on the disk while ${what}: free some space; waiting work is retried and nothing already stored is lost`, undefined, { cause: err })
}

export function isHearthError (err: unknown, code?: ErrorCode): err is HearthError {
  return err instanceof HearthError && (code === undefined || err.code === code)
}

/** The wire shape of every error (docs/protocol.md §3.5). Unknown failures never leak their message or stack. */
export interface ErrorBody {
  error: { code: number; errorCode: string; message: string; details?: Record<string, unknown> }
}

/**
 * The HearthError a library wrapped in its own error (abstract-level wraps what a value encoding
 * throws as LEVEL_DECODE_ERROR), or `err` unchanged.
 */
export function unwrapHearthError (err: unknown): unknown {
  const cause = (err as { cause?: unknown } | null)?.cause
  if (!(err instanceof HearthError) && cause instanceof HearthError && /^LEVEL_/.test(String((err as { code?: unknown }).code))) return cause
  return err
}

export function toErrorBody (failure: unknown): ErrorBody {
  const err = unwrapHearthError(failure)
  if (err instanceof HearthError) {
    return {
      error: {
        code: err.status,
        errorCode: err.code,
        message: redactSecrets(err.message),
        ...(err.details !== undefined ? { details: err.details } : {})
      }
    }
  }
  if (isClosedDatabase(err)) {
    // a read that met the database between a close and an open: the daemon stopping, or the
    // database opened again after a failed write (db/torn-log.ts); the next try finds it open
    return { error: { code: ERROR_CODES.STORAGE_UNAVAILABLE, errorCode: 'STORAGE_UNAVAILABLE', message: 'the index database is not open for a moment (the daemon is stopping, or opening it again after a failed write): try again' } }
  }
  return { error: { code: 500, errorCode: 'INTERNAL', message: 'internal error' } }
}

/** abstract-level's refusal of an operation on a database (or iterator) that is not open. */
function isClosedDatabase (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return code === 'LEVEL_DATABASE_NOT_OPEN' || code === 'LEVEL_ITERATOR_NOT_OPEN'
}
