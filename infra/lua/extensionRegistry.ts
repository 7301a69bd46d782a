import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { loadLuaAgent, loadTomlAgent, type Agent } from './agents.js';
import { loadLuaConnector, type LuaConnector } from './luaConnectors.js';
import { ScriptLoadError } from './luaErrors.js';
import type { LuaRunner } from './luaPool.js';
import type { LuaHost } from './luaRuntime.js';
import { loadLuaTool, type LuaTool } from './luaTools.js';
import { readScriptFiles, type ScriptFile } from './scriptFiles.js';

export interface ExtensionFolders {
  toolsDir: string;
  agentsDir: string;
  connectorsDir: string;
}

export interface LoadProblem {
  file: string;
  message: string;
}

export interface Extensions {
  tools: ReadonlyMap<string, LuaTool>;
  agents: ReadonlyMap<string, Agent>;
  connectors: ReadonlyMap<string, LuaConnector>;
  /** Files that were skipped, each with why. */
  problems: readonly LoadProblem[];
}

export interface ExtensionRegistry {
  /** The extensions as the folders hold them now; reloads first when a file changed. */
  current(): Promise<Extensions>;
  close(): void;
}

export interface RegistryOptions {
  folders: ExtensionFolders;
  /** Names of built-in tools: a Lua tool may not take one. */
  builtinNames(): ReadonlySet<string>;
  /** Host for running scripts' top level at load time (no context queries are needed there). */
  host: LuaHost;
  lua: LuaRunner;
  onProblem(problem: LoadProblem): void;
}

type Loader<T> = (script: ScriptFile) => Promise<T>;

const loadAll = async <T extends { name: string }>(
  scripts: readonly ScriptFile[],
  load: Loader<T>,
  problems: LoadProblem[],
  reserved: ReadonlySet<string> = new Set(),
): Promise<Map<string, T>> => {
  const loaded = new Map<string, T>();
  for (const script of scripts) {
    try {
      const item = await load(script);
      if (reserved.has(item.name)) throw new ScriptLoadError(script.shownAs, `'${item.name}' is the name of a built-in tool`);
      if (loaded.has(item.name)) throw new ScriptLoadError(script.shownAs, `'${item.name}' is already defined by another file`);
      loaded.set(item.name, item);
    } catch (error) {
      problems.push({ file: script.shownAs, message: (error as Error).message });
    }
  }
  return loaded;
};

/** Tools, agents and connectors from their folders, reloaded when a folder changes. */
export const createExtensionRegistry = (options: RegistryOptions): ExtensionRegistry => {
  const { folders, host, lua } = options;
  let loading: Promise<Extensions> | undefined;
  let stale = true;
  const watchers: FSWatcher[] = [];

  const load = async (): Promise<Extensions> => {
    const problems: LoadProblem[] = [];
    const [toolScripts, agentScripts, connectorScripts] = await Promise.all([
      readScriptFiles(folders.toolsDir, ['.lua']),
      readScriptFiles(folders.agentsDir, ['.toml', '.lua']),
      readScriptFiles(folders.connectorsDir, ['.lua']),
    ]);
    const tools = await loadAll(toolScripts, (s) => loadLuaTool(s, host, lua), problems, options.builtinNames());
    const agents = await loadAll(
      agentScripts,
      (s) => (s.file.endsWith('.toml') ? Promise.resolve(loadTomlAgent(s)) : loadLuaAgent(s, host, lua)),
      problems,
    );
    const connectors = await loadAll(connectorScripts, (s) => loadLuaConnector(s, host, lua), problems);
    for (const problem of problems) options.onProblem(problem);
    return { tools, agents, connectors, problems };
  };

  for (const dir of new Set([folders.toolsDir, folders.agentsDir, folders.connectorsDir].map((d) => path.resolve(d)))) {
    try {
      const watcher = watch(dir, () => {
        stale = true;
      });
      watcher.on('error', () => {
        stale = true;
      });
      watchers.push(watcher);
    } catch {
      // A folder that does not exist yet holds nothing; nothing to watch.
    }
  }

  return {
    current: () => {
      if (stale || !loading) {
        stale = false;
        loading = load();
        loading.catch(() => {
          stale = true;
        });
      }
      return loading;
    },
    close: () => {
      for (const watcher of watchers) watcher.close();
    },
  };
};
