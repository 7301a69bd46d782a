import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { streamSummaries } from '../../projections/ledger/streamSummaries.js';
import {
  rebuildProjectionOperation,
  rebuildProjectionSurfaces,
  startRebuildOperation,
  startRebuildSurfaces,
} from '../../commands/ledger/rebuildProjection.js';
import { auditEventsOperation, auditEventsSurfaces, auditRouteOperation, auditRouteSurfaces } from '../../queries/ledger/auditEvents.js';
import { documentAsOfOperation } from '../../queries/search/getDocument.js';
import { projectionStatusOperation, projectionStatusSurfaces } from '../../queries/ledger/projectionStatus.js';
import { readHistoryOperation, readHistorySurfaces } from '../../queries/ledger/readHistory.js';
import { streamAsOfOperation, streamAsOfSurfaces } from '../../queries/ledger/streamAsOf.js';
import type { LedgerModule } from '../module.js';

/** The event ledger itself: history of any stream, the audit log, time travel, and the projections that serve it. */
export const ledgerModule: LedgerModule = {
  name: 'ledger',
  surfaces: [
    readHistorySurfaces,
    auditEventsSurfaces,
    auditRouteSurfaces,
    streamAsOfSurfaces,
    projectionStatusSurfaces,
    rebuildProjectionSurfaces,
    startRebuildSurfaces,
  ],
  commandGroups: { projections: 'inspect and rebuild read models' },
  setup: async ({ db, store, projections }) => ({
    projections: [await postgresDocumentProjection(db, streamSummaries)],
    operations: [
      readHistoryOperation(store),
      auditEventsOperation(store),
      auditRouteOperation(store),
      streamAsOfOperation(store),
      documentAsOfOperation(store),
      projectionStatusOperation(projections),
      rebuildProjectionOperation(projections),
      startRebuildOperation(projections),
    ],
  }),
};
