/**
 * The NetVirt model release odlcoe talks to. `sodium`: VPN lists in module `l3vpn` with RD and
 * route targets inside `ipv4-family`, adjacencies as the `odl-l3vpn:adjacency` augment.
 * `aluminium` (Magnesium and later): module `l3vpn-instances-interfaces`, RD and route targets
 * directly in the entry, `adjacency` in the same module.
 */
export type Profile = 'sodium' | 'aluminium';
export const PROFILES: readonly Profile[] = ['sodium', 'aluminium'];
