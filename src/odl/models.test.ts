import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assumedModels, OdlModelsError, optionalModels, profileOf, resolveModels } from './models.js';

const mods = (...names: string[]) => names.map((name) => ({ name, revision: '2020-01-01' }));
/** What a Sodium with COE and an Aluminium list (as far as odlcoe cares). */
const SODIUM = mods('ietf-interfaces', 'elan', 'l3vpn', 'odl-l3vpn', 'k8s-node', 'pod', 'service', 'odl-nat');
const ALUMINIUM = mods(
  'ietf-interfaces',
  'elan',
  // Aluminium still loads l3vpn and odl-l3vpn (without the VPN lists).
  'l3vpn',
  'odl-l3vpn',
  'l3vpn-instances-interfaces',
  'aclservice',
  'ietf-access-control-list',
  'odl-nat',
);

describe('ODL release detection from the module list', () => {
  it('picks the profile by where the VPN lists live', () => {
    assert.equal(profileOf(['l3vpn']), 'sodium');
    assert.equal(profileOf(['l3vpn', 'l3vpn-instances-interfaces']), 'aluminium');
    assert.equal(profileOf(['elan']), undefined);
  });

  it('finds the optional models', () => {
    const s = resolveModels(SODIUM, undefined, 'http://odl');
    assert.deepEqual([s.profile, s.source, s.coe, s.acl, s.nat], ['sodium', 'odl', true, false, true]);
    const a = resolveModels(ALUMINIUM, undefined, 'http://odl');
    assert.deepEqual([a.profile, a.coe, a.acl, a.nat], ['aluminium', false, true, true]);
    assert.equal(optionalModels(a), 'acl, nat');
    // COE means all three northbound models.
    assert.equal(resolveModels(mods('l3vpn', 'k8s-node'), undefined, 'x').coe, false);
  });

  it('a told profile must be what ODL serves: a contradiction names both', () => {
    assert.equal(resolveModels(ALUMINIUM, 'aluminium', 'http://odl').profile, 'aluminium');
    assert.throws(
      () => resolveModels(ALUMINIUM, 'sodium', 'http://odl:8181'),
      (err: Error) =>
        err instanceof OdlModelsError &&
        /profile is set to sodium, but ODL at http:\/\/odl:8181 serves the aluminium models \(module l3vpn-instances-interfaces\)/.test(
          err.message,
        ),
    );
    assert.throws(
      () => resolveModels(SODIUM, 'aluminium', 'x'),
      /set to aluminium, but .* serves the sodium models/,
    );
  });

  it('no NetVirt, or no module list and no told profile: refused; a told profile without a list is assumed', () => {
    assert.throws(() => resolveModels(mods('elan'), undefined, 'x'), OdlModelsError);
    assert.throws(() => resolveModels(undefined, undefined, 'x'), /publishes no module list/);
    const told = resolveModels(undefined, 'aluminium', 'x');
    assert.deepEqual(told, assumedModels('aluminium'));
    assert.deepEqual([told.source, told.coe], ['told', false]);
    assert.equal(assumedModels('sodium').coe, true);
  });
});
