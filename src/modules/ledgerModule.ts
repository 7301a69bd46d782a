import { postgresDocumentProjection } from '../../infra/postgres/documentReadModels.js';
import { streamSummaries } from '../../projections/streamSummaries.js';
import {
  rebuildProjectionOperation,
  rebuildProjectionSurfaces,
  startRebuildOperation,
  startRebuildSurfaces,
} from '../../commands/rebuildProjection.js';
import { auditEventsOperation, auditEventsSurfaces, auditRouteOperation, auditRouteSurfaces } from '../../queries/auditEvents.js';
import { documentAsOfOperation } from '../../queries/getDocument.js';
import { projectionStatusOperation, projectionStatusSurfaces } from '../../queries/projectionStatus.js';
import { readHistoryOperation, readHistorySurfaces } from '../../queries/readHistory.js';
import { streamAsOfOperation, streamAsOfSurfaces } from '../../queries/streamAsOf.js';
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
