// The configuration's validator (filling in defaults), made once per process. Compiling
// CONFIG_SCHEMA with Ajv took ~0.15–0.2 s of every start before the first `/health` answer (Ajv's
// own modules and the code generation); the build (`npm run build`, scripts/build-config-validator.mjs)
// writes the same validator as standalone code next to this module, so a built daemon only
// requires that file. Run from the sources (tests under tsx) there is no such file and it is
// compiled here. Both behave alike: test/config/validator.test.ts.
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import type { Ajv2020 } from 'ajv/dist/2020.js'
import type { ValidateFunction } from 'ajv'
import { CONFIG_SCHEMA } from './schema.js'

// Ajv (CommonJS) is required only where a validator is compiled, so a built daemon never loads it for this
const require = createRequire(import.meta.url)

/** The standalone validator's file name, beside this module in dist/. */
export const GENERATED_VALIDATOR_FILE = 'config-validator.generated.cjs'

function configAjv (source: boolean): Ajv2020 {
  // CONFIG_SCHEMA is ours and fixed: checking it against the meta-schema at every start costs
  // the daemon a tenth of a second before /health (test/config/schema-valid.test.ts checks it once)
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: true, validateSchema: false, ...(source ? { code: { source: true } } : {}) })
  ajv.addVocabulary(['x-env', 'x-live'])
  return ajv
}

/** CONFIG_SCHEMA compiled now. */
export function compileConfigValidator (): ValidateFunction {
  return configAjv(false).compile(CONFIG_SCHEMA)
}

/** Which schema a standalone validator was made from: a dist/ compiled again without its build step keeps an older one, which is then not used. */
function schemaDigest (): string {
  return createHash('sha256').update(JSON.stringify(CONFIG_SCHEMA)).digest('hex')
}

/** The validator as standalone CommonJS (what the build writes to GENERATED_VALIDATOR_FILE), stamped with its schema's digest. */
export function configValidatorSource (): string {
  const ajv = configAjv(true)
  const standaloneCode = (require('ajv/dist/standalone/index.js') as typeof import('ajv/dist/standalone/index.js')).default
  return `${standaloneCode(ajv, ajv.compile(CONFIG_SCHEMA))}\nmodule.exports.schemaDigest = ${JSON.stringify(schemaDigest())};`
}

/** The build's standalone validator when there is one made from this schema, else null (running from the sources). */
function generatedValidator (): ValidateFunction | null {
  let generated: ValidateFunction & { schemaDigest?: string }
  try {
    generated = require(`./${GENERATED_VALIDATOR_FILE}`) as typeof generated
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (err as Error).message.includes(GENERATED_VALIDATOR_FILE)) return null
    throw err
  }
  return generated.schemaDigest === schemaDigest() ? generated : null
}

let validator: ValidateFunction | undefined

/** The one validator of this process: the build's when there is one, else compiled on first use. */
export function configValidator (): ValidateFunction {
  validator ??= generatedValidator() ?? compileConfigValidator()
  return validator
}
