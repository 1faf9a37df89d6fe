import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { WatchDecodeError, decodeWatchLine, readWatchEvents } from './watch-stream.js';
import type { WatchEvent } from './watch-stream.js';

const added = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' } } });
const bookmark = JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } });

async function collect(chunks: string[], complete?: boolean): Promise<WatchEvent[]> {
  const stream = Object.assign(Readable.from(chunks), complete === undefined ? {} : { complete });
  const events: WatchEvent[] = [];
  await readWatchEvents(stream, (e) => events.push(e));
  return events;
}

describe('watch stream', () => {
  it('reassembles events split across chunks and several events in one chunk', async () => {
    const text = `${added}\n${bookmark}\n`;
    const events = await collect([
      text.slice(0, 7),
      text.slice(7, added.length + 3),
      text.slice(added.length + 3),
    ]);
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'BOOKMARK'],
    );
  });

  it('keeps multi-byte characters intact', async () => {
    const line = JSON.stringify({
      type: 'ADDED',
      object: { metadata: { name: 'x', annotations: { a: 'päd ✓' } } },
    });
    const [event] = await collect([`${line}\n`]);
    assert.deepEqual(event?.object, { metadata: { name: 'x', annotations: { a: 'päd ✓' } } });
  });

  it('fails on an undecodable line instead of skipping it', async () => {
    await assert.rejects(collect([`${added}\n{not json\n`]), WatchDecodeError);
    assert.throws(() => decodeWatchLine('{"type":"ADDED"}'), /not a \{type, object\} event/);
    assert.throws(() => decodeWatchLine('[1]'), WatchDecodeError);
  });

  it('fails when the stream ends inside an event or the response was cut short', async () => {
    await assert.rejects(collect([`${added}\n${bookmark.slice(0, 10)}`]), /ended inside an event/);
    await assert.rejects(collect([`${added}\n`], false), /closed mid-stream/);
  });

  it('stops at the first event the handler rejects', async () => {
    const stream = Readable.from([`${added}\n${bookmark}\n`]);
    const seen: string[] = [];
    await assert.rejects(
      readWatchEvents(stream, (e) => {
        seen.push(e.type);
        throw new Error('gone');
      }),
      /gone/,
    );
    assert.deepEqual(seen, ['ADDED']);
  });
});
