import { ForgetInputSchema, ForgetOutputSchema } from '../../../commands/forget.js';
import { UnavailableError } from '../../errors.js';
import type { Operation } from '../../operations.js';
import type { RouteHandler, RouteSpec } from './routeSpec.js';

/** Data protection: forgetting a document's content or a subject's notes, for a tenant's admin. */
export const FORGET_ROUTE_SPECS = [
  {
    method: 'POST',
    url: '/forget',
    summary: "Forget a document's content or a subject's annotation notes, keeping the history",
    scope: 'admin',
    rateClass: 'admin',
    body: ForgetInputSchema,
    status: 200,
    response: ForgetOutputSchema,
  },
] as const satisfies readonly RouteSpec[];

export const forgetHandlers = (operations: () => readonly Operation[]) =>
  ({
    'POST /forget': async ({ body, context }) => {
      const forget = operations().find((o) => o.name === 'ledger.forget');
      if (!forget) throw new UnavailableError("The 'ledger.forget' operation is not available in this deployment");
      return forget.run(body as never, context);
    },
  }) satisfies Record<string, RouteHandler>;
