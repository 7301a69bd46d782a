/**
 * A ledger process that runs indexing jobs until it is killed. With a repository path it starts a
 * job there; it prints `job <id>`, then `status <status> <files indexed> <runner events>` lines.
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { streamId } from '../../src/domain/events.js';
import { openLedger } from '../../src/main.js';
import { tempRootsEnv } from '../support/ledger.js';

const [dataDir, repo, project = 'crash'] = process.argv.slice(2) as [string, string | undefined, string | undefined];
const ledger = await openLedger(
  loadConfig({
    env: { CTX_EMBEDDINGS__PROVIDER: 'none', CTX_JOBS__PROGRESS_EVERY_FILES: '10', CTX_LOG__LEVEL: 'silent', ...tempRootsEnv() },
    overrides: { storage: { dataDir } },
  }),
  { logger: pino({ level: 'silent' }) },
);
const context = { actor: { subject: 'worker', tenant: null, via: 'system' as const }, correlationId: crypto.randomUUID(), project: 'default' };
await ledger.start();
process.stdout.write('ready\n');
let jobId = process.env.JOB_ID;
if (repo) {
  const started = (await ledger.operation('start_indexing_background').run({ repo_path: repo, project_id: project }, context)) as { job_id: string };
  jobId = started.job_id;
  process.stdout.write(`job ${jobId}\n`);
}
for (;;) {
  const events = await ledger.store.readStream(streamId('job', jobId!));
  const starts = events.filter((e) => e.type === 'IndexingJobStarted').length;
  const last = events.at(-1)!;
  const status = ['IndexingJobCompleted', 'IndexingJobFailed', 'IndexingJobCancelled'].includes(last.type) ? last.type : 'active';
  const indexed = [...events].reverse().find((e) => 'filesIndexed' in e.data)?.data as { filesIndexed?: number } | undefined;
  process.stdout.write(`status ${status} ${indexed?.filesIndexed ?? 0} ${starts}\n`);
  if (status !== 'active') {
    await ledger.close();
    process.exit(0);
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}
