import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegistry } from '../common/metrics.js';
import { WatcherMetrics } from './metrics.js';

describe('WatcherMetrics object states', () => {
  const gauges = async (registry: ReturnType<typeof createRegistry>, kind: string) => {
    const read = async (name: string) => {
      const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
      return values.find((v) => v.labels.kind === kind)?.value;
    };
    return {
      desired: await read('odlcoe_watcher_objects_desired'),
      applied: await read('odlcoe_watcher_objects_applied'),
      foreign: await read('odlcoe_watcher_objects_foreign'),
    };
  };

  it('counts each name once, in its last state, per kind', async () => {
    const registry = createRegistry();
    const m = new WatcherMetrics(registry);
    m.objectState('interface', 'a', 'pending');
    m.objectState('interface', 'b', 'applied');
    m.objectState('interface', 'c', 'foreign');
    m.objectState('interface', 'a', 'applied');
    m.objectState('interface', 'b', 'applied'); // again: no change
    m.objectState('elanInstance', 'e', 'undesired'); // a kind seen reads 0
    assert.deepEqual(await gauges(registry, 'interface'), { desired: 3, applied: 2, foreign: 1 });
    assert.deepEqual(await gauges(registry, 'elanInstance'), { desired: 0, applied: 0, foreign: 0 });
    assert.deepEqual(m.objectTotals(), { desired: 3, applied: 2 });

    m.objectState('interface', 'c', 'applied');
    m.objectState('interface', 'a', 'undesired');
    m.objectState('interface', 'z', 'undesired'); // never needed: nothing to take away
    assert.deepEqual(await gauges(registry, 'interface'), { desired: 2, applied: 2, foreign: 0 });

    m.reset();
    assert.deepEqual(await gauges(registry, 'interface'), { desired: 0, applied: 0, foreign: 0 });
    assert.deepEqual(m.objectTotals(), { desired: 0, applied: 0 });
    m.objectState('interface', 'b', 'pending');
    assert.deepEqual(await gauges(registry, 'interface'), { desired: 1, applied: 0, foreign: 0 });
  });
});
