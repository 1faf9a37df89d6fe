import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodePath, memberName, pathTemplate, type DataPath } from './path.js';

const adjacency: DataPath = [
  { module: 'l3vpn', name: 'vpn-interfaces' },
  { name: 'vpn-interface', keys: ['default:nginx-1'] },
  { module: 'odl-l3vpn', name: 'adjacency', keys: ['10.11.1.5/32'] },
];

describe('data paths', () => {
  it('spells keys as segments for bierman02 and as list=k for RFC 8040, with / encoded', () => {
    assert.equal(
      encodePath(adjacency, 'bierman02'),
      'l3vpn:vpn-interfaces/vpn-interface/default:nginx-1/odl-l3vpn:adjacency/10.11.1.5%2F32',
    );
    assert.equal(
      encodePath(adjacency, 'rfc8040'),
      'l3vpn:vpn-interfaces/vpn-interface=default:nginx-1/odl-l3vpn:adjacency=10.11.1.5%2F32',
    );
  });

  it('joins several keys with , for RFC 8040 and encodes a , inside a key', () => {
    const p: DataPath = [
      { module: 'm', name: 'top' },
      { name: 'l', keys: ['a,b', 'c'] },
    ];
    assert.equal(encodePath(p, 'rfc8040'), 'm:top/l=a%2Cb,c');
    assert.equal(encodePath(p, 'bierman02'), 'm:top/l/a%2Cb/c');
  });

  it('templates keys away for metrics and names the body member by its module', () => {
    assert.equal(
      pathTemplate(adjacency),
      'l3vpn:vpn-interfaces/vpn-interface={key}/odl-l3vpn:adjacency={key}',
    );
    assert.equal(memberName(adjacency), 'odl-l3vpn:adjacency');
    assert.equal(memberName(adjacency.slice(0, 2)), 'l3vpn:vpn-interface');
  });

  it('refuses a path that does not start with a module', () => {
    assert.throws(() => encodePath([{ name: 'x' }], 'rfc8040'), /module-qualified/);
  });
});
