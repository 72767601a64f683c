#!/usr/bin/env node
// The `loom` command: runs the built CLI (npm run build first). CommonJS (bin/package.json), like the
// bundle it requires, so a call loads none of Node's ES module loader unless it needs an ES bundle
// (scripts/bundle.mjs, decision 0019).
require('../dist/cli/main.cjs');
