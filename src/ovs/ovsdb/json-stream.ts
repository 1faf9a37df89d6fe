import { StringDecoder } from 'node:string_decoder';

/**
 * Splits the byte stream of an OVSDB JSON-RPC connection into JSON texts. RFC 7047 sends
 * messages back to back with no delimiter (ovsdb-server writes one object after another),
 * so a message ends where the nesting depth of its outermost object returns to zero,
 * outside strings.
 */
export class JsonStreamParser {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';
  /** Where scanning resumes in `buffer` (everything before it is inside the current text). */
  private scanned = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Largest message accepted; a runaway peer must not grow the buffer without bound. */
  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  /** Feeds bytes; returns the complete JSON values they finished, in order. */
  push(chunk: Buffer): unknown[] {
    this.buffer += this.decoder.write(chunk);
    const out: unknown[] = [];
    let start = 0;
    const text = this.buffer;
    for (let i = this.scanned; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c /* \ */) this.escaped = true;
        else if (c === 0x22 /* " */) this.inString = false;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b /* { */ || c === 0x5b /* [ */) this.depth++;
      else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
        this.depth--;
        if (this.depth < 0) throw new Error('OVSDB stream: unbalanced JSON');
        if (this.depth === 0) {
          out.push(JSON.parse(text.slice(start, i + 1)));
          start = i + 1;
        }
      } else if (this.depth === 0 && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
        throw new Error(`OVSDB stream: unexpected ${JSON.stringify(text[i])} between messages`);
      }
    }
    this.buffer = text.slice(start);
    this.scanned = this.buffer.length;
    if (this.buffer.length > this.maxBytes)
      throw new Error(`OVSDB message larger than ${this.maxBytes} bytes`);
    return out;
  }
}
