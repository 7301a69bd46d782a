/**
 * Every event the product writes goes through the one command loop, `runCommand` in
 * src/engine/commands.ts: it checks events against the catalog, stamps their metadata (whose
 * deterministic ids make a retried append idempotent) and appends with an expected revision.
 *
 * So no other shipped file calls the event store's `append`, except the adapters that implement it
 * (infra/eventstore) and the few that pass on events already made, listed below with their reason;
 * and none but the loop names `metadataFor`. Calls are found with the type checker (an `append`
 * whose declaration is the EventStore port's), so that other `append`s (Headers, FormData) do not
 * count. Test code is free to append: it arranges what it checks.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SHIPPED = ['src', 'commands', 'queries', 'projections', 'infra'];
const LOOP = 'src/engine/commands.ts';
const PORT = 'src/ports/eventStore.ts';
const ADAPTERS = 'infra/eventstore/';
/** Files that append events they did not make, and why that is not a command. */
const PASS_THROUGH: Record<string, string> = {
  'src/observability/countAppends.ts': 'a store wrapper: it forwards the append it is given and counts it',
  'src/migration/migrateEvents.ts': 'copies stored events to another store, with their own ids and metadata',
};

const isTest = (file: string) => file.endsWith('.spec.ts') || file.endsWith('.d.ts');

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(rel);
    return entry.name.endsWith('.ts') && !isTest(entry.name) ? [rel] : [];
  });
}

const sources = new Map(SHIPPED.flatMap(sourceFiles).map((file) => [file, readFileSync(path.join(ROOT, file), 'utf8')]));

/** The files whose code calls the EventStore port's `append`, each with the lines of the calls. */
function storeAppends(): Map<string, number[]> {
  // Only files that mention `.append` need the type checker: it loads their imports, not the whole tree.
  const candidates = [...sources].filter(([, text]) => /\.\s*append\b/.test(text)).map(([file]) => file);
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), (file) => ts.sys.readFile(file)).config as unknown;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const program = ts.createProgram(
    candidates.map((file) => path.join(ROOT, file)),
    { ...options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const port = path.join(ROOT, PORT);
  const found = new Map<string, number[]>();
  for (const file of candidates) {
    const source = program.getSourceFile(path.join(ROOT, file))!;
    const visit = (node: ts.Node): void => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'append' &&
        checker.getResolvedSignature(node)?.declaration?.getSourceFile().fileName === port
      ) {
        const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
        found.set(file, [...(found.get(file) ?? []), line]);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('the one append path', () => {
  const appends = storeAppends();

  it('finds the store appends there are', () => {
    expect(sources.size).toBeGreaterThan(100);
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
