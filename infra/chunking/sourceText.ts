import { CHARS_PER_TOKEN } from './tokenBudget.js';

/**
 * A document's lines (0-based rows) with prefix sums of their estimated token cost, so the cost of
 * any row range is O(1). A line costs its characters plus its newline.
 */
export class SourceText {
  readonly lines: readonly string[];
  private readonly costPrefix: Float64Array;

  constructor(body: string) {
    const lines = body.replace(/\r\n?/g, '\n').split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    this.lines = lines;
    this.costPrefix = new Float64Array(lines.length + 1);
    lines.forEach((line, row) => {
      this.costPrefix[row + 1] = (this.costPrefix[row] ?? 0) + (line.length + 1) / CHARS_PER_TOKEN;
    });
  }

  get lastRow(): number {
    return this.lines.length - 1;
  }

  line(row: number): string {
    return this.lines[row] ?? '';
  }

  isBlank(row: number): boolean {
    return this.line(row).trim() === '';
  }

  /** Estimated tokens of rows `start..end` inclusive. */
  cost(start: number, end: number): number {
    return (this.costPrefix[end + 1] ?? 0) - (this.costPrefix[start] ?? 0);
  }

  text(start: number, end: number): string {
    return this.lines.slice(start, end + 1).join('\n');
  }

  hasContent(start = 0, end = this.lastRow): boolean {
    for (let row = start; row <= end; row++) if (!this.isBlank(row)) return true;
    return false;
  }
}
