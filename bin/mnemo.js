#!/usr/bin/env node
// The package's `mnemo` binary: runs the compiled CLI (build with `npm run build`).
import '../dist/src/main.js';
