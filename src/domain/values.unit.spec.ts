import { describe, expect, it } from 'vitest';
import { deterministicUuid, UUID_PATTERN } from './ids.js';
import { Instant, inUtc } from './instant.js';
import { jsonTextNestsDeeperThan, valueNestsDeeperThan } from './nesting.js';
import { describeTextPath, findUnstorableText, toStorableText } from './text.js';
import { databaseNameOf, ProjectIdSchema, resolveProject } from './workspace.js';

describe('instants', () => {
  it.each([
    ['2026-01-02T03:04:05Z', true],
    ['2026-01-02T03:04:05.678Z', true],
    ['2026-01-02T03:04:05+14:00', true],
    ['2026-01-02T03:04:05-12:00', true],
    ['2026-01-02T03:04:05+05:30', true],
    ['2026-01-02T03:04:05+14:01', false],
    ['2026-01-02T03:04:05-15:59', false],
    ['2026-01-02T03:04:05', false],
    ['2026-01-02', false],
    ['yesterday', false],
    ['2026-02-30T00:00:00Z', false],
  ])('%s is an instant: %s', (value, valid) => {
    expect(Instant.safeParse(value).success).toBe(valid);
  });

  it.each([
    ['2026-01-02T03:04:05Z', '2026-01-02T03:04:05Z'],
    ['2026-01-02T04:04:05+01:00', '2026-01-02T03:04:05.000Z'],
    ['2026-01-01T23:04:05-04:00', '2026-01-02T03:04:05.000Z'],
  ])('%s in UTC is %s', (value, utc) => {
    expect(inUtc(value)).toBe(utc);
  });
});

describe('the text rule', () => {
  it.each<[string, unknown, { path: (string | number)[]; problem: RegExp } | null]>([
    ['plain text', 'héllo ✓ 😀', null],
    ['a NUL', 'a\u0000b', { path: [], problem: /NUL/ }],
    ['a lone high surrogate', 'a\ud800b', { path: [], problem: /unpaired/ }],
    ['a lone low surrogate', 'a\udc00', { path: [], problem: /unpaired/ }],
    ['a NUL deep in an object', { a: [{ b: 'x\u0000' }] }, { path: ['a', 0, 'b'], problem: /NUL/ }],
    ['a NUL in a key', { 'k\u0000': 1 }, { path: ['k\u0000'], problem: /is a key that/ }],
    ['numbers and nulls', { a: 1, b: null, c: [true] }, null],
  ])('%s', (_name, value, found) => {
    const problem = findUnstorableText(value);
    if (found === null) expect(problem).toBeNull();
    else {
      expect(problem?.path).toEqual(found.path);
      expect(problem?.problem).toMatch(found.problem);
    }
  });

  it('repairs strings and keys, leaving the rest as it was', () => {
    const repaired = toStorableText({ 'k\u0000': ['a\ud800', 2, null], ok: 'fine 😀' });
    expect(repaired).toEqual({ 'k\ufffd': ['a\ufffd', 2, null], ok: 'fine 😀' });
    expect(findUnstorableText(repaired)).toBeNull();
    const date = new Date(0);
    expect(toStorableText(date)).toBe(date);
  });

  it.each([
    [[], '(root)'],
    [['a', 0, 'b'], 'a.0.b'],
    [['k\u0000'], 'k\ufffd'],
  ])('names the path %j as %s', (path, shown) => {
    expect(describeTextPath(path)).toBe(shown);
  });
});

describe('nesting', () => {
  const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });
  it.each([
    [0, 1, false],
    [1, 1, false],
    [2, 1, true],
    [32, 32, false],
    [33, 32, true],
  ])('an object %i deep nests deeper than %i: %s', (depth, max, deeper) => {
    expect(valueNestsDeeperThan(nested(depth), max)).toBe(deeper);
    expect(jsonTextNestsDeeperThan(JSON.stringify(nested(depth)), max)).toBe(deeper);
  });

  it.each([
    ['[[["a"]]]', 2, true],
    ['["[[[[", "{{{{"]', 1, false],
    ['["\\"[[["]', 1, false],
    ['{"a": [], "b": {}}', 2, false],
  ])('%s nests deeper than %i: %s', (text, max, deeper) => {
    expect(jsonTextNestsDeeperThan(text, max)).toBe(deeper);
  });

  it('measures nesting far past any stack without overflowing', () => {
    expect(jsonTextNestsDeeperThan('['.repeat(1_000_000), 32)).toBe(true);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(valueNestsDeeperThan(deep, 32)).toBe(true);
  });
});

describe('ids', () => {
  it('derives the same uuid from the same parts, and another from other parts', () => {
    const id = deterministicUuid('document', 'default', 'notes', 'a.md');
    expect(id).toMatch(UUID_PATTERN);
    expect(id[14]).toBe('5');
    expect(deterministicUuid('document', 'default', 'notes', 'a.md')).toBe(id);
    expect(deterministicUuid('document', 'default', 'notesa', '.md')).not.toBe(id);
    expect(deterministicUuid('document', 'default', 'notes', 'b.md')).not.toBe(id);
  });
});

describe('projects', () => {
  it.each([
    ['default', true],
    ['team_a.b-c', true],
    ['a'.repeat(64), true],
    ['a'.repeat(65), false],
    ['-leading', false],
    ['has space', false],
    ['', false],
  ])('%s is a project id: %s', (id, valid) => {
    expect(ProjectIdSchema.safeParse(id).success).toBe(valid);
  });

  it.each([
    ['default', /^cb_proj_default_[0-9a-f]{8}$/],
    ['My Team!', /^cb_proj_my_team_[0-9a-f]{8}$/],
    ['...', /^cb_proj_project_[0-9a-f]{8}$/],
  ])('names the workspace of %s', (id, name) => {
    expect(databaseNameOf(id)).toMatch(name);
  });

  it('keeps apart projects whose slugs collide, and resolves the default one', () => {
    expect(databaseNameOf('a-b')).not.toBe(databaseNameOf('a_b'));
    expect(resolveProject(undefined)).toEqual({
      project_id: 'default',
      database_name: databaseNameOf('default'),
    });
  });
});
