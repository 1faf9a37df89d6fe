/** Reachability analysis: would NetVirt deliver a packet, through which objects, and who drops it. */
export { analyseReach, ReachQueryError, type ReachEndpoint, type ReachQuery } from './analyse.js';
export { holdingsOf, HoldingsIndex, type OdlHoldings } from './holdings.js';
export type { AclMiss, RuleMiss } from './port-acls.js';
export { describeProbe, parseProbe, PROBE_PROTOCOLS, type Probe, type ProbeProtocol } from './probe.js';
export type { Drop, Hop, ObjectLabel, ReachEnd, ReachResult } from './result.js';
