/**
 * A namespace longer than the 40-character `vpn-name` limit gets its VPN under the shortened
 * name, and its pods' vpn-interfaces point at it, next to a namespace of ordinary length.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import {
  createNamespace,
  createNode,
  createPod,
  readOdl,
  setPodIp,
  startEnv,
  startTestWatcher,
  waitFor,
  type Env,
} from './testing.js';
import type { Watcher } from '../../src/watcher/watcher.js';

const LONG = 'a-namespace-whose-name-is-longer-than-forty-chars'; // 49 characters
// Its first 23 characters, '.', and the first 16 hex digits of its SHA-256 (computed apart
// from the code under test: python3 -c "import hashlib; print(hashlib.sha256(b'...').hexdigest())").
const LONG_VPN = 'a-namespace-whose-name-.0c910c3b6bf36e5d';

describe('a namespace longer than the vpn-name limit', () => {
  let env: Env | undefined;
  let watcher: Watcher | undefined;
  after(async () => {
    await watcher?.close();
    await env?.close();
  });

  it('gets its VPN under the shortened name and keeps it', async () => {
    env = await startEnv({ profile: 'sodium', dialect: 'rfc8040' });
    watcher = await startTestWatcher(env, { gracePeriodMs: 300 });
    await createNode(env, 'node-a', '192.168.1.1', '10.244.1.0/24');
    await createNamespace(env, LONG);
    await createNamespace(env, 'short');
    await watcher.ready();
    await createPod(env, LONG, 'p1', 'node-a');
    await setPodIp(env, LONG, 'p1', '10.244.1.2');
    await createPod(env, 'short', 'p2', 'node-a');
    await setPodIp(env, 'short', 'p2', '10.244.1.3');

    const e = env;
    await waitFor(async () => (await readOdl(e))['vpn-interface'].length === 2, {
      what: 'both vpn-interfaces',
      timeoutMs: 20_000,
    });
    await watcher.idle();
    // Past the grace period: a VPN wrongly judged unneeded would be gone by now.
    await new Promise((resolve) => setTimeout(resolve, 600));
    await watcher.idle();
    const odl = await readOdl(e);
    assert.deepEqual(odl['vpn-instance'].map((v) => v['vpn-instance-name']).sort(), [LONG_VPN, 'short']);
    const vpnOf = (name: string) =>
      (
        odl['vpn-interface'].find((v) => v['name'] === name)?.['vpn-instance-names'] as
          { 'vpn-name': string }[] | undefined
      )?.map((v) => v['vpn-name']);
    assert.deepEqual(vpnOf(`${LONG}:p1`), [LONG_VPN]);
    assert.deepEqual(vpnOf('short:p2'), ['short']);
  });
});
