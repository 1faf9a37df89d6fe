import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelValidationError } from './errors.js';
import { formatAttachments, parseAttachments, type AttachmentRecord } from './attachments.js';

const allocated: AttachmentRecord = {
  network: 'blue/storage',
  interfaceName: 'blue:db-0:net1',
  ips: ['10.20.0.5/24'],
  mac: '0a:58:0a:14:00:05',
  routes: [{ dst: '10.30.0.0/16', gw: '10.20.0.1' }, { dst: '10.40.0.0/16' }],
};
const refused: AttachmentRecord = {
  network: 'blue/storage',
  error: { reason: 'ip-taken', message: '10.20.0.7 is held by blue/db-1 net1' },
};

describe('attachment records (pod annotation odlcoe.io/attachments)', () => {
  it('round-trips allocations and refusals, interface names sorted', () => {
    const text = formatAttachments(
      new Map<string, AttachmentRecord>([
        ['net2', refused],
        ['net1', allocated],
      ]),
    );
    assert.ok(text.indexOf('"net1"') < text.indexOf('"net2"'), text);
    assert.deepEqual(
      parseAttachments(text),
      new Map<string, AttachmentRecord>([
        ['net1', allocated],
        ['net2', refused],
      ]),
    );
    assert.equal(formatAttachments(parseAttachments(text)), text, 'formatting is canonical');
  });

  const bad: [string, unknown, RegExp][] = [
    ['not an object', [1], /not a JSON object/],
    ['bad interface name', { 'eth0/x': allocated }, /\[eth0\/x\]: not a valid interface name/],
    ['network without namespace', { net1: { ...allocated, network: 'storage' } }, /net1\]\/network/],
    ['empty ips', { net1: { ...allocated, ips: [] } }, /net1\]\/ips: not a non-empty list/],
    ['ip without prefix', { net1: { ...allocated, ips: ['10.20.0.5'] } }, /ips\[0\]: "10.20.0.5" is not/],
    ['octal ip', { net1: { ...allocated, ips: ['010.20.0.5/24'] } }, /ips\[0\]/],
    ['prefix too long', { net1: { ...allocated, ips: ['10.20.0.5/33'] } }, /ips\[0\]/],
    ['upper-case mac', { net1: { ...allocated, mac: '0A:58:0A:14:00:05' } }, /net1\]\/mac/],
    [
      'route gw not an IP',
      { net1: { ...allocated, routes: [{ dst: '0.0.0.0/0', gw: 'x' }] } },
      /routes\[0\]\/gw/,
    ],
    [
      'unknown reason',
      { net1: { network: 'a/b', error: { reason: 'nope', message: 'm' } } },
      /unknown reason "nope"/,
    ],
  ];
  for (const [what, value, message] of bad)
    it(`refuses ${what}, naming the member`, () => {
      assert.throws(
        () => parseAttachments(JSON.stringify(value)),
        (err: unknown) => {
          assert.ok(err instanceof ModelValidationError, String(err));
          assert.match(err.message, message);
          return true;
        },
      );
    });

  it('refuses text that is not JSON', () => {
    assert.throws(() => parseAttachments('{'), /odlcoe.io\/attachments: not JSON/);
  });
});
