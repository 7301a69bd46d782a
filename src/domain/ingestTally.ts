import { z } from 'zod';
import { SettlingSchema } from './settling.js';

/** What an ingestion of files did, file by file. */
export const IngestTallySchema = z.object({
  scanned: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  unchanged: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
  removed: z.number().int(),
  chunks: z.number().int(),
  /** Files that were skipped or failed, with why. */
  problems: z.array(z.object({ sourceId: z.string(), reason: z.string() })),
  settling: SettlingSchema.optional(),
});
export type IngestTally = z.infer<typeof IngestTallySchema>;
