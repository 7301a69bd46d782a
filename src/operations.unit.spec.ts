import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AuthorizationError } from './domain/auth.js';
import type { Actor } from './domain/metadata.js';
import { ValidationError } from './errors.js';
import {
  callOperation,
  defineOperation,
  isOperator,
  rateClassOf,
  requiredScope,
  type OperationContext,
  type Toolset,
} from './operations.js';

describe('the scope an operation needs', () => {
  it.each<[Toolset, boolean, string | undefined, string]>([
    ['ledger', false, undefined, 'admin'],
    ['admin', true, undefined, 'admin'],
    ['search', false, undefined, 'search:read'],
    ['search', true, undefined, 'index:write'],
    ['jobs', false, undefined, 'index:read'],
    ['jobs', true, undefined, 'index:write'],
    ['annotations', true, undefined, 'index:write'],
    ['extensions', false, undefined, 'index:read'],
    ['jobs', true, 'connectors:write', 'connectors:write'],
  ])('%s, writing %s, declaring %s: %s', (toolset, writes, scope, needed) => {
    expect(requiredScope({ toolset, writes, ...(scope ? { scope } : {}) })).toBe(needed);
  });
});

describe('the rate budget an operation counts against', () => {
  it.each<[Toolset, boolean, string]>([
    ['search', false, 'search'],
    ['search', true, 'write'],
    ['ledger', false, 'admin'],
    ['admin', true, 'admin'],
    ['jobs', false, 'read'],
    ['annotations', true, 'write'],
  ])('%s, writing %s: %s', (toolset, writes, budget) => {
    expect(rateClassOf({ toolset, writes })).toBe(budget);
  });

  it('takes the class its route declares', () => {
    expect(
      rateClassOf({
        toolset: 'jobs',
        writes: true,
        rest: { method: 'POST', path: '/x', summary: 'x', rateClass: 'index' },
      }),
    ).toBe('index');
  });
});

const actor = (tenant: string | null): Actor => ({ subject: 'ann', tenant, via: 'rest' });
const context = (tenant: string | null, scopes?: string[]): OperationContext => ({
  actor: actor(tenant),
  correlationId: 'c',
  project: tenant ?? 'default',
  ...(scopes ? { scopes } : {}),
});

describe('the operator', () => {
  it.each<[string | null, string[] | undefined, boolean]>([
    [null, undefined, true],
    ['default', undefined, true],
    ['default', ['admin'], true],
    ['default', ['search:read'], false],
    ['acme', ['admin'], false],
    ['acme', undefined, false],
  ])('tenant %s with scopes %j: %s', (tenant, scopes, operator) => {
    expect(isOperator(context(tenant, scopes))).toBe(operator);
  });
});

describe('calling an operation', () => {
  const echo = defineOperation({
    name: 'test.echo',
    title: 'Echo',
    description: 'answers its input',
    toolset: 'jobs',
    writes: false,
    input: z.object({ project_id: z.string().default('default'), n: z.number() }),
    output: z.object({ project_id: z.string(), n: z.number() }),
    run: (input) => Promise.resolve(input),
  });
  const guarded = defineOperation({ ...echo, name: 'test.guarded', operatorOnly: true });
  /** Refusals may come before any promise: as a caller awaiting it sees them. */
  const call = async (...args: Parameters<typeof callOperation>) => callOperation(...args);

  it('runs a tenant in its own project, and refuses another project by name', async () => {
    await expect(call(echo, { n: 1 }, context('acme'))).resolves.toEqual({ project_id: 'acme', n: 1 });
    await expect(call(echo, { n: 1, project_id: 'globex' }, context('acme'))).rejects.toThrow(
      AuthorizationError,
    );
    await expect(call(echo, { n: 1, project_id: 'other' }, context(null))).resolves.toEqual({
      project_id: 'other',
      n: 1,
    });
  });

  it('parses the input by the operation’s schema', async () => {
    await expect(call(echo, { n: 'one' }, context(null))).rejects.toThrow(ValidationError);
  });

  it('lets only the operator call an operator-only operation', async () => {
    await expect(call(guarded, { n: 1 }, context(null))).resolves.toEqual({ project_id: 'default', n: 1 });
    await expect(call(guarded, { n: 1 }, context('acme', ['admin', 'index:read']))).rejects.toThrow(
      "'test.guarded' acts on every tenant",
    );
  });

  it('refuses a caller without the operation’s scope, before anything else', async () => {
    await expect(call(echo, { n: 'one' }, context('acme', ['search:read']))).rejects.toThrow(
      "This action needs the 'index:read' scope",
    );
    await expect(call(echo, { n: 1 }, context('acme', ['index:read']))).resolves.toEqual({ project_id: 'acme', n: 1 });
  });

  it('runs another operation on a caller’s behalf without its scope or parsing, yet within the tenant', async () => {
    const behalf = { onBehalf: true } as const;
    await expect(call(echo, { n: 1 }, context('acme', ['search:read']), behalf)).resolves.toEqual({ project_id: 'acme', n: 1 });
    await expect(call(echo, { n: 1, project_id: 'globex' }, context('acme', []), behalf)).rejects.toThrow(AuthorizationError);
    await expect(call(guarded, { n: 1 }, context('acme', []), behalf)).rejects.toThrow("'test.guarded' acts on every tenant");
  });

  it('keeps a caller without authentication in the default tenant where the operation says so', async () => {
    const within = defineOperation({ ...echo, name: 'test.within', withinTenant: true });
    const open = { ...context(null), unauthenticated: true as const };
    await expect(call(within, { n: 1, project_id: 'other' }, open)).rejects.toThrow(AuthorizationError);
    await expect(call(within, { n: 1 }, open)).resolves.toEqual({ project_id: 'default', n: 1 });
    // The terminal is the operator: it names any project.
    await expect(call(within, { n: 1, project_id: 'other' }, context(null))).resolves.toEqual({ project_id: 'other', n: 1 });
    await expect(call(echo, { n: 1, project_id: 'other' }, open)).resolves.toEqual({ project_id: 'other', n: 1 });
  });

  it('asks for the write scope of a call that does not only read', async () => {
    const control = defineOperation({
      name: 'test.control',
      title: 'Control',
      description: 'answers its action',
      toolset: 'jobs',
      writes: true,
      scope: 'index:read',
      input: z.object({ action: z.enum(['status', 'start']) }),
      output: z.object({ action: z.string() }),
      writeScope: 'index:write',
      onlyReads: ({ action }) => action === 'status',
      run: (input) => Promise.resolve(input),
    });
    const reader = context('acme', ['index:read']);
    await expect(call(control, { action: 'status' }, reader)).resolves.toEqual({ action: 'status' });
    await expect(call(control, { action: 'start' }, reader)).rejects.toThrow("This action needs the 'index:write' scope");
    await expect(call(control, { action: 'start' }, context('acme', ['index:read', 'index:write']))).resolves.toEqual({
      action: 'start',
    });
  });

  it('parses with a surface’s own parser when given one', async () => {
    const parse = () => {
      throw new Error('refused in the surface’s words');
    };
    await expect(call(echo, { n: 1 }, context(null), { parse })).rejects.toThrow('refused in the surface’s words');
  });
});
