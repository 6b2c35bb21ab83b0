// `node --import ./test/support/load-recorder.mjs …`: every module URL the process loads is
// appended to the file named by HEARTH_TEST_LOADED, one a line, so a test can see what a real
// daemon loaded (dynamic imports included, which the static import graph leaves out).
import { register } from 'node:module'

register(new URL('./load-recorder-hooks.mjs', import.meta.url))
