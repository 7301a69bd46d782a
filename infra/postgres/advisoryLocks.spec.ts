import { afterEach, expect } from 'vitest';
import { pino } from 'pino';
import { createAdvisoryLocks } from './advisoryLocks.js';
import { describeWith, itWith, POSTGRES_SERVER } from '../../test/support/requirements.js';
import type { ReplicaLocks } from '../../src/ports/replicaLocks.js';

describeWith(POSTGRES_SERVER, 'replica locks on a PostgreSQL server', () => {
  const url = process.env.CTX_TEST_PG_URL!;
  const opened: ReplicaLocks[] = [];
  const open = () => {
    const locks = createAdvisoryLocks(url, pino({ level: 'silent' }));
    opened.push(locks);
    return locks;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((locks) => locks.close()));
  });

  itWith(POSTGRES_SERVER, 'takes and lets go of several locks at once, one query at a time on its connection', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      const names = ['projection:keyword', 'projection:semantic', 'projection:documents'].map((name) => `${name}:${crypto.randomUUID()}`);
      const mine = open();
      const other = open();
      expect(await Promise.all(names.map((name) => mine.tryAcquire(name)))).toEqual([true, true, true]);
      expect(await Promise.all(names.map((name) => other.tryAcquire(name)))).toEqual([false, false, false]);

      // A projection runner stopping releases all its locks together.
      await Promise.all(names.map((name) => mine.release(name)));
      expect(names.map((name) => mine.holds(name))).toEqual([false, false, false]);
      expect(await Promise.all(names.map((name) => other.tryAcquire(name)))).toEqual([true, true, true]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((message) => message.includes('already executing a query'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
