#!/usr/bin/env node
import { main } from '../dist/src/cli/main.js';

// `nightshift … | head` closes the pipe early: that ends the output, it is not a crash
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

process.exitCode = await main(process.argv);
