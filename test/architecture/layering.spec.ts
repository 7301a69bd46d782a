/**
 * Imports point inward, re-derived from the source on every run.
 *
 * The core is `src/domain`, `src/ports`, `src/engine`, `src/services` and three single files that
 * every slice needs and that import only the core themselves: `src/errors.ts` (the error family),
 * `src/validation.ts` (the one input parser) and `src/operations.ts` (the Operation shape a slice
 * declares). Everything else under `src/` (composition root, modules, jobs, transports) is outside.
 *
 * - The core imports only the core, and inside it only inward: the domain (pure values, events,
 *   folds and rules) imports no other core folder; ports add the domain; the engine (the command
 *   loop, projections, time travel) adds ports; services (what several slices of a feature share:
 *   its reads through the ports) add the engine.
 * - `commands/`, `queries/`, `projections/` and `infra/` import the core and their own folder,
 *   never another of these folders and never anything else under `src/` (transports included).
 *   Inside the first three, each feature has a folder (`commands/jobs/`, `queries/search/`, …), and
 *   a slice imports only its own feature's: what features share lives in the core.
 * - Transports (`src/http`, `src/mcp`, `src/cli`) reach commands and queries only through the
 *   catalogue: they import no slice or projection.
 * - No import cycles anywhere in the shipped code; none between the folders of the core, the
 *   slices and the adapters either.
 *
 * Every import counts, type-only ones included: a type shared across layers is a dependency too.
 *
 * And every event the product writes goes through the one command loop, `runCommand` in
 * src/engine/commands.ts: it checks events against the catalog, stamps their metadata (whose
 * deterministic ids make a retried append idempotent) and appends with an expected revision. No
 * other shipped file calls the event store's `append`, except the adapters that implement it
 * (infra/eventstore) and the few that pass on events already made, listed with their reason; and
 * none but the loop names `metadataFor`. Calls are found with the type checker (an `append` whose
 * declaration is the EventStore port's), so that other `append`s (Headers, FormData) do not count.
 * Test code is free to append: it arranges what it checks.
 *
 * Likewise every operation runs through `callOperation` in src/operations.ts, the one access check
 * (scope, operator-only, a tenant's project, input parsing): no other shipped code calls an
 * Operation's `run`.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SHIPPED = ['src', 'commands', 'queries', 'projections', 'infra'];
const OUTER = ['commands', 'queries', 'projections', 'infra'] as const;
const CORE_DIRS = ['src/domain/', 'src/ports/', 'src/engine/', 'src/services/'];
/** Inside the core, what each part may import besides itself and the core's single files. */
const CORE_INWARD: Readonly<Record<string, readonly string[]>> = {
  'src/domain/': [],
  'src/ports/': ['src/domain/'],
  'src/engine/': ['src/domain/', 'src/ports/'],
  'src/services/': ['src/domain/', 'src/ports/', 'src/engine/'],
};
const TRANSPORTS = ['src/http/', 'src/mcp/', 'src/cli/'];
const SLICES: readonly Layer[] = ['commands', 'queries', 'projections'];

/** The feature a slice or projection belongs to: its folder inside `commands/`, `queries/` or `projections/`. */
const featureOf = (file: string): string | undefined => {
  const [top, feature, ...rest] = file.split('/');
  return SLICES.includes(top as Layer) && rest.length > 0 ? feature : undefined;
};
const CORE_FILES = ['src/errors.ts', 'src/validation.ts', 'src/operations.ts'];

const isTest = (file: string) => file.endsWith('.spec.ts') || file.endsWith('.d.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(rel);
    return entry.name.endsWith('.ts') && !isTest(entry.name) ? [rel] : [];
  });
}

/** Resolves a relative specifier (`./x.js`, `../y/index.js`) to the repository-relative .ts file. */
function resolve(from: string, specifier: string): string | null {
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}/index.ts`];
  return candidates.find((candidate) => existsSync(path.join(ROOT, candidate))) ?? null;
}

/** Every `import … from`, `export … from`, `import(…)` and `require(…)` of a file, resolved. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const { importedFiles } = ts.preProcessFile(text, true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => {
      const resolved = resolve(file, specifier);
      if (!resolved) throw new Error(`${file}: cannot resolve import '${specifier}'`);
      return resolved;
    });
}

type Layer = 'core' | (typeof OUTER)[number] | 'app';

function layerOf(file: string): Layer {
  if (CORE_FILES.includes(file) || CORE_DIRS.some((dir) => file.startsWith(dir))) return 'core';
  const top = file.split('/')[0];
  return OUTER.find((layer) => layer === top) ?? 'app';
}

function forbidden(from: Layer, to: Layer): boolean {
  if (from === 'app' || to === 'core') return false;
  if (from === 'core') return true;
  return to !== from;
}

/** Strongly connected components with more than one file (Tarjan), each as a sorted list. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.includes(node)) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const graph = new Map(SHIPPED.flatMap(sourceFiles).map((file) => [file, importsOf(file)]));

const coreDirOf = (file: string) => CORE_DIRS.find((dir) => file.startsWith(dir));

/** A file's folder; each of the core's single files in `src/` counts as a folder of its own. */
const folderOf = (file: string) => (CORE_FILES.includes(file) ? file : path.posix.dirname(file));

/**
 * The same graph between the folders of the core, the slices and the adapters: an edge wherever a
 * file of one imports a file of the other. (The composition root and transports wire everything.)
 */
const folderGraph = new Map<string, string[]>();
for (const [file, imports] of graph) {
  if (layerOf(file) === 'app') continue;
  const from = folderOf(file);
  const targets = new Set([...(folderGraph.get(from) ?? []), ...imports.map(folderOf)]);
  targets.delete(from);
  folderGraph.set(from, [...targets]);
}

describe('layering', () => {
  it('reads the whole shipped source', () => {
    expect(graph.size).toBeGreaterThan(100);
    for (const layer of [...OUTER, 'core', 'app'] as const) {
      expect([...graph.keys()].some((file) => layerOf(file) === layer), layer).toBe(true);
    }
  });

  it('keeps the core, slices and adapters importing only inward', () => {
    const violations = [...graph].flatMap(([file, imports]) =>
      imports
        .filter((target) => forbidden(layerOf(file), layerOf(target)))
        .map((target) => `${file} (${layerOf(file)}) imports ${target} (${layerOf(target)})`),
    );
    expect(violations).toEqual([]);
  });

  it("keeps a feature's slices to its own folder: a slice imports the core and its feature's folder", () => {
    const violations = [...graph].flatMap(([file, imports]) => {
      const feature = featureOf(file);
      if (!feature) return [];
      return imports
        .filter((target) => layerOf(target) !== 'core' && featureOf(target) !== feature)
        .map((target) => `${file} (${feature}) imports ${target}`);
    });
    expect(violations).toEqual([]);
    expect([...graph.keys()].filter((file) => SLICES.includes(layerOf(file)) && !featureOf(file))).toEqual([]);
  });

  it('keeps the core importing inward: domain, then ports, then the engine and services', () => {
    const violations = [...graph].flatMap(([file, imports]) => {
      const from = coreDirOf(file);
      if (!from) return [];
      return imports
        .filter((target) => {
          const to = coreDirOf(target);
          return to !== undefined && to !== from && !CORE_INWARD[from]!.includes(to);
        })
        .map((target) => `${file} imports ${target}`);
    });
    expect(violations).toEqual([]);
  });

  it('lets transports reach slices only through the catalogue', () => {
    const violations = [...graph].flatMap(([file, imports]) =>
      TRANSPORTS.some((dir) => file.startsWith(dir))
        ? imports.filter((target) => SLICES.includes(layerOf(target))).map((target) => `${file} imports ${target}`)
        : [],
    );
    expect(violations).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(cycles(graph).map((cycle) => cycle.join(' <-> '))).toEqual([]);
  });

  it('has no import cycles between folders', () => {
    expect(cycles(folderGraph).map((cycle) => cycle.join(' <-> '))).toEqual([]);
  });
});

const LOOP = 'src/engine/commands.ts';
const PORT = 'src/ports/eventStore.ts';
const ADAPTERS = 'infra/eventstore/';
/** Files that append events they did not make, and why that is not a command. */
const PASS_THROUGH: Record<string, string> = {
  'src/observability/countAppends.ts': 'a store wrapper: it forwards the append it is given and counts it',
  'src/migration/migrateEvents.ts': 'copies stored events to another store, with their own ids and metadata',
};

const sources = new Map([...graph.keys()].map((file) => [file, readFileSync(path.join(ROOT, file), 'utf8')]));

/** A call of a method, found by the type checker: where it is, and the variable it is made in. */
interface MethodCall {
  file: string;
  line: number;
  /** The name of the innermost variable the call is made in (the function assigned to it), or `(top level)`. */
  within: string;
}

/** Every call of `.method(…)` whose resolved declaration `declaredBy` accepts, in the shipped source. */
function methodCalls(method: string, declaredBy: (declaration: ts.Declaration) => boolean): MethodCall[] {
  // Only files that mention the method need the type checker: it loads their imports, not the whole tree.
  const mentions = new RegExp(`\\.\\s*${method}\\b`);
  const candidates = [...sources].filter(([, text]) => mentions.test(text)).map(([file]) => file);
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file)).config as unknown;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const program = ts.createProgram(
    candidates.map((file) => path.join(ROOT, file)),
    { ...options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const within = (node: ts.Node): string => {
    for (let at: ts.Node | undefined = node.parent; at; at = at.parent)
      if (ts.isVariableDeclaration(at) && ts.isIdentifier(at.name)) return at.name.text;
    return '(top level)';
  };
  const found: MethodCall[] = [];
  for (const file of candidates) {
    const source = program.getSourceFile(path.join(ROOT, file))!;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === method) {
        const declaration = checker.getResolvedSignature(node)?.declaration;
        if (declaration && declaredBy(declaration)) {
          const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          found.push({ file, line, within: within(node) });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The files whose code calls the EventStore port's `append`, each with the lines of the calls. */
function storeAppends(): Map<string, number[]> {
  const port = path.join(ROOT, PORT);
  const found = new Map<string, number[]>();
  for (const { file, line } of methodCalls('append', (declaration) => declaration.getSourceFile().fileName === port))
    found.set(file, [...(found.get(file) ?? []), line]);
  return found;
}

describe('the one append path', () => {
  const appends = storeAppends();

  it('finds the store appends there are', () => {
    expect(appends.has(LOOP)).toBe(true);
  });

  it('appends only in the command loop, the store adapters and the listed pass-throughs', () => {
    const violations = [...appends]
      .filter(([file]) => file !== LOOP && !file.startsWith(ADAPTERS) && !(file in PASS_THROUGH))
      .map(([file, lines]) => `${file}:${lines.join(',')} calls the event store's append: go through runCommand`);
    expect(violations).toEqual([]);
    // A pass-through that no longer appends leaves the list.
    expect(Object.keys(PASS_THROUGH).filter((file) => !appends.has(file))).toEqual([]);
  });

  it('stamps metadata only in the command loop', () => {
    const naming = [...sources]
      .filter(([file, text]) => file !== LOOP && /\bmetadataFor\b/.test(text))
      .map(([file]) => file);
    expect(naming).toEqual([]);
  });
});

const ACCESS = 'src/operations.ts';
const ACCESS_FUNCTION = 'callOperation';

/** The calls of an Operation's own `run` in the shipped source. */
const operationRuns = () =>
  methodCalls(
    'run',
    (declaration) =>
      declaration.getSourceFile().fileName === path.join(ROOT, ACCESS) &&
      ts.isInterfaceDeclaration(declaration.parent) &&
      declaration.parent.name.text === 'Operation',
  );

/**
 * Every surface (MCP, the tool API, `/api/v1`, the CLI, Lua) and every in-process caller runs an
 * operation through `callOperation`, the one access check: the caller's scope, a tenant kept in its
 * project, the input parsed, operator-only operations kept to the operator. Nothing else calls an
 * operation's `run` (found with the type checker: a `run` whose declaration is the Operation
 * interface's), so that no path skips a check. Test code is free to: it checks operations on their own.
 */
describe('the one access check', () => {
  const runs = operationRuns();

  it('finds the operation runs there are', () => {
    expect(runs.some((run) => run.file === ACCESS && run.within === ACCESS_FUNCTION)).toBe(true);
  });

  it('runs operations only in callOperation', () => {
    const violations = runs
      .filter((run) => !(run.file === ACCESS && run.within === ACCESS_FUNCTION))
      .map((run) => `${run.file}:${run.line} (${run.within}) calls an operation's run: go through callOperation`);
    expect(violations).toEqual([]);
  });
});
