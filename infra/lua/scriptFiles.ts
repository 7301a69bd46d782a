import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export interface ScriptFile {
  /** Absolute path. */
  file: string;
  /** The path shown in messages: relative to the working directory when inside it. */
  shownAs: string;
  source: string;
}

const shown = (file: string) => {
  const relative = path.relative(process.cwd(), file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
};

/** The files of a folder with one of the given extensions, sorted by name; a missing folder has none. */
export const readScriptFiles = async (dir: string, extensions: readonly string[]): Promise<ScriptFile[]> => {
  const absolute = path.resolve(dir);
  let names: string[];
  try {
    names = await readdir(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const files = names.filter((name) => extensions.some((ext) => name.endsWith(ext))).sort();
  return Promise.all(
    files.map(async (name) => {
      const file = path.join(absolute, name);
      return { file, shownAs: shown(file), source: await readFile(file, 'utf8') };
    }),
  );
};
