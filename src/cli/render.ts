/** Plain-text layout for the human output: aligned tables and indented trees, no colours. */

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function indent(text: string, by = 2): string {
  const pad = ' '.repeat(by);
  return text
    .split('\n')
    .map((l) => (l === '' ? l : pad + l))
    .join('\n');
}

/** `-` for an absent value, so table cells never collapse. */
export function cell(value: string | number | boolean | null | undefined): string {
  return value === undefined || value === null || value === '' ? '-' : String(value);
}

export function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}

/** A table indented under the line before it (a section's title). */
export function indentedTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  return indent(table(headers, rows));
}
