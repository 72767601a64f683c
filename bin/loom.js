#!/usr/bin/env -S node --max-semi-space-size=4
// The `loom` command: runs the built CLI (npm run build first).
import '../dist/cli/main.js';
