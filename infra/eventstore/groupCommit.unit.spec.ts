import { describe, expect, it } from 'vitest';
import { groupCommit } from './groupCommit.js';

/** A batch runner that records its batches and answers each item doubled, or fails on 'bad'. */
const recording = () => {
  const batches: string[][] = [];
  let release: () => void = () => undefined;
  let held: Promise<void> | undefined;
  const run = async (items: string[]): Promise<PromiseSettledResult<string>[]> => {
    batches.push(items);
    if (held) await held;
    if (items.includes('throw')) throw new Error('batch failed');
    return items.map((item) =>
      item === 'bad'
        ? { status: 'rejected', reason: new Error(`bad item`) }
        : { status: 'fulfilled', value: item + item },
    );
  };
  return {
    batches,
    run,
    hold: () => {
      held = new Promise((resolve) => (release = resolve));
    },
    release: () => {
      held = undefined;
      release();
    },
  };
};

const options = { concurrency: 1, maxBytes: 100, sizeOf: (item: string) => item.length };

/** Lets the microtasks queued now run: a batch sent from idle has started by then. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('groupCommit', () => {
  it('sends a lone item at once, alone', async () => {
    const runner = recording();
    const submit = groupCommit(runner.run, options);
    await expect(submit('a')).resolves.toBe('aa');
    expect(runner.batches).toEqual([['a']]);
  });

  it('sends the items submitted while a batch runs together in the next batch, in order', async () => {
    const runner = recording();
    const submit = groupCommit(runner.run, options);
    runner.hold();
    const first = submit('a');
    await settled();
    const rest = ['b', 'c', 'd'].map((item) => submit(item));
    runner.release();
    expect(await Promise.all([first, ...rest])).toEqual(['aa', 'bb', 'cc', 'dd']);
    expect(runner.batches).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('sends the items submitted together, a few microtasks apart as a batch command makes them, in one batch', async () => {
    const runner = recording();
    const submit = groupCommit(runner.run, options);
    const answers = ['a', 'b', 'c'].map(async (item) => {
      await Promise.resolve();
      return submit(item);
    });
    expect(await Promise.all(answers)).toEqual(['aa', 'bb', 'cc']);
    expect(runner.batches).toEqual([['a', 'b', 'c']]);
  });

  it('takes callers that submit again as soon as they are answered into the next batch, not one alone', async () => {
    const runner = recording();
    const submit = groupCommit(runner.run, options);
    const writer = async (name: string) => {
      for (let i = 0; i < 3; i++) await submit(`${name}${i}`);
    };
    await Promise.all([writer('x'), writer('y'), writer('z')]);
    expect(runner.batches).toEqual([
      ['x0', 'y0', 'z0'],
      ['x1', 'y1', 'z1'],
      ['x2', 'y2', 'z2'],
    ]);
  });

  it('keeps a batch within maxBytes, and sends a larger item alone', async () => {
    const runner = recording();
    const submit = groupCommit(runner.run, options);
    runner.hold();
    const items = ['a', 'b'.repeat(60), 'c'.repeat(30), 'd'.repeat(20), 'e'.repeat(150), 'f'];
    const answers = items.map((item) => submit(item));
    runner.release();
    await Promise.all(answers);
    expect(runner.batches.map((batch) => batch.map((item) => item.length))).toEqual([[1, 60, 30], [20], [150], [1]]);
  });

  it('answers each item of a batch on its own, and a batch that throws fails only its items', async () => {
    const runner = recording();
    const submit = groupCommit(runner.run, options);
    runner.hold();
    const first = submit('a');
    const grouped = [submit('b'), submit('bad'), submit('c')];
    runner.release();
    await first;
    expect(await Promise.allSettled(grouped)).toMatchObject([
      { status: 'fulfilled', value: 'bb' },
      { status: 'rejected', reason: { message: 'bad item' } },
      { status: 'fulfilled', value: 'cc' },
    ]);
    await expect(submit('throw')).rejects.toThrow('batch failed');
    await expect(submit('d')).resolves.toBe('dd');
  });

  it('runs up to `concurrency` batches at once', async () => {
    const runner = recording();
    const submit = groupCommit(runner.run, { ...options, concurrency: 2 });
    runner.hold();
    const answers = [submit('a')];
    await settled();
    answers.push(submit('b'));
    await settled();
    answers.push(submit('c'), submit('d'));
    await settled();
    expect(runner.batches).toEqual([['a'], ['b']]);
    runner.release();
    await Promise.all(answers);
    expect(runner.batches.slice(2).flat().sort()).toEqual(['c', 'd']);
  });
});
