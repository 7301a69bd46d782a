/**
 * Appends events and projects them until it is killed. Prints `acked <streamId> <revision>` after
 * each acknowledged append, so the parent knows what must survive.
 */
import { openPglite } from '../../infra/postgres/database.js';
import { lockDataDir } from '../../infra/postgres/dataDirLock.js';
import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { createPostgresEventStore } from '../../infra/eventstore/postgresEventStore.js';
import { streamSummaries } from '../../projections/ledger/streamSummaries.js';
import { createProjectionRunner } from '../../src/engine/projectionRunner.js';
import { silentLogger } from '../../src/ports/logger.js';
import { newEvents } from './events.js';

const dataDir = process.argv[2]!;
lockDataDir(dataDir);
const db = await openPglite(`${dataDir}/pgdata`);
const store = await createPostgresEventStore(db, { pollIntervalMs: 20 });
const runner = createProjectionRunner(store, [await postgresDocumentProjection(db, streamSummaries)], {
  logger: silentLogger,
  batchSize: 7,
});
await runner.start();
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const stream = `job-${crypto.randomUUID()}`;
  await store.append(stream, newEvents(1 + (i % 3)), 'no_stream');
  process.stdout.write(`acked ${stream} ${i % 3}\n`);
}
