// Process entry point: the polyfill first (libp2p/helia need it before they load), then the CLI.
import '../polyfill.js'
import { main } from './main.js'

process.exitCode = await main(process.argv.slice(2))
