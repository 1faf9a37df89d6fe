import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXTERNAL_ID, isExtraInterfacePort, isPodPort, parseIfaceId, podOfPort } from './external-ids.js';

describe('pod port external_ids', () => {
  it('splits an iface-id at its first colon (a pod name never has one, the namespace neither)', () => {
    assert.deepEqual(parseIfaceId('default:web-0'), { namespace: 'default', name: 'web-0' });
    assert.deepEqual(parseIfaceId('ns:pod:x'), { namespace: 'ns', name: 'pod:x' });
  });

  it('refuses an absent or malformed iface-id', () => {
    for (const bad of [undefined, '', 'no-colon', ':web-0', 'default:'])
      assert.equal(parseIfaceId(bad), undefined, JSON.stringify(bad));
  });

  it("recognises odlcoe's pod ports by their veth name and container-id, and nothing else", () => {
    const name = 'veth6ad2516c'; // the agent's hostVethName('c0ffee', 'eth0')
    const port = (n: string, ids: Record<string, string>) => ({ name: n, ofport: 1, externalIds: ids });
    assert.equal(isPodPort(port(name, { [EXTERNAL_ID.containerId]: 'c0ffee' })), true);
    assert.equal(isPodPort(port(name, { [EXTERNAL_ID.ifaceId]: 'default:web-0' })), false, 'no container-id');
    assert.equal(isPodPort(port(name, { [EXTERNAL_ID.containerId]: '' })), false, 'empty container-id');
    assert.equal(
      isPodPort(port('br-int', { [EXTERNAL_ID.containerId]: 'c0ffee' })),
      false,
      'the bridge port',
    );
    assert.equal(isPodPort(port('tun0', { [EXTERNAL_ID.containerId]: 'c0ffee' })), false, 'a tunnel port');
  });

  it("finds an extra interface's pod in odlcoe-pod, never in its iface-id (the watcher's attachment name)", () => {
    const port = (ids: Record<string, string>) => ({
      name: 'veth0a1b2c3d',
      ofport: 1,
      externalIds: { [EXTERNAL_ID.containerId]: 'c0ffee', ...ids },
    });
    const primary = port({ [EXTERNAL_ID.ifaceId]: 'default:web-0' });
    assert.equal(isExtraInterfacePort(primary), false);
    assert.deepEqual(podOfPort(primary.externalIds), { namespace: 'default', name: 'web-0' });
    const extra = port({
      [EXTERNAL_ID.ifaceId]: 'other:thing:net1',
      [EXTERNAL_ID.network]: 'default/blue',
      [EXTERNAL_ID.pod]: 'default/web-0',
    });
    assert.equal(isExtraInterfacePort(extra), true);
    assert.deepEqual(podOfPort(extra.externalIds), { namespace: 'default', name: 'web-0' });
    for (const bad of ['', 'web-0', '/web-0', 'default/', 'a/b/c'])
      assert.equal(
        podOfPort(port({ [EXTERNAL_ID.network]: 'default/blue', [EXTERNAL_ID.pod]: bad }).externalIds),
        undefined,
        bad,
      );
    assert.equal(
      podOfPort(
        port({ [EXTERNAL_ID.ifaceId]: 'default:web-0', [EXTERNAL_ID.network]: 'default/blue' }).externalIds,
      ),
      undefined,
      'no odlcoe-pod: the iface-id is not read',
    );
  });
});
