// Process entry point: the polyfill first (libp2p/helia need it before they load), then the CLI.
import '../polyfill.js'
import { main } from './main.js'

// `hearth ls | head` closes the pipe early; that is the reader's choice, not a failure
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => { if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0); else throw err })
}

process.exitCode = await main(process.argv.slice(2))
