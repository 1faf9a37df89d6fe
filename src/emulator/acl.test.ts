import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ACL_TYPE_IPV4,
  aceEntry,
  aceRuleName,
  aclEntry,
  aclName,
  parseAcls,
  type Ace,
  type Acl,
} from '../netvirt/acl.js';
import { interfaceEntry, parseInterfaces, type Interface } from '../netvirt/interfaces.js';
import { netvirtPaths } from '../netvirt/paths.js';
import { PROFILES } from '../netvirt/profile.js';
import { entryBody } from '../netvirt/write.js';
import { DIALECTS, encodePath, type DataPath, type Dialect } from '../restconf/path.js';
import type { Emulator } from './server.js';
import { call, errorTag, eventually, startQuiet } from './testing.js';

/** ACL and interface bodies as odlcoe builds them, against each release's YANG subset. */

const url = (dialect: Dialect, path: DataPath) =>
  `${dialect === 'bierman02' ? '/restconf/config' : '/rests/data'}/${encodePath(path, dialect)}`;
const read = (dialect: Dialect, path: DataPath) =>
  `${url(dialect, path)}${dialect === 'rfc8040' ? '?content=config' : ''}`;

function ace(port: number, extra: Partial<Ace> = {}): Ace {
  const content = {
    direction: 'ingress' as const,
    action: 'permit' as const,
    matches: {
      sourceIpv4Network: '10.0.0.0/8',
      protocol: 6,
      destinationPortRange: { lower: port, upper: port },
    },
    ...extra,
  };
  return { ...content, ruleName: aceRuleName(content), deleted: false };
}

for (const profile of PROFILES) {
  describe(`ACLs and port security on the ${profile} emulator`, () => {
    let emu: Emulator;
    const paths = netvirtPaths(profile);
    before(async () => {
      emu = await startQuiet({ profile, fillParentInterface: false });
    });
    after(() => emu.close());

    it('publishes the ACL modules', async () => {
      const reply = await call(emu.url, 'GET', '/rests/data/ietf-yang-library:modules-state');
      assert.match(reply.text, /"ietf-access-control-list"/);
      assert.match(reply.text, /"aclservice"/);
    });

    for (const dialect of DIALECTS) {
      it(`takes and returns odlcoe's ACL body unchanged (${dialect})`, async () => {
        const group: Acl = { name: aclName('c1', `group:${dialect}`), type: ACL_TYPE_IPV4, aces: [] };
        const acl: Acl = {
          name: aclName('c1', `policy:${dialect}`),
          type: ACL_TYPE_IPV4,
          aces: [
            ace(80),
            ace(53, {
              direction: 'egress',
              matches: {
                destinationIpv6Network: '::/0',
                protocol: 17,
                destinationPortRange: { lower: 53, upper: 60 },
              },
            }),
            ace(443, { remoteGroupId: group.name, matches: { sourceIpv4Network: '0.0.0.0/0' } }),
          ],
        };
        if (profile === 'aluminium') {
          group.aclTag = 1;
          acl.aclTag = 2;
        }
        for (const a of [group, acl]) {
          const path = paths.acl(a.name);
          const reply = await call(emu.url, 'PUT', url(dialect, path), entryBody(path, aclEntry(profile, a)));
          assert.equal(reply.status, 201, reply.text);
          const back = await call(emu.url, 'GET', read(dialect, path));
          assert.equal(back.status, 200, back.text);
          assert.deepEqual(parseAcls(back.json()), [a]);
        }
      });
    }

    it(profile === 'sodium' ? 'refuses acl-tag (Sodium has no such leaf)' : 'takes acl-tag', async () => {
      const path = paths.acl(aclName('c1', 'tagged'));
      const body = entryBody(path, {
        ...aclEntry(profile, { name: aclName('c1', 'tagged'), type: ACL_TYPE_IPV4, aces: [ace(1)] }),
        'aclservice:acl-tag': 5,
      });
      const reply = await call(emu.url, 'PUT', url('rfc8040', path), body);
      if (profile === 'sodium') {
        assert.equal(reply.status, 400, reply.text);
        assert.equal(errorTag(reply), 'unknown-element');
      } else assert.equal(reply.status, 201, reply.text);
    });

    it('removes an ACE from config once it is marked deleted, as aclservice does', async () => {
      const rule = ace(9000);
      const acl: Acl = {
        name: aclName('c1', 'dying'),
        type: ACL_TYPE_IPV4,
        aces: [ace(8999), rule],
        ...(profile === 'aluminium' ? { aclTag: 3 } : {}),
      };
      const path = paths.acl(acl.name);
      assert.equal(
        (await call(emu.url, 'PUT', url('rfc8040', path), entryBody(path, aclEntry(profile, acl)))).status,
        201,
      );
      const acePath = paths.ace(acl.name, rule.ruleName);
      const marked = await call(
        emu.url,
        'PUT',
        url('rfc8040', acePath),
        entryBody(acePath, aceEntry({ ...rule, deleted: true })),
      );
      assert.equal(marked.status, 204, marked.text);
      const left = await eventually(
        async () => {
          const [now] = parseAcls((await call(emu.url, 'GET', read('rfc8040', path))).json());
          return now && now.aces.length === 1 ? now : undefined;
        },
        5000,
        'the marked ACE to leave config',
      );
      assert.deepEqual(
        left.aces.map((a) => a.ruleName),
        [acl.aces[0]!.ruleName],
      );
    });

    it(`takes the interface-acl augment${profile === 'sodium' ? ', but not interface-type' : ''}`, async () => {
      const iface: Interface = {
        name: 'default:nginx-1',
        type: 'iana-if-type:l2vlan',
        description: 'odlcoe:c1:pod:u1',
        acl: {
          portSecurityEnabled: true,
          securityGroups: [aclName('c1', 'group:rfc8040')],
          allowedAddressPairs: [
            { macAddress: '0a:58:0a:0b:01:05', ipAddress: '10.11.1.5' },
            { macAddress: '0a:58:0a:0b:01:05', ipAddress: 'fe80::858:aff:fe0b:105/128' },
          ],
          ...(profile === 'aluminium' ? { interfaceType: 'access-port' as const } : {}),
        },
      };
      const path = paths.interface(iface.name);
      for (const dialect of DIALECTS) {
        const reply = await call(
          emu.url,
          'PUT',
          url(dialect, path),
          entryBody(path, interfaceEntry(iface, profile)),
        );
        assert.ok(reply.status === 201 || reply.status === 204, reply.text);
        assert.deepEqual(parseInterfaces((await call(emu.url, 'GET', read(dialect, path))).json()), [iface]);
      }
      if (profile === 'sodium') {
        const body = entryBody(path, {
          ...interfaceEntry(iface, profile),
          'aclservice:interface-type': 'access-port',
        });
        const reply = await call(emu.url, 'PUT', url('rfc8040', path), body);
        assert.equal(reply.status, 400, reply.text);
        assert.equal(errorTag(reply), 'unknown-element');
      }
    });
  });
}
