// Credentials never reach a log line (pure). pino's redact paths hide fields by name (log.ts);
// this hides credentials inside text wherever they appear: a request target's query (the API
// token or a one-time login link's `?token=`), an `Authorization: Bearer …` value quoted in a
// message, a cookie header. The logger runs every line through redactSecrets, and the API server
// logs request targets through redactTarget, so a refused `GET /health?token=…` keeps its path;
// error messages answered to a client go through it too (errors.ts toErrorBody).

const CENSOR = '[redacted]'

/** Query parameter names whose values are credentials (lower case, `-` and `_` alike). */
const SECRET_PARAMS = ['token', 'access_token', 'refresh_token', 'id_token', 'api_key', 'apikey', 'key', 'password', 'passwd', 'secret', 'code', 'otp', 'session', 'sig', 'signature', 'auth', 'authorization', 'jwt']

const QUERY_SECRET = new RegExp(`([?&;](?:${SECRET_PARAMS.map((p) => p.replace('_', '[-_]')).join('|')})=)[^&#;\\s"'\\\\]*`, 'gi')
const SCHEME_SECRET = /\b(Bearer|Basic|Token)(\s+|%20)[A-Za-z0-9._~+/=-]{4,}/gi
/** A URL's user information (`https://user:password@host`): a Kubo or gateway URL with basic auth. */
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@"']+:[^/\s@"']+@/gi
/** A header quoted in JSON (pino's lines, pino-pretty's single-line objects). */
const HEADER_SECRET = /("(?:cookie|set-cookie|authorization|proxy-authorization|x-api-key)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi
/** `name=value` pairs of a cookie header written as text. */
const COOKIE_TEXT = /((?:^|[\s;,])(?:cookie|set-cookie)\s*[:=]\s*)[^\r\n"]*/gi

/** `text` with every credential it carries replaced by `[redacted]`. */
export function redactSecrets (text: string): string {
  if (!mayCarrySecret(text)) return text
  return text
    .replace(QUERY_SECRET, `$1${CENSOR}`)
    .replace(SCHEME_SECRET, `$1$2${CENSOR}`)
    .replace(URL_USERINFO, `$1${CENSOR}@`)
    .replace(HEADER_SECRET, `$1"${CENSOR}"`)
    .replace(COOKIE_TEXT, `$1${CENSOR}`)
}

/** A request target for a log line: its path and query as sent, credentials replaced. */
export function redactTarget (target: string | undefined): string | undefined {
  return target === undefined ? undefined : redactSecrets(target)
}

/** Most lines carry nothing to hide: one cheap scan decides whether the patterns run at all. */
function mayCarrySecret (text: string): boolean {
  return /[?&;][a-z_-]+=|bearer|basic|token|cookie|authorization|api-key|:\/\/[^/\s]*@/i.test(text)
}
