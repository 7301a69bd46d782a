import { describe, expect, it } from 'vitest';
import { SLICE_TARGET_MS, WRITE_SLICE, writeSlices } from './writeSlices.js';

describe('write slices', () => {
  it('writes whole slices while rows are cheap', () => {
    const slices = writeSlices(true);
    expect(slices.next()).toBe(WRITE_SLICE);
    slices.took(WRITE_SLICE, WRITE_SLICE * 0.5);
    expect(slices.next()).toBe(WRITE_SLICE);
  });

  it('writes fewer rows a slice once rows cost more, so that a slice holds searches about the target at most', () => {
    const slices = writeSlices(true);
    // 13.5 ms a row: a vector graph larger than the database's buffers.
    slices.took(WRITE_SLICE, WRITE_SLICE * 13.5);
    expect(slices.next()).toBe(Math.floor(SLICE_TARGET_MS / 13.5));
    expect(slices.next() * 13.5).toBeLessThanOrEqual(SLICE_TARGET_MS);
    // Never fewer than one row, however slow.
    slices.took(1, 10_000);
    expect(slices.next()).toBe(1);
  });

  it('weighs one slow slice with those before, and grows back as rows get cheap again', () => {
    const slices = writeSlices(true);
    slices.took(WRITE_SLICE, WRITE_SLICE * 0.5);
    slices.took(WRITE_SLICE, WRITE_SLICE * 5.5);
    expect(slices.next()).toBe(Math.floor(SLICE_TARGET_MS / 3));
    for (let i = 0; i < 10; i++) slices.took(slices.next(), slices.next() * 0.2);
    expect(slices.next()).toBe(WRITE_SLICE);
  });

  it('keeps whole slices where a transaction does not hold searches back (a server)', () => {
    const slices = writeSlices(false);
    slices.took(WRITE_SLICE, WRITE_SLICE * 13.5);
    expect(slices.next()).toBe(WRITE_SLICE);
  });
});
