import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ElanTagPool, parentInterfaceName } from './odl-writebacks.js';
import type { Emulator } from './server.js';
import { call, eventually, startQuiet } from './testing.js';

const ELAN = '/rests/data/elan:elan-instances/elan-instance';
const IFACES = '/rests/data/ietf-interfaces:interfaces/interface';
const STATE = '/rests/data/ietf-interfaces:interfaces-state/interface';

type Entry = Record<string, unknown>;

async function elanEntry(emu: Emulator, name: string): Promise<Entry | undefined> {
  const reply = await call(emu.url, 'GET', `${ELAN}=${name}?content=config`);
  if (reply.status !== 200) return undefined;
  return (reply.json() as Record<string, Entry[]>)['elan:elan-instance']![0];
}

/** Waits for ODL's write-back and returns the entry. */
function writtenBack(emu: Emulator, name: string): Promise<Entry> {
  return eventually(
    async () => {
      const entry = await elanEntry(emu, name);
      return entry && entry['elan-tag'] !== undefined ? entry : undefined;
    },
    10_000,
    `elan-tag of ${name}`,
  );
}

describe('ELAN tag pool', () => {
  it('gives each name one tag from 5000 up and never hands an allocated tag to another name', () => {
    const pool = new ElanTagPool();
    assert.equal(pool.allocate('a'), 5000);
    assert.equal(pool.allocate('b'), 5001);
    assert.equal(pool.allocate('a'), 5000);
    pool.claim('c', 5002);
    assert.equal(pool.allocate('d'), 5003);
    pool.release('a');
    assert.equal(pool.allocate('e'), 5004, 'a released tag is not reused while fresh ones remain');
  });
});

describe('ODL write-backs', () => {
  let emu: Emulator;
  before(async () => {
    emu = await startQuiet({ fillParentInterface: true });
  });
  after(() => emu.close());

  it('merges a unique elan-tag and mac-timeout 300 into new elan-instances, shortly after the answer', async () => {
    const names = ['w1', 'w2', 'w3'];
    for (const name of names) {
      assert.equal(
        (
          await call(emu.url, 'PUT', `${ELAN}=${name}`, {
            'elan:elan-instance': [{ 'elan-instance-name': name }],
          })
        ).status,
        201,
      );
    }
    const entries = await Promise.all(names.map((n) => writtenBack(emu, n)));
    const tags = entries.map((e) => e['elan-tag'] as number);
    assert.equal(new Set(tags).size, names.length, 'tags are unique');
    for (const tag of tags) assert.ok(tag >= 5000);
    for (const e of entries) assert.equal(e['mac-timeout'], 300);
  });

  it('keeps a client mac-timeout, keeps the tag of a replaced entry, and frees it on delete', async () => {
    await call(emu.url, 'PUT', `${ELAN}=k1`, {
      'elan:elan-instance': [{ 'elan-instance-name': 'k1', 'mac-timeout': 60 }],
    });
    const first = await writtenBack(emu, 'k1');
    assert.equal(first['mac-timeout'], 60);
    // A client that replays its own view (without ODL's leaves) gets the same tag back.
    await call(emu.url, 'PUT', `${ELAN}=k1`, {
      'elan:elan-instance': [{ 'elan-instance-name': 'k1', description: 'again' }],
    });
    const again = await eventually(async () => {
      const e = await elanEntry(emu, 'k1');
      return e?.description === 'again' && e['elan-tag'] !== undefined ? e : undefined;
    });
    assert.equal(again['elan-tag'], first['elan-tag']);
    assert.equal(again['mac-timeout'], 300);
    await call(emu.url, 'DELETE', `${ELAN}=k1`);
    await call(emu.url, 'PUT', `${ELAN}=k2`, { 'elan:elan-instance': [{ 'elan-instance-name': 'k2' }] });
    const other = await writtenBack(emu, 'k2');
    assert.notEqual(other['elan-tag'], first['elan-tag']);
  });

  it('writes back after a whole-container PUT too', async () => {
    const body = {
      'elan:elan-instances': {
        'elan-instance': [{ 'elan-instance-name': 'c1' }, { 'elan-instance-name': 'c2' }],
      },
    };
    await call(emu.url, 'PUT', '/rests/data/elan:elan-instances', body);
    const [c1, c2] = await Promise.all([writtenBack(emu, 'c1'), writtenBack(emu, 'c2')]);
    assert.notEqual(c1['elan-tag'], c2['elan-tag']);
    assert.equal(await elanEntry(emu, 'w1'), undefined, 'the container PUT replaced the earlier entries');
  });

  it('fills the parent interface of l2vlan interfaces and keeps interfaces-state for them', async () => {
    const name = 'default:nginx-1';
    await call(emu.url, 'PUT', `${IFACES}=${name}`, {
      'ietf-interfaces:interface': [
        { name, type: 'iana-if-type:l2vlan', enabled: true, 'odl-interface:l2vlan-mode': 'trunk' },
      ],
    });
    const config = await eventually(async () => {
      const reply = await call(
        emu.url,
        'GET',
        `${IFACES}=${name}/odl-interface:parent-interface?content=config`,
      );
      return reply.status === 200 ? (reply.json() as Record<string, string>) : undefined;
    });
    assert.deepEqual(config, { 'odl-interface:parent-interface': parentInterfaceName(name) });
    assert.match(parentInterfaceName(name), /^tap[0-9a-f]{11}$/);
    const state = await eventually(async () => {
      const reply = await call(
        emu.url,
        'GET',
        `/restconf/operational/ietf-interfaces:interfaces-state/interface/${name}`,
      );
      return reply.status === 200
        ? ((reply.json() as Record<string, Entry[]>).interface![0] as Entry)
        : undefined;
    });
    assert.equal(state['oper-status'], 'up');
    assert.equal(state['admin-status'], 'up');
    assert.equal(state.type, 'iana-if-type:l2vlan');
    assert.deepEqual(state['lower-layer-if'], [parentInterfaceName(name)]);
    assert.equal(typeof state['if-index'], 'number');

    await call(emu.url, 'PATCH', `${IFACES}=${name}`, {
      'ietf-interfaces:interface': [{ name, enabled: false }],
    });
    await eventually(async () => {
      const reply = await call(emu.url, 'GET', `${STATE}=${name}/oper-status?content=nonconfig`);
      return reply.status === 200 &&
        (reply.json() as Record<string, string>)['ietf-interfaces:oper-status'] === 'down'
        ? true
        : undefined;
    });
    await call(emu.url, 'DELETE', `${IFACES}=${name}`);
    await eventually(async () =>
      (await call(emu.url, 'GET', `${STATE}=${name}?content=nonconfig`)).status === 404 ? true : undefined,
    );
  });

  it('leaves interfaces that are not l2vlan, or already have a parent, alone', async () => {
    await call(emu.url, 'PUT', `${IFACES}=tun1`, {
      'ietf-interfaces:interface': [{ name: 'tun1', type: 'iana-if-type:tunnel' }],
    });
    await call(emu.url, 'PUT', `${IFACES}=own`, {
      'ietf-interfaces:interface': [
        { name: 'own', type: 'iana-if-type:l2vlan', 'odl-interface:parent-interface': 'veth0a0b0c0d' },
      ],
    });
    // The state entry of `own` proves the write-back pass ran after both writes.
    await eventually(async () =>
      (await call(emu.url, 'GET', `${STATE}=own`)).status === 200 ? true : undefined,
    );
    const own = (await call(emu.url, 'GET', `${IFACES}=own/parent-interface`)).json();
    assert.deepEqual(own, { 'odl-interface:parent-interface': 'veth0a0b0c0d' });
    assert.equal((await call(emu.url, 'GET', `${IFACES}=tun1/parent-interface`)).status, 404);
    assert.equal((await call(emu.url, 'GET', `${STATE}=tun1`)).status, 404, 'no state without a port');
  });
});

describe('without fillParentInterface', () => {
  let emu: Emulator;
  before(async () => {
    emu = await startQuiet();
  });
  after(() => emu.close());

  it('never writes parent-interface', async () => {
    await call(emu.url, 'PUT', `${IFACES}=p1`, {
      'ietf-interfaces:interface': [{ name: 'p1', type: 'iana-if-type:l2vlan' }],
    });
    await call(emu.url, 'PUT', `${ELAN}=marker`, {
      'elan:elan-instance': [{ 'elan-instance-name': 'marker' }],
    });
    await writtenBack(emu, 'marker');
    assert.equal((await call(emu.url, 'GET', `${IFACES}=p1/parent-interface`)).status, 404);
  });
});

describe('interfaces-state timing (operDelayMs, operStatus)', () => {
  const l2vlan = (name: string) => ({
    'ietf-interfaces:interface': [{ name, type: 'iana-if-type:l2vlan', enabled: true }],
  });
  const stateStatus = async (emu: Emulator, name: string) =>
    (await call(emu.url, 'GET', `${STATE}=${name}?content=nonconfig`)).status;

  it('publishes a new interface’s state only after the delay, and drops a pending one when the interface goes', async () => {
    const emu = await startQuiet({ fillParentInterface: true, operDelayMs: 400 });
    try {
      await call(emu.url, 'PUT', `${IFACES}=default:slow`, l2vlan('default:slow'));
      // The parent is filled with the other write-backs; the state comes only after the delay.
      await eventually(async () =>
        (await call(emu.url, 'GET', `${IFACES}=default:slow/parent-interface`)).status === 200
          ? true
          : undefined,
      );
      assert.equal(await stateStatus(emu, 'default:slow'), 404, 'no state before the delay');
      const state = await eventually(async () => {
        const reply = await call(emu.url, 'GET', `${STATE}=default:slow?content=nonconfig`);
        return reply.status === 200 ? (reply.json() as Record<string, Entry[]>) : undefined;
      });
      assert.equal(state['ietf-interfaces:interface']![0]!['oper-status'], 'up');

      // Deleted before its delay ran out: the state never appears.
      await call(emu.url, 'PUT', `${IFACES}=default:gone`, l2vlan('default:gone'));
      await eventually(async () =>
        (await call(emu.url, 'GET', `${IFACES}=default:gone/parent-interface`)).status === 200
          ? true
          : undefined,
      );
      await call(emu.url, 'DELETE', `${IFACES}=default:gone`);
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.equal(await stateStatus(emu, 'default:gone'), 404);
    } finally {
      await emu.close();
    }
  });

  it('with operStatus false never publishes interfaces-state', async () => {
    const emu = await startQuiet({ fillParentInterface: true, operStatus: false });
    try {
      await call(emu.url, 'PUT', `${IFACES}=default:never`, l2vlan('default:never'));
      await call(emu.url, 'PUT', `${ELAN}=marker`, {
        'elan:elan-instance': [{ 'elan-instance-name': 'marker' }],
      });
      await writtenBack(emu, 'marker');
      assert.equal(
        (await call(emu.url, 'GET', `${IFACES}=default:never/parent-interface`)).status,
        200,
        'the parent is still filled',
      );
      assert.equal(await stateStatus(emu, 'default:never'), 404);
    } finally {
      await emu.close();
    }
  });
});
