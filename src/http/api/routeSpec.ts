import type { z } from 'zod';
import type { Scope } from '../../domain/auth.js';
import type { OperationContext, RateClass } from '../../operations.js';
import type { Principal } from './authenticator.js';

/** A route whose scope and rate class are those of the operation its path names. */
export const PER_OPERATION = 'per-operation';

/** One endpoint of `/api/v1`: what it needs and what it answers; handlers are bound separately. */
export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  /** Null: no credentials needed. */
  scope: Scope | typeof PER_OPERATION | null;
  /** Null: not rate limited. */
  rateClass: RateClass | typeof PER_OPERATION | null;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  status: number;
  response: z.ZodType | null;
}

/** What a handler gets: its validated input and who calls. */
export interface ApiCall {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  principal: Principal | null;
  /** The operation context of an authenticated call (tenant = project). */
  context: OperationContext;
}

/** Answers one route's call with its response body. */
export type RouteHandler = (call: ApiCall) => Promise<unknown>;
