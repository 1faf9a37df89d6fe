/** One line of a Kubernetes watch stream. */
export interface WatchEvent {
  type: string;
  object: unknown;
}

/** A watch line that is not a watch event: the stream is broken and must be reopened. */
export class WatchDecodeError extends Error {
  override name = 'WatchDecodeError';
}

/**
 * Reads newline-delimited watch events from an open watch response (decoded to strings) and hands each to
 * `onEvent` synchronously, in order. Resolves when the server ends the stream cleanly (its
 * `timeoutSeconds` elapsed, or it closed the watch); rejects when the connection breaks, a
 * line does not decode, or `onEvent` throws. Unlike client-node's `Watch`, an undecodable
 * line is an error: skipping it would silently lose an event.
 */
export async function readWatchEvents(
  stream: AsyncIterable<string> & { complete?: boolean },
  onEvent: (event: WatchEvent) => void,
): Promise<void> {
  let pending = '';
  for await (const chunk of stream) {
    pending += chunk;
    let start = 0;
    let newline = pending.indexOf('\n', start);
    while (newline >= 0) {
      const line = pending.slice(start, newline);
      start = newline + 1;
      if (line.trim() !== '') onEvent(decodeWatchLine(line));
      newline = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
  // An HTTP response cut short ends its iteration with an error, or at least not `complete`.
  if (stream.complete === false) throw new Error('watch connection closed mid-stream');
  // The API server ends every event with a newline; a tail without one was cut off.
  if (pending.trim() !== '')
    throw new WatchDecodeError(`watch stream ended inside an event (${pending.length} bytes)`);
}

export function decodeWatchLine(line: string): WatchEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    throw new WatchDecodeError(`undecodable watch line (${line.length} bytes): ${line.slice(0, 80)}`);
  }
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    typeof (parsed as { type?: unknown }).type !== 'string' ||
    typeof (parsed as { object?: unknown }).object !== 'object' ||
    (parsed as { object?: unknown }).object === null
  ) {
    throw new WatchDecodeError(`watch line is not a {type, object} event: ${line.slice(0, 80)}`);
  }
  return parsed as WatchEvent;
}
