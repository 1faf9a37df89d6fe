import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelValidationError } from './errors.js';
import {
  canonicalIp,
  cidrContains,
  clusterUuid,
  elanInstanceName,
  gatewayIp,
  interfaceName,
  nameUuidFromBytes,
  ownershipMarker,
  parseCidr,
  parseOwnershipMarker,
  podMac,
  subnetId,
  vpnName,
} from './names.js';
import { codePointLength } from './validate.js';
import { checkVpnDescription } from './vpn.js';
import { checkElanDescription } from './elan.js';

describe('naming rules', () => {
  it('names pod interfaces <namespace>:<pod> and ELANs <node IP>:<namespace>', () => {
    assert.equal(interfaceName('default', 'nginx-1'), 'default:nginx-1');
    assert.equal(elanInstanceName('192.168.56.101', 'default'), '192.168.56.101:default');
    assert.throws(() => elanInstanceName('node-1', 'default'), ModelValidationError);
    assert.throws(() => interfaceName('', 'x'), ModelValidationError);
  });

  it('uses a namespace of up to 40 characters as its VPN name', () => {
    assert.equal(vpnName('default'), 'default');
    const forty = 'a'.repeat(40);
    assert.equal(vpnName(forty), forty);
  });

  it('shortens longer namespaces to 23 characters + "." + 16 hex of SHA-256', () => {
    // python3: n="a-very-long-namespace-name-that-exceeds-forty-chars"
    //          n[:23]+"."+hashlib.sha256(n.encode()).hexdigest()[:16]
    //       -> 'a-very-long-namespace-n.1b818bd3c8395575'
    const long = 'a-very-long-namespace-name-that-exceeds-forty-chars';
    assert.equal(vpnName(long), 'a-very-long-namespace-n.1b818bd3c8395575');
    assert.equal(vpnName(long).length, 40);
    // 41 characters: shortened, and different from a 41-character sibling with the same prefix.
    const a = 'b'.repeat(41);
    const b = `${'b'.repeat(40)}c`;
    assert.equal(vpnName(a).length, 40);
    assert.notEqual(vpnName(a), vpnName(b));
    assert.equal(vpnName(a).slice(0, 24), `${'b'.repeat(23)}.`);
    assert.equal(vpnName(a), vpnName('b'.repeat(41)), 'stable');
  });

  it('derives pod MACs from the address: 0a:58 + IPv4 bytes, or the last four IPv6 bytes', () => {
    assert.equal(podMac('10.11.1.5'), '0a:58:0a:0b:01:05');
    assert.equal(podMac('192.168.255.254'), '0a:58:c0:a8:ff:fe');
    assert.equal(podMac('fd00:10:244::a:c0a8:1e2'), '0a:58:c0:a8:01:e2');
    assert.equal(podMac('fd00::5'), '0a:58:00:00:00:05');
    assert.throws(() => podMac('10.11.1.5/32'), ModelValidationError);
  });

  it("replicates Java's UUID.nameUUIDFromBytes (MD5 of the bytes, version 3, IETF variant)", () => {
    // Vectors computed independently with python3 (no namespace, unlike uuid.uuid3):
    //   b = bytearray(hashlib.md5(s.encode()).digest())
    //   b[6] = (b[6] & 0x0f) | 0x30; b[8] = (b[8] & 0x3f) | 0x80; str(uuid.UUID(bytes=bytes(b)))
    // md5("192.168.56.101") = e161856081d4f0729c570b10e6cf83a8
    assert.equal(subnetId('192.168.56.101'), 'e1618560-81d4-3072-9c57-0b10e6cf83a8');
    // md5("10.0.0.1") = 190dafab69706a67221c1226360de7dc
    assert.equal(subnetId('10.0.0.1'), '190dafab-6970-3a67-a21c-1226360de7dc');
    // md5("fd00::10") = 496be965f77df2aa30a71f1ebdabf453
    assert.equal(subnetId('fd00::10'), '496be965-f77d-32aa-b0a7-1f1ebdabf453');
    // Java: UUID.nameUUIDFromBytes(new byte[0]) = d41d8cd9-8f00-3204-a980-0998ecf8427e (md5 of nothing)
    assert.equal(nameUuidFromBytes(new Uint8Array()), 'd41d8cd9-8f00-3204-a980-0998ecf8427e');
    // python3: same recipe on "odlcoe:prod"
    assert.equal(clusterUuid('prod'), '0324e7d5-3718-3d84-a2a8-0aa05e57b912');
  });

  it('takes the first address of a subnet as its gateway', () => {
    assert.equal(gatewayIp('10.11.1.0/24'), '10.11.1.1');
    assert.equal(gatewayIp('10.11.0.0/16'), '10.11.0.1');
    assert.equal(gatewayIp('10.11.1.252/30'), '10.11.1.253');
    assert.equal(gatewayIp('fd00:10:244:1::/64'), 'fd00:10:244:1::1');
    assert.throws(() => gatewayIp('10.11.1.5/24'), /host bits set/);
    assert.throws(() => gatewayIp('10.11.1.0/31'), /too small/);
    assert.throws(() => gatewayIp('10.11.1.0'), /not a CIDR/);
    // Remembered answers are the same; a refused value is refused again (nothing remembered).
    assert.equal(gatewayIp('10.11.1.0/24'), '10.11.1.1');
    assert.throws(() => gatewayIp('10.11.1.5/24'), /host bits set/);
    assert.equal(subnetId('10.0.0.1'), '190dafab-6970-3a67-a21c-1226360de7dc');
    assert.throws(() => subnetId('10.0.0.x'), /not an IP address/);
    assert.throws(() => subnetId('10.0.0.x'), /not an IP address/);
    assert.ok(cidrContains('10.11.1.0/24', '10.11.1.200'));
    assert.ok(!cidrContains('10.11.1.0/24', '10.11.2.1'));
    assert.ok(!cidrContains('10.11.1.0/24', 'fd00::1'));
  });

  it('answers canonical IPv4 without the parser exactly as the parser does', () => {
    assert.ok(cidrContains('0.0.0.0/0', '255.255.255.255'));
    assert.ok(cidrContains('10.11.1.7/32', '10.11.1.7'));
    assert.ok(!cidrContains('10.11.1.7/32', '10.11.1.8'));
    assert.ok(cidrContains('10.128.0.0/9', '10.255.0.1'));
    assert.ok(!cidrContains('10.128.0.0/9', '10.127.255.255'));
    assert.ok(!cidrContains('fd00::/8', '10.0.0.1'));
    assert.ok(cidrContains('fd00::/8', 'fd12::1'));
    // Forms only the parser reads still go through it.
    assert.ok(cidrContains('8.0.0.0/8', '010.0.0.1')); // octal, as ipaddr.js reads it
    assert.equal(canonicalIp('10.11.1.200'), '10.11.1.200');
    assert.equal(canonicalIp('FD00:0::0001'), 'fd00::1');
    // A parsed subnet is the caller's to keep: the next parse is not affected.
    const first = parseCidr('10.11.0.0/16');
    first.prefixLength = 1;
    assert.deepEqual(parseCidr('10.11.0.0/16'), { family: 4, network: '10.11.0.0', prefixLength: 16 });
  });

  it('writes and parses ownership markers that fit every description limit', () => {
    const uid = '7d3e1a52-8f5b-4c39-9d54-0f2f7a7c1e11';
    const m = ownershipMarker('prod-east', 'pod', uid);
    assert.equal(m, `odlcoe:prod-east:pod:${uid}`);
    assert.deepEqual(parseOwnershipMarker(m), { clusterName: 'prod-east', kind: 'pod', uid });
    const longest = ownershipMarker('c'.repeat(63), 'node-namespace', `${uid}/${uid}`);
    checkVpnDescription(longest, 'vpn');
    checkElanDescription(longest, 'elan');
    assert.deepEqual(parseOwnershipMarker(longest), {
      clusterName: 'c'.repeat(63),
      kind: 'node-namespace',
      uid: `${uid}/${uid}`,
    });
    assert.equal(parseOwnershipMarker(undefined), undefined);
    assert.equal(parseOwnershipMarker('created by hand'), undefined);
    assert.equal(parseOwnershipMarker(`odlcoe:prod:widget:${uid}`), undefined);
    assert.throws(() => ownershipMarker('Prod', 'pod', uid), /DNS-1123/);
    assert.throws(() => ownershipMarker('a:b', 'pod', uid), /DNS-1123/);
    assert.throws(() => ownershipMarker('prod', 'pod', 'what?'), /cannot carry/);
    assert.throws(() => ownershipMarker('prod', 'pod', 'u'.repeat(240)), /above the 242/);
  });
});

describe('podMac', () => {
  it('is 0a:58 followed by the IPv4 bytes', () => {
    assert.equal(podMac('10.11.1.5'), '0a:58:0a:0b:01:05');
    assert.equal(podMac('192.168.255.254'), '0a:58:c0:a8:ff:fe');
  });

  it('uses the last four bytes of an IPv6 address', () => {
    assert.equal(podMac('fd00::a0b:105'), '0a:58:0a:0b:01:05');
  });

  it('refuses what is not an address', () => {
    assert.throws(() => podMac('10.11.1.5/24'), /not an IP/);
  });
});

describe('codePointLength', () => {
  it('counts characters as [...s].length does, without building the array', () => {
    const pair = '\u{1F600}'; // one character, two UTF-16 units
    for (const s of [
      '',
      'a',
      'odlcoe',
      pair,
      `a${pair}b`,
      pair + pair,
      '\ud800',
      '\udc00a',
      'a\ud800',
      '\ud800\ud800\udc00',
    ])
      assert.equal(codePointLength(s), [...s].length, JSON.stringify(s));
  });
});
