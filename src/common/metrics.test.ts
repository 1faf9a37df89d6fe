import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createRegistry, Gauge, type Registry } from './metrics.js';

/** A forced full collection, whether or not node runs with --expose-gc. */
function gc(): void {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('createRegistry', () => {
  it('carries the process metrics', async () => {
    const text = await createRegistry('odlcoe_test_').metrics();
    assert.match(text, /^odlcoe_test_process_cpu_user_seconds_total /m);
    assert.match(text, /^# TYPE odlcoe_test_nodejs_gc_duration_seconds histogram/m);
  });

  it('leaves a daemon’s registry, and what its metrics hold, to the garbage collector once dropped', async () => {
    const dropped = daemonRegistry();
    // A few turns of the event loop (no timing): the WeakRefs' targets are kept until the job ends.
    for (let i = 0; i < 3; i += 1) {
      await turn();
      gc();
    }
    assert.equal(dropped.registry.deref(), undefined, 'the registry was collected');
    assert.equal(dropped.held.deref(), undefined, 'what its metrics held was collected');
  });
});

/**
 * A daemon's registry with a gauge holding what a watcher's progress gauges hold through their
 * collect functions (its caches), dropped at once: weak references to both.
 */
function daemonRegistry(): { registry: WeakRef<Registry>; held: WeakRef<object> } {
  const held = { cache: Array.from({ length: 1000 }, (_, i) => i) };
  const registry = createRegistry('odlcoe_test_');
  registry.registerMetric(
    new Gauge({
      name: 'odlcoe_test_cache_size',
      help: 'the size of what the daemon holds',
      registers: [],
      collect() {
        this.set(held.cache.length);
      },
    }),
  );
  return { registry: new WeakRef(registry), held: new WeakRef(held) };
}
