/** The NetVirt model: types, bodies, paths, parsers, naming, translation and owned-leaf diff. */
export * from './coe.js';
export * from './dhcp.js';
export * from './diff.js';
export * from './elan.js';
export * from './errors.js';
export * from './interfaces.js';
export * from './json.js';
export * from './kube.js';
export * from './names.js';
export * from './nat.js';
export * from './ownership.js';
export * from './paths.js';
export * from './profile.js';
export * from './route-distinguisher.js';
export * from './translate.js';
export * from './vpn.js';
export * from './write.js';
