import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { ATTACHMENTS_ANNOTATION, formatAttachments, type AttachmentRecord } from '../netvirt/attachments.js';
import { AttachmentRecordWaiter, lookUpRecord, type PodStore } from './attachment-record.js';
import { CniError } from './cni/error.js';

const blue: AttachmentRecord = {
  network: 'default/blue',
  interfaceName: 'default:web:net1',
  ips: ['10.50.0.5/24'],
  mac: '0a:58:0a:32:00:05',
  routes: [],
};

const pod = (records?: Record<string, AttachmentRecord>, uid = 'u-1', raw?: string): V1Pod => ({
  metadata: {
    name: 'web',
    namespace: 'default',
    uid,
    annotations:
      raw !== undefined
        ? { [ATTACHMENTS_ANNOTATION]: raw }
        : records
          ? { [ATTACHMENTS_ANNOTATION]: formatAttachments(new Map(Object.entries(records))) }
          : {},
  },
});

/** A pod store as the informer is one: a map, and the changes it delivers. */
class Pods implements PodStore {
  private readonly pods = new Map<string, V1Pod>();
  private readonly listeners = new Set<() => void>();
  set(p: V1Pod): void {
    this.pods.set(`${p.metadata?.namespace}/${p.metadata?.name}`, p);
    for (const fn of this.listeners) fn();
  }
  get(key: string): V1Pod | undefined {
    return this.pods.get(key);
  }
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  get watching(): number {
    return this.listeners.size;
  }
}

const query = { namespace: 'default', name: 'web', ifName: 'net1' };

describe('lookUpRecord', () => {
  it('finds the record of CNI_IFNAME, and says precisely what is missing otherwise', () => {
    assert.deepEqual(lookUpRecord(pod({ net1: blue }), query), { found: { record: blue, podUid: 'u-1' } });
    assert.deepEqual(lookUpRecord(undefined, query), {
      missing: 'pod default/web is not known on this node yet',
    });
    assert.deepEqual(lookUpRecord(pod(), query), {
      missing: `pod default/web has no annotation ${ATTACHMENTS_ANNOTATION}`,
    });
    assert.deepEqual(lookUpRecord(pod({ net2: blue }), query), {
      missing: `pod default/web has no record for net1 in ${ATTACHMENTS_ANNOTATION}`,
    });
    assert.deepEqual(lookUpRecord(pod({ net1: blue }, 'u-2'), { ...query, uid: 'u-1' }), {
      missing: 'pod default/web is known with UID u-2, the request is for u-1',
    });
    assert.deepEqual(lookUpRecord(pod({ net1: blue }), { ...query, mismatch: () => 'is stale' }), {
      missing: 'pod default/web: the record for net1 is stale',
    });
  });

  it('refuses an annotation that does not parse at once (waiting cannot repair it)', () => {
    assert.throws(
      () => lookUpRecord(pod(undefined, 'u-1', '{"net1":{"network":"x"}}'), query),
      (err: unknown) =>
        err instanceof CniError &&
        err.code === 106 &&
        /annotation odlcoe.io\/attachments is unusable/.test(err.message),
    );
  });
});

describe('AttachmentRecordWaiter', () => {
  it('resolves once the informer shows the record, and stops listening', async () => {
    const pods = new Pods();
    pods.set(pod());
    const waiting = new AttachmentRecordWaiter(pods, 5_000).wait(query, new AbortController().signal);
    assert.equal(pods.watching, 1);
    pods.set(pod({ net1: blue }));
    assert.deepEqual(await waiting, { record: blue, podUid: 'u-1' });
    assert.equal(pods.watching, 0);
  });

  it('fails with "try again later" naming what it waited for when the time is up', async () => {
    const pods = new Pods();
    pods.set(pod({ net2: blue }));
    await assert.rejects(
      new AttachmentRecordWaiter(pods, 50).wait(query, new AbortController().signal),
      (err: unknown) =>
        err instanceof CniError &&
        err.code === 11 &&
        err.message ===
          `no allocation for net1 of pod default/web within 0.05 s: pod default/web has no record for net1 in ${ATTACHMENTS_ANNOTATION}`,
    );
    assert.equal(pods.watching, 0);
  });

  it('gives up when the request is abandoned', async () => {
    const pods = new Pods();
    const controller = new AbortController();
    const waiting = new AttachmentRecordWaiter(pods, 5_000).wait(query, controller.signal);
    controller.abort(new Error('deadline'));
    await assert.rejects(
      waiting,
      (err: unknown) => err instanceof CniError && err.code === 11 && /deadline/.test(err.message),
    );
    assert.equal(pods.watching, 0);
  });
});
