import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { call, eventually, startQuiet } from './testing.js';

const ELAN = '/rests/data/elan:elan-instances/elan-instance';

describe('record and state files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'odlcoe-emulator-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('records every accepted write as one JSON line, and nothing else', async () => {
    const recordFile = join(dir, 'record.jsonl');
    const emu = await startQuiet({ recordFile });
    try {
      await call(emu.url, 'PUT', `${ELAN}=r1`, { 'elan:elan-instance': [{ 'elan-instance-name': 'r1' }] });
      await call(emu.url, 'PUT', `${ELAN}=r1`, { 'elan:elan-instance': [{ 'elan-instance-name': 'bad' }] });
      await call(emu.url, 'GET', `${ELAN}=r1`);
      await call(emu.url, 'POST', '/restconf/config/elan:elan-interfaces', {
        'elan-interface': [{ name: 'i1', 'elan-instance-name': 'r1' }],
      });
      await call(emu.url, 'DELETE', `/restconf/config/elan:elan-interfaces/elan-interface/i1`);
    } finally {
      await emu.close();
    }
    const lines = readFileSync(recordFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(lines, [
      {
        method: 'PUT',
        url: `${ELAN}=r1`,
        status: 201,
        body: { 'elan:elan-instance': [{ 'elan-instance-name': 'r1' }] },
        request: 1,
      },
      {
        method: 'POST',
        url: '/restconf/config/elan:elan-interfaces',
        status: 204,
        body: { 'elan-interface': [{ name: 'i1', 'elan-instance-name': 'r1' }] },
        request: 2,
      },
      {
        method: 'DELETE',
        url: '/restconf/config/elan:elan-interfaces/elan-interface/i1',
        status: 200,
        body: null,
        request: 3,
      },
    ]);
  });

  it('keeps the config datastore across a restart, write-backs included; operational is rebuilt', async () => {
    const stateFile = join(dir, 'state.json');
    const first = await startQuiet({ stateFile, fillParentInterface: true });
    await call(first.url, 'PUT', `${ELAN}=s1`, { 'elan:elan-instance': [{ 'elan-instance-name': 's1' }] });
    await call(first.url, 'PUT', '/rests/data/ietf-interfaces:interfaces/interface=if1', {
      'ietf-interfaces:interface': [
        {
          name: 'if1',
          type: 'iana-if-type:l2vlan',
          'odl-interface:datapath-node-identifier': '18446744073709551615',
        },
      ],
    });
    const tag = await eventually(async () => {
      const reply = await call(first.url, 'GET', `${ELAN}=s1/elan-tag`);
      return reply.status === 200 ? (reply.json() as Record<string, number>)['elan:elan-tag'] : undefined;
    });
    await first.close();

    const second = await startQuiet({ stateFile, fillParentInterface: true });
    try {
      const entry = await call(second.url, 'GET', `${ELAN}=s1?content=config`);
      assert.equal(entry.status, 200);
      assert.deepEqual(entry.json(), {
        'elan:elan-instance': [{ 'elan-instance-name': 's1', 'elan-tag': tag, 'mac-timeout': 300 }],
      });
      const iface = await call(
        second.url,
        'GET',
        '/rests/data/ietf-interfaces:interfaces/interface=if1?content=config',
      );
      assert.match(iface.text, /"18446744073709551615"/);
      assert.match(iface.text, /parent-interface/);
      assert.equal(
        (await call(second.url, 'GET', '/rests/data/ietf-interfaces:interfaces-state/interface=if1')).status,
        200,
      );
      // The reloaded tag stays allocated: a new ELAN gets a different one.
      await call(second.url, 'PUT', `${ELAN}=s2`, { 'elan:elan-instance': [{ 'elan-instance-name': 's2' }] });
      const tag2 = await eventually(async () => {
        const reply = await call(second.url, 'GET', `${ELAN}=s2/elan-tag`);
        return reply.status === 200 ? (reply.json() as Record<string, number>)['elan:elan-tag'] : undefined;
      });
      assert.notEqual(tag2, tag);
    } finally {
      await second.close();
    }
  });

  it('refuses to start on a corrupt state file or one of the other profile', async () => {
    const corrupt = join(dir, 'corrupt.json');
    writeFileSync(
      corrupt,
      '{"format":"odlcoe-emulator-state/1","profile":"sodium","config":{"elan:elan-instances":{"elan-instance":[{"elan-tag":1}]}}}',
    );
    await assert.rejects(startQuiet({ stateFile: corrupt }), /state file .*corrupt.*key leaf/);
    const truncated = join(dir, 'truncated.json');
    writeFileSync(truncated, '{"format":"odlcoe-emulator-state/1","prof');
    await assert.rejects(startQuiet({ stateFile: truncated }), /state file .*corrupt/);
    const sodium = join(dir, 'sodium.json');
    writeFileSync(sodium, '{"format":"odlcoe-emulator-state/1","profile":"sodium","config":{}}');
    await assert.rejects(
      startQuiet({ stateFile: sodium, profile: 'aluminium' }),
      /profile sodium, not aluminium/,
    );
  });
});
