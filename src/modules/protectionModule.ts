import { createPostgresContentErasure } from '../../infra/postgres/postgresContentStore.js';
import { KEYWORD_TEXT_TABLES } from '../../infra/search/pgTextsearchKeywordIndex.js';
import { semanticPassage } from '../domain/searchChunks.js';
import { forgetOperation, forgetSurfaces } from '../../commands/protection/forget.js';
import type { LedgerModule } from '../module.js';

/** How long forgetting a document waits for the search indexes to drop its chunks. */
const INDEXES_TIMEOUT_MS = 5 * 60_000;

/** Data protection: forgetting documents and subjects (`ledger.forget`, admin scope). Backups are in `ctx backup`. */
export const protectionModule: LedgerModule = {
  name: 'protection',
  setup: async ({ db, store, keyring, projections }) => ({
    operations: [
      forgetOperation({
        store,
        keyring,
        erasure: await createPostgresContentErasure(db, { textTables: KEYWORD_TEXT_TABLES, passageOf: semanticPassage }),
        // The semantic index too: forgetting answers once no index holds the chunks.
        waitForProjections: (position) => projections().waitFor(position, { all: true, timeoutMs: INDEXES_TIMEOUT_MS }),
      }),
    ],
  }),
  surfaces: [forgetSurfaces],
  commandGroups: {
    forget: 'forget content without rewriting history: a document, or what a subject wrote in annotations',
  },
};
