import { readdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { removeScratchDirs } from './scratchDir.js';

/**
 * `npm run bench -- <name>` runs bench/<name>.ts, whose `run()` prints its figures.
 * With no name, lists the benchmarks there are.
 */
const benchDir = dirname(fileURLToPath(import.meta.url));

const available = async (): Promise<string[]> =>
  (await readdir(benchDir))
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && file !== 'run.ts')
    .map((file) => basename(file, '.ts'))
    .sort();

const main = async (): Promise<number> => {
  const names = await available();
  const requested = process.argv.slice(2);
  if (requested.length === 0) {
    console.log(`Usage: npm run bench -- <name>\nAvailable: ${names.join(', ')}`);
    return 0;
  }
  const unknown = requested.filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    console.error(`Unknown benchmark: ${unknown.join(', ')}. Available: ${names.join(', ')}`);
    return 2;
  }
  for (const name of requested) {
    const module = (await import(pathToFileURL(`${benchDir}/${name}.ts`).href)) as {
      run?: () => Promise<void>;
    };
    if (typeof module.run !== 'function') throw new Error(`bench/${name}.ts does not export run()`);
    console.log(`# ${name}`);
    try {
      await module.run();
    } finally {
      removeScratchDirs();
    }
  }
  return 0;
};

// Ctrl-C ends the process through its exit hooks, which remove the benches' temporary directories.
process.once('SIGINT', () => process.exit(130));
process.exitCode = await main();
