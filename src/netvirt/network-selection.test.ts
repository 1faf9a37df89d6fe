import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelValidationError } from './errors.js';
import { parseNetworkSelection } from './network-selection.js';

describe("a pod's network selection (k8s.v1.cni.cncf.io/networks)", () => {
  it('reads the short form with namespaces, interface names and Multus default names', () => {
    assert.deepEqual(parseNetworkSelection('blue, other/red@data0 ,green', 'tenant'), [
      { namespace: 'tenant', name: 'blue', interface: 'net1' },
      { namespace: 'other', name: 'red', interface: 'data0' },
      { namespace: 'tenant', name: 'green', interface: 'net3' },
    ]);
  });

  it('reads the JSON form with static ips, mac and default-route', () => {
    const value = JSON.stringify([
      { name: 'blue' },
      {
        name: 'red',
        namespace: 'other',
        interface: 'ext0',
        ips: ['10.50.0.7/24'],
        mac: '02:00:00:00:00:07',
        'default-route': ['10.50.0.1'],
      },
    ]);
    assert.deepEqual(parseNetworkSelection(value, 'tenant'), [
      { namespace: 'tenant', name: 'blue', interface: 'net1' },
      {
        namespace: 'other',
        name: 'red',
        interface: 'ext0',
        ips: ['10.50.0.7/24'],
        mac: '02:00:00:00:00:07',
        defaultRoute: ['10.50.0.1'],
      },
    ]);
  });

  it('refuses malformed selections with the element and member named', () => {
    const refuses = (value: string, pattern: RegExp) =>
      assert.throws(
        () => parseNetworkSelection(value, 'tenant'),
        (err: unknown) => err instanceof ModelValidationError && pattern.test(err.message),
      );
    refuses('[{"name": 5}]', /\[0\]\/name: not a string/);
    refuses('[{"name": "a", "default-route": ["gw"]}]', /default-route\[0\]: "gw" is not an IP address/);
    refuses('a/b/c', /is not \[<namespace>\/\]<name>/);
    refuses('Blue', /"Blue" is not a NetworkAttachmentDefinition name/);
    refuses('a@x,b@x', /interface x is asked for twice/);
    refuses('[{"name": "a"', /not JSON/);
    refuses('a@this-name-is-too-long0', /is not an interface name/);
  });
});
