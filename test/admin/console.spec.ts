import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTerminal, type JobStatus } from '../../src/domain/jobs.js';
import type { OperationContext } from '../../src/operations.js';
import { ingest, startApiServer, type ApiServer } from '../api/apiServer.js';
import { makeRepo } from '../jobs/jobsSupport.js';
import { tempDataDir } from '../support/ledger.js';
import { CHROMIUM, CHROMIUM_PATH, describeWith } from '../support/requirements.js';


/** Chromium on a machine without network: no background connections, no first-run work. */
const launchChromium = () =>
  chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });

const PROJECT = 'acme';
const context = (): OperationContext => ({
  actor: { subject: 'alice', tenant: PROJECT, via: 'cli' },
  correlationId: crypto.randomUUID(),
  project: PROJECT,
});

/** Documents, a finished indexing job and an annotation session annotated twice, all in one project. */
const seedLedger = async (api: ApiServer) => {
  await ingest(
    api,
    PROJECT,
    Array.from({ length: 60 }, (_, i) => ({
      source_id: `note-${i}.md`,
      title: `Note ${i}`,
      body: `# Note ${i}\nbody ${i}`,
    })),
  );
  const run = (name: string, input: unknown) => api.ledger.operation(name).run(input as never, context());
  const job = (await run('start_indexing_background', { repo_path: makeRepo(5, 'ctx-console-repo-') })) as {
    job_id: string;
  };
  for (
    let status: JobStatus | null = null;
    !isTerminal(status);
    await new Promise((r) => setTimeout(r, 100))
  ) {
    ({ status } = (await run('get_job_status', { job_id: job.job_id })) as { status: JobStatus });
  }
  const chunks = ['intro', 'fees'].map((chunk_id, position) => ({
    chunk_id,
    position,
    text: `chunk ${chunk_id}`,
  }));
  const session = (await run('start_session', { config: { chunks }, name: 'console review' })) as {
    sessionId: string;
  };
  await run('annotate_chunk', { sessionId: session.sessionId, chunkId: 'intro', tags: ['first-pass'] });
  await run('annotate_chunk', { sessionId: session.sessionId, chunkId: 'fees', tags: ['second-pass'] });
  await api.ledger.projections.waitFor(await api.ledger.store.headPosition(), { timeoutMs: 20_000 });
  return { jobId: job.job_id, sessionId: session.sessionId };
};

const rowTexts = (page: Page, table: string) => page.locator(`${table} tbody tr`).allInnerTexts();

describeWith(CHROMIUM, 'the admin console in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('on an open deployment', () => {
    let api: ApiServer;
    let seeded: { jobId: string; sessionId: string };
    let page: Page;

    beforeAll(async () => {
      // Small projection batches make a rebuild take long enough to watch its progress.
      api = await startApiServer({ CTX_AUTH__MODE: 'off', CTX_PROJECTIONS__BATCH_SIZE: '2' });
      seeded = await seedLedger(api);
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    }, 60_000);
    afterAll(async () => {
      await page?.close();
      await api?.close();
    });

    it('serves the page with a self-only content security policy', async () => {
      const response = await fetch(`${api.server.url}/admin`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(response.headers.get('content-security-policy')).not.toContain('unsafe');
      const script = await fetch(`${api.server.url}/admin/console.js`);
      expect(script.headers.get('content-type')).toContain('javascript');
    });

    it('lists the events on the timeline, narrows them by type and opens the stream of an event', async () => {
      await page.goto(`${api.server.url}/admin`);
      await page.locator('#timeline-table tbody tr').first().waitFor();
      const all = await rowTexts(page, '#timeline-table');
      expect(all.some((row) => row.includes('DocumentIngested'))).toBe(true);
      expect(all.some((row) => row.includes('ChunkAnnotated'))).toBe(true);

      await page.fill('#timeline-filters input[name="type"]', 'ChunkAnnotated');
      await page.click('#timeline-filters button[type="submit"]');
      await page.waitForFunction(() =>
        Array.from(document.querySelectorAll('#timeline-table tbody tr')).every((row) =>
          row.textContent?.includes('ChunkAnnotated'),
        ),
      );
      const annotated = await rowTexts(page, '#timeline-table');
      expect(annotated).toHaveLength(2);
      expect(annotated.every((row) => row.includes(`annotation-${seeded.sessionId}`))).toBe(true);

      await page.locator('#timeline-table tbody tr').first().click();
      await page.locator('#stream-body').waitFor();
      expect(await page.textContent('#stream-title')).toContain(`annotation-${seeded.sessionId}`);
    });

    it('steps an annotation session back through its history with the slider', async () => {
      // The previous test left this stream open: a change of hash alone would open it again in the
      // background, and its latest revision could land after the slider has moved.
      await page.goto('about:blank');
      await page.goto(`${api.server.url}/admin#stream/annotation-${seeded.sessionId}`);
      await page.waitForFunction(() =>
        document.querySelector('#stream-state')?.textContent?.includes('second-pass'),
      );
      expect(await page.textContent('#stream-state')).toContain('first-pass');
      const events = await page.locator('#stream-events li').allInnerTexts();
      const firstAnnotation = events.findIndex((event) => event.includes('ChunkAnnotated'));
      expect(events.filter((event) => event.includes('ChunkAnnotated'))).toHaveLength(2);

      // Back to the first annotation: the second one has not happened yet.
      await page.locator('#stream-slider').fill(String(firstAnnotation));
      await page.waitForFunction(
        () => !document.querySelector('#stream-state')?.textContent?.includes('second-pass'),
      );
      expect(await page.textContent('#stream-state')).toContain('first-pass');
      expect(await page.textContent('#stream-event')).toContain('first-pass');
      expect(await page.textContent('#stream-position')).toContain('ChunkAnnotated');

      // Back to the start: nothing annotated.
      await page.locator('#stream-slider').fill('0');
      await page.waitForFunction(
        () => !document.querySelector('#stream-state')?.textContent?.includes('first-pass'),
      );
      expect(await page.textContent('#stream-position')).toContain('AnnotationSessionStarted');
    });

    it('steps a job from its request to its completion', async () => {
      await page.goto(`${api.server.url}/admin#stream/job-${seeded.jobId}`);
      await page.waitForFunction(() =>
        document.querySelector('#stream-state')?.textContent?.includes('completed'),
      );
      await page.locator('#stream-slider').fill('0');
      await page.waitForFunction(() =>
        document.querySelector('#stream-position')?.textContent?.includes('IndexingJobRequested'),
      );
      await page.waitForFunction(
        () => !document.querySelector('#stream-state')?.textContent?.includes('completed'),
      );
    });

    it('rebuilds a projection with live progress, then shows it running again', async () => {
      await page.goto(`${api.server.url}/admin#projections`);
      const row = page.locator('#projections-table tbody tr[data-key="documents"]');
      await row.locator('text=running').waitFor();
      await row.locator('button', { hasText: 'Rebuild' }).click();
      await row.locator('progress').waitFor();
      expect(await row.innerText()).toContain('rebuilding');
      expect(await row.innerText()).toMatch(/\d+%/);
      await row.locator('button', { hasText: 'Rebuild' }).waitFor({ timeout: 20_000 });
      expect(await row.innerText()).toContain('running');
    });

    it('shows the indexing job with its status and progress', async () => {
      await page.goto(`${api.server.url}/admin#jobs`);
      const row = page.locator(`#jobs-table tbody tr[data-key="${seeded.jobId}"]`);
      await row.waitFor();
      expect(await row.innerText()).toContain('completed');
      expect(await row.locator('progress').getAttribute('value')).toBe('100');
      // An ended job is in no phase: the phase cell is empty, not the last phase it ran.
      expect(await row.locator('td').nth(3).innerText()).toBe('—');

      await page.selectOption('#jobs-filters select[name="status"]', 'failed');
      await row.waitFor({ state: 'detached' });
      expect(await page.isVisible('#jobs-empty')).toBe(true);
      await page.selectOption('#jobs-filters select[name="status"]', '');
    });

    it('follows a job started while the jobs view is open, without reloading', async () => {
      await page.goto(`${api.server.url}/admin#jobs`);
      await page.locator(`#jobs-table tbody tr[data-key="${seeded.jobId}"]`).waitFor();
      const { job_id } = (await api.ledger
        .operation('start_indexing_background')
        .run({ repo_path: makeRepo(40, 'ctx-console-live-') }, context())) as { job_id: string };
      const row = page.locator(`#jobs-table tbody tr[data-key="${job_id}"]`);
      await row.waitFor({ timeout: 10_000 });
      await row.locator('.badge', { hasText: 'completed' }).waitFor({ timeout: 20_000 });
      expect(await row.locator('progress').getAttribute('value')).toBe('100');
    });

    it('takes a full-page screenshot of the timeline', async () => {
      await page.goto(`${api.server.url}/admin#timeline`);
      await page.click('#timeline-filters button[type="reset"]');
      await page.waitForFunction(() => document.querySelectorAll('#timeline-table tbody tr').length > 2);
      const file = path.join(tempDataDir('ctx-console-shot-'), 'admin-console.png');
      await page.screenshot({ path: file, fullPage: true });
      const png = readFileSync(file);
      expect(png.length).toBeGreaterThan(1_000);
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      mkdirSync('test-results', { recursive: true });
      writeFileSync(path.join('test-results', 'admin-console.png'), png);
    });
  });

  describe('with authentication on', () => {
    let api: ApiServer;
    beforeAll(async () => {
      api = await startApiServer();
      await ingest(api, PROJECT, [{ source_id: 'secret.md', body: 'tenant data' }]);
    }, 60_000);
    afterAll(async () => {
      await api?.close();
    });

    it('asks for credentials, refuses a key without the admin scope and signs in with one that has it', async () => {
      const reader = await api.apiKey(['search:read', 'index:read']);
      const admin = await api.apiKey(['admin']);
      const page = await browser.newPage();
      try {
        await page.goto(`${api.server.url}/admin`);
        await page.locator('#sign-in').waitFor();
        expect(await page.textContent('#sign-in-reason')).not.toBe('');
        expect(await page.locator('#timeline-table tbody tr').count()).toBe(0);

        await page.fill('#sign-in-form input[name="secret"]', reader.key);
        await page.click('#sign-in-form button[type="submit"]');
        await page.waitForFunction(() =>
          document.querySelector('#sign-in-reason')?.textContent?.includes("'admin'"),
        );
        expect(await page.isVisible('#sign-in')).toBe(true);

        await page.fill('#sign-in-form input[name="secret"]', admin.key);
        await page.click('#sign-in-form button[type="submit"]');
        await page.locator('#timeline-table tbody tr').first().waitFor();
        expect(await page.isVisible('#sign-in')).toBe(false);
        expect(
          (await rowTexts(page, '#timeline-table')).some((row) => row.includes('DocumentIngested')),
        ).toBe(true);
        expect(await page.evaluate(() => sessionStorage.length)).toBeGreaterThan(0);

        await page.click('#sign-out');
        await page.locator('#sign-in').waitFor();
        expect(await page.locator('#timeline-table tbody tr').count()).toBe(0);
        await page.selectOption('#sign-in-form select[name="kind"]', 'bearer');
        await page.fill('#sign-in-form input[name="secret"]', api.token(['admin']));
        await page.click('#sign-in-form button[type="submit"]');
        await page.locator('#timeline-table tbody tr').first().waitFor();
        expect(await page.isVisible('#sign-in')).toBe(false);
      } finally {
        await page.close();
      }
    });
  });
});
