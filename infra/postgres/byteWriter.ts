const encoder = new TextEncoder();

/** Writes bytes into one buffer, grown as needed. */
export class ByteWriter {
  private buffer = new Uint8Array(1024);
  private view = new DataView(this.buffer.buffer);
  private at = 0;

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.at + bytes));
    grown.set(this.buffer.subarray(0, this.at));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }

  int8(value: number): void {
    this.room(1);
    this.buffer[this.at++] = value;
  }

  int16(value: number): void {
    this.room(2);
    this.view.setInt16(this.at, value);
    this.at += 2;
  }

  int32(value: number): void {
    this.room(4);
    this.view.setInt32(this.at, value);
    this.at += 4;
  }

  bytes(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buffer.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** UTF-8, which takes at most 3 bytes per UTF-16 code unit. */
  utf8(text: string): void {
    this.room(text.length * 3);
    this.at += encoder.encodeInto(text, this.buffer.subarray(this.at)).written;
  }

  cString(text: string): void {
    this.utf8(text);
    this.int8(0);
  }

  /** Writes what `write` writes, after its length in bytes, as an int32 counting itself when `inclusive`. */
  sized(write: () => void, inclusive = false): void {
    const start = this.at;
    this.int32(0);
    write();
    this.view.setInt32(start, this.at - start - (inclusive ? 0 : 4));
  }

  /** A message: its type, then its length and body. */
  message(type: number, write: () => void): void {
    this.int8(type);
    this.sized(write, true);
  }

  written(): Uint8Array {
    return this.buffer.subarray(0, this.at);
  }
}
