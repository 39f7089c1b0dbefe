import { StringDecoder } from 'node:string_decoder';

/**
 * Turns a step's output bytes into UTF-8 text for the sink, keeping at most `limitBytes` of it. A
 * character split across two chunks is decoded whole; the cut at the limit falls between characters.
 * Past the limit, chunks are still accepted (so that the pipe keeps draining) and dropped.
 */
export class OutputCapture {
  private readonly decoder = new StringDecoder('utf8');
  private keptBytes = 0;
  private cut = false;

  constructor(
    private readonly limitBytes: number,
    private readonly emit: (text: string) => void,
  ) {}

  get truncated(): boolean {
    return this.cut;
  }

  write(chunk: Buffer): void {
    if (!this.cut) this.keep(this.decoder.write(chunk));
  }

  /** Flushes an incomplete last character (as U+FFFD). */
  end(): void {
    if (!this.cut) this.keep(this.decoder.end());
  }

  private keep(text: string): void {
    if (text === '') return;
    const room = this.limitBytes - this.keptBytes;
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length > room) {
      this.cut = true;
      const head = bytes.toString('utf8', 0, characterBoundaryAtOrBefore(bytes, room));
      if (head !== '') this.emit(head);
      return;
    }
    this.keptBytes += bytes.length;
    this.emit(text);
  }
}

/** The largest offset <= `offset` that does not fall inside a multi-byte character. */
function characterBoundaryAtOrBefore(bytes: Buffer, offset: number): number {
  let boundary = Math.max(0, offset);
  // UTF-8 continuation bytes are 0b10xxxxxx; a character starts at any other byte.
  while (boundary > 0 && ((bytes[boundary] ?? 0) & 0xc0) === 0x80) boundary--;
  return boundary;
}
