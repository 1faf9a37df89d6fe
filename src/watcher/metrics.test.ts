import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from '../common/metrics.js';
import { WatcherMetrics } from './metrics.js';

/** The object gauges of one kind as Prometheus reads them. */
async function gauges(registry: Registry, kind: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const state of ['desired', 'applied', 'foreign']) {
    const m = await registry.getSingleMetric(`odlcoe_watcher_objects_${state}`)?.get();
    out[state] = m?.values.find((v) => v.labels.kind === kind)?.value ?? NaN;
  }
  return out;
}

describe('WatcherMetrics object states', () => {
  it('counts each object once in its latest state, and forgets an undesired one', async () => {
    const registry = new Registry();
    const m = new WatcherMetrics(registry);
    m.objectState('interface', 'a', 'pending');
    m.objectState('interface', 'b', 'pending');
    m.objectState('interface', 'a', 'applied');
    m.objectState('interface', 'a', 'applied');
    m.objectState('interface', 'c', 'foreign');
    m.objectState('elanInstance', 'e', 'applied');
    assert.deepEqual(await gauges(registry, 'interface'), { desired: 3, applied: 1, foreign: 1 });
    assert.deepEqual(m.objectTotals(), { desired: 4, applied: 2 });

    m.objectState('interface', 'c', 'applied'); // a foreign holder went, odlcoe wrote its own
    m.objectState('interface', 'b', 'undesired');
    m.objectState('interface', 'z', 'undesired'); // never needed: nothing to forget
    assert.deepEqual(await gauges(registry, 'interface'), { desired: 2, applied: 2, foreign: 0 });
    assert.equal(m.objectStates.get('interface')?.names.size, 2);

    m.reset();
    assert.deepEqual(await gauges(registry, 'interface'), { desired: 0, applied: 0, foreign: 0 });
    assert.deepEqual(m.objectTotals(), { desired: 0, applied: 0 });
  });
});
