// The module hooks of load-recorder.mjs (they run on node's hooks thread).
import { appendFileSync } from 'node:fs'

export async function load (url, context, next) {
  const file = process.env.HEARTH_TEST_LOADED
  if (file !== undefined && file !== '') appendFileSync(file, `${url}\n`)
  return await next(url, context)
}
