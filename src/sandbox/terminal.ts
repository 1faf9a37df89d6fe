/**
 * Live progress on a terminal: on a TTY the block of lines is redrawn in place; otherwise
 * (a pipe, a CI log) a compact line is printed only when something changed, so a log shows
 * each step once instead of a screenful per poll.
 */

export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

export class LiveBlock {
  private drawn = 0;
  private lastPlain = '';

  constructor(
    private readonly out: Output,
    private readonly tty = out.isTTY === true,
  ) {}

  /** Shows `lines` (the TTY redraw) or, off a TTY, `plain` when it differs from the last one. */
  update(lines: readonly string[], plain: string): void {
    if (this.tty) {
      // Up over the previous block, then rewrite each line in full.
      let text = this.drawn > 0 ? `\x1b[${this.drawn}A` : '';
      for (const line of lines) text += `\x1b[2K${line}\n`;
      for (let i = lines.length; i < this.drawn; i += 1) text += '\x1b[2K\n';
      this.out.write(text);
      this.drawn = Math.max(lines.length, this.drawn);
      return;
    }
    if (plain === this.lastPlain) return;
    this.lastPlain = plain;
    this.out.write(`${plain}\n`);
  }

  /** The next update starts a new block below this one. */
  finish(): void {
    this.drawn = 0;
    this.lastPlain = '';
  }
}
