import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { Registry } from '../common/metrics.js';
import { waitFor } from '../../test/helpers/wait.js';
import { QUEUE_POLL, testQueues } from './testing.js';

/** The value of one series as Prometheus would scrape it (collect callbacks run). */
async function sample(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number | undefined> {
  // Histogram series (`_count`, `_sum`, `_bucket`) sit inside their family under `metricName`.
  const values = (await registry.getMetricsAsJSON()).flatMap((family) =>
    family.values.map((v) => ({ ...v, series: (v as { metricName?: string }).metricName ?? family.name })),
  );
  const match = values.find(
    (v) => v.series === name && Object.entries(labels).every(([k, want]) => v.labels[k] === want),
  );
  return match?.value;
}

const queues = testQueues('pods');
const makeQueue = queues.make;

afterEach(() => queues.closeAll());

describe('work queue metrics', () => {
  it('publishes every series at zero before the first key', async () => {
    const registry = new Registry();
    makeQueue({ registry, reconcile: async () => undefined });
    const text = await registry.metrics();
    for (const name of [
      'odlcoe_workqueue_depth{name="pods"} 0',
      'odlcoe_workqueue_adds_total{name="pods"} 0',
      'odlcoe_workqueue_retries_total{name="pods"} 0',
      'odlcoe_workqueue_reconcile_total{name="pods",result="success"} 0',
      'odlcoe_workqueue_reconcile_total{name="pods",result="error"} 0',
      'odlcoe_workqueue_reconcile_total{name="pods",result="requeue"} 0',
      'odlcoe_workqueue_unfinished_work_seconds{name="pods"} 0',
      'odlcoe_workqueue_longest_running_processor_seconds{name="pods"} 0',
    ]) {
      assert.ok(text.includes(name), `missing ${name}`);
    }
    assert.match(text, /# TYPE odlcoe_workqueue_queue_duration_seconds histogram/);
    assert.match(text, /# TYPE odlcoe_workqueue_work_duration_seconds histogram/);
  });

  it('counts adds, depth, retries, durations and results', async () => {
    const registry = new Registry();
    const release = queues.gate();
    let bFailures = 0;
    let cRequeued = false;
    const queue = makeQueue({
      registry,
      reconcile: async (key) => {
        if (key === 'a') await release.promise;
        if (key === 'b' && bFailures++ < 2) throw new Error('boom');
        if (key === 'c' && !cRequeued) {
          cRequeued = true;
          return { requeueAfterMs: 1 };
        }
        return undefined;
      },
    });
    queue.start();
    for (const key of ['a', 'b', 'b', 'c']) queue.add(key);
    await waitFor(() => queue.inFlight === 1, { ...QUEUE_POLL, what: 'a in flight' });
    const labels = { name: 'pods' };
    assert.equal(await sample(registry, 'odlcoe_workqueue_depth', labels), 2);
    assert.equal(
      await sample(registry, 'odlcoe_workqueue_adds_total', labels),
      3,
      'a duplicate add is not counted',
    );
    release.open();
    await queue.idle();

    assert.equal(await sample(registry, 'odlcoe_workqueue_depth', labels), 0);
    // a, b, c, then b twice more (retries) and c once more (requeue).
    assert.equal(await sample(registry, 'odlcoe_workqueue_adds_total', labels), 6);
    assert.equal(await sample(registry, 'odlcoe_workqueue_retries_total', labels), 2);
    assert.equal(
      await sample(registry, 'odlcoe_workqueue_reconcile_total', { ...labels, result: 'success' }),
      3,
    );
    assert.equal(
      await sample(registry, 'odlcoe_workqueue_reconcile_total', { ...labels, result: 'error' }),
      2,
    );
    assert.equal(
      await sample(registry, 'odlcoe_workqueue_reconcile_total', { ...labels, result: 'requeue' }),
      1,
    );
    const runs = 6;
    assert.equal(await sample(registry, 'odlcoe_workqueue_work_duration_seconds_count', labels), runs);
    assert.equal(await sample(registry, 'odlcoe_workqueue_queue_duration_seconds_count', labels), runs);
    assert.equal(await sample(registry, 'odlcoe_workqueue_unfinished_work_seconds', labels), 0);
  });

  it('reports in-flight time while a reconcile runs and zero once the queue stops', async () => {
    const registry = new Registry();
    const release = queues.gate();
    const queue = makeQueue({ registry, workers: 2, reconcile: () => release.promise });
    queue.start();
    queue.add('a');
    queue.add('b');
    await waitFor(() => queue.inFlight === 2, { ...QUEUE_POLL, what: 'both in flight' });
    const labels = { name: 'pods' };
    // Poll rather than sleep: the values grow with the monotonic clock while both run.
    let unfinished = 0;
    let longest = 0;
    const deadline = Date.now() + 10_000;
    while (!(longest > 0 && unfinished > longest) && Date.now() < deadline) {
      unfinished = (await sample(registry, 'odlcoe_workqueue_unfinished_work_seconds', labels)) ?? 0;
      longest = (await sample(registry, 'odlcoe_workqueue_longest_running_processor_seconds', labels)) ?? 0;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    assert.ok(longest > 0, 'longest running reconcile is reported');
    assert.ok(unfinished > longest, 'unfinished work sums both reconciles');
    release.open();
    await queue.shutdown({ drain: true });
    assert.equal(await sample(registry, 'odlcoe_workqueue_unfinished_work_seconds', labels), 0);
    assert.equal(await sample(registry, 'odlcoe_workqueue_longest_running_processor_seconds', labels), 0);
  });

  it('two queues share one registry under their own names; a live name cannot be taken twice', async () => {
    const registry = new Registry();
    const pods = makeQueue({ registry, name: 'pods', reconcile: async () => undefined });
    const nodes = makeQueue({ registry, name: 'nodes', reconcile: async () => undefined });
    assert.throws(
      () => makeQueue({ registry, name: 'pods', reconcile: async () => undefined }),
      /a work queue named "pods" is already running on this metrics registry/,
    );
    pods.start();
    nodes.start();
    pods.add('p1');
    pods.add('p2');
    nodes.add('n1');
    await Promise.all([pods.idle(), nodes.idle()]);
    assert.equal(await sample(registry, 'odlcoe_workqueue_adds_total', { name: 'pods' }), 2);
    assert.equal(await sample(registry, 'odlcoe_workqueue_adds_total', { name: 'nodes' }), 1);
    // After shutdown the name is free again (a new leader term builds a new queue).
    await pods.shutdown();
    const again = makeQueue({ registry, name: 'pods', reconcile: async () => undefined });
    again.start();
    again.add('p3');
    await again.idle();
    assert.equal(await sample(registry, 'odlcoe_workqueue_adds_total', { name: 'pods' }), 3);
  });
});
