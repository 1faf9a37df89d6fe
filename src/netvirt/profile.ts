/**
 * The NetVirt model release odlcoe talks to. `sodium`: VPN lists in module `l3vpn` with RD and
 * route targets inside `ipv4-family`, adjacencies as the `odl-l3vpn:adjacency` augment.
 * `aluminium` (Magnesium and later): module `l3vpn-instances-interfaces`, RD and route targets
 * directly in the entry, `adjacency` in the same module.
 */
import { oneOf, setting } from '../common/settings-scheme.js';

export type Profile = 'sodium' | 'aluminium';
export const PROFILES: readonly Profile[] = ['sodium', 'aluminium'];

/**
 * The `odl.profile` setting of every program (watcher, agent, odlcoectl): optional, since each
 * reads the release from ODL's module list at start-up (src/odl/models.ts); a told profile is
 * checked against it.
 */
export function profileSetting() {
  return setting(oneOf(PROFILES), {
    flag: '--profile <profile>',
    env: 'ODLCOE_PROFILE',
    defaultText: 'the one ODL serves',
    doc: "NetVirt model release: `sodium` or `aluminium` ([compatibility.md](compatibility.md)). Read from ODL's module list at start-up; when set, ODL must serve it, else the program refuses to start with an error naming both",
  });
}
