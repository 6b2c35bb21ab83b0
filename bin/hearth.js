#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=8
// Runs the compiled CLI (npm ci builds dist/ through the prepare script).
// The #! line holds the daemon's process-level settings, the one place they are set: `hearth`
// (npm's link to this file), `npm start` and the systemd unit all execute this file.
// --max-semi-space-size=8: V8's young generation grows to 2 × 16 MB by default and never shrinks
// while the daemon is idle; 8 MB semi-spaces keep an idle daemon ~10 MB smaller. 4 MB would save
// ~20 MB more but made sync's receiver measurably slower (more of its in-flight files survive
// a scavenge). MALLOC_ARENA_MAX=2: glibc gives every thread that mallocs (V8's and libuv's
// workers) an arena of its own, ~6 MB resident in nine of them when idle; two hold ~2 MB.
// Numbers and what was tried: README, "Idle memory".
import '../dist/cli/entry.js'
