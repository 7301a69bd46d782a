import { z } from 'zod';

/** UTC offsets in use run from -12:00 to +14:00; Postgres refuses anything past ±15:59. */
const MAX_OFFSET_MINUTES = 14 * 60;

const offsetMinutes = (value: string): number => {
  const match = /([+-])(\d{2}):?(\d{2})$/.exec(value);
  return match ? Number(match[2]) * 60 + Number(match[3]) : 0;
};

/** An ISO 8601 moment with `Z` or a real UTC offset (at most ±14:00); one message for what is wrong with it. */
export const Instant = z.iso
  .datetime({ offset: true, error: 'expected an ISO 8601 time with Z or its UTC offset (e.g. 2026-11-29T14:00:00Z)' })
  .refine((value) => offsetMinutes(value) <= MAX_OFFSET_MINUTES && !Number.isNaN(Date.parse(value)), {
    message: 'expected an ISO 8601 time whose UTC offset is at most ±14:00',
    when: (payload) => payload.issues.length === 0,
  });

/** The same moment in UTC (`Z`), as the tool API gives every time; a time already in UTC is kept as written. */
export const inUtc = (value: string): string => (value.endsWith('Z') ? value : new Date(value).toISOString());
