#!/usr/bin/env -S node --max-semi-space-size=4
// Runs the compiled CLI (npm ci builds dist/ through the prepare script).
// The #! line holds the daemon's process-level settings, the one place they are set: `hearth`
// (npm's link to this file), `npm start` and the systemd unit all execute this file.
// --max-semi-space-size=4: V8's young generation grows to 2 × 16 MB by default, which an idle
// daemon never needs back; 4 MB semi-spaces keep idle RSS ~25 MB lower (README, "Idle memory")
// and cost no CPU per file in bench/limits.ts (its scavenges stay short: little survives a request).
import '../dist/cli/entry.js'
