// Preloaded into a benched daemon (NODE_OPTIONS=--require): on SIGUSR2 it writes the process's
// memory as V8 sees it to $HEARTH_BENCH_MEMORY, so the bench can split the RSS it reads from /proc
// into the V8 heap, memory outside it, and the rest. The same preload runs in every variant.
'use strict'
const { getHeapSpaceStatistics } = require('node:v8')
const { renameSync, writeFileSync } = require('node:fs')

process.on('SIGUSR2', () => {
  const { heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage()
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')
  // whole or not at all: the bench reads the file as soon as it exists
  const file = process.env.HEARTH_BENCH_MEMORY
  writeFileSync(`${file}.tmp`, JSON.stringify({ heapTotal, heapUsed, external, arrayBuffers, newSpace: newSpace?.space_size ?? 0 }))
  renameSync(`${file}.tmp`, file)
})
