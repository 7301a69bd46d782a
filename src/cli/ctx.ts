#!/usr/bin/env node
import { runCli } from './program.js';

// What ctx writes (the data directory above all) is the user's alone.
process.umask(0o077);

const code = await runCli(process.argv.slice(2));
if (code !== 0) process.exit(code);
