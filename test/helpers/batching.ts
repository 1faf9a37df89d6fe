import type { BatchOptions } from '../../src/restconf/client.js';

/**
 * The RESTCONF write batching watcher tests run with. `ODLCOE_TEST_BATCH=<max edits>` runs a
 * whole suite with batched writes (a 5 ms window), e.g.
 * `ODLCOE_TEST_BATCH=50 node scripts/run-tests.mjs test/watcher`; unset, writes go single.
 */
export function testBatch(): BatchOptions | undefined {
  const edits = Number(process.env.ODLCOE_TEST_BATCH ?? '1');
  return Number.isInteger(edits) && edits > 1 ? { maxEdits: edits, windowMs: 5 } : undefined;
}
