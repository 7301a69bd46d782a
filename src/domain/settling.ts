import { z } from 'zod';

/** A write stored in the ledger whose read models had yet to apply it when the answer went out. */
export const SettlingSchema = z
  .object({
    position: z.string().describe('The ledger position of the write'),
    message: z.string(),
  })
  .describe(
    'Present when the write is stored but a read model had not applied it within the wait: it is done, and a retry would write it again',
  );
export type Settling = z.infer<typeof SettlingSchema>;
