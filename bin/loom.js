#!/usr/bin/env node
// The `loom` command: runs the built CLI (npm run build first).
import '../dist/cli/main.js';
