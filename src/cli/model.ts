/**
 * What odlcoectl knows of ODL: the kinds it reads, dumps and collects, and the plan of a key
 * (what ODL should hold for it). The default is the netvirt backend's; a table with one more
 * kind and a planner that knows its keys is all another model needs (the throw-away kind test
 * runs odlcoectl dump and gc that way).
 */
import type { KindTable } from '../netvirt/kind.js';
import { NETVIRT_KINDS } from '../netvirt/kinds.js';
import { planNetvirtKey, type NetvirtPlanInputs } from '../netvirt/plan-netvirt.js';
import type { KeyPlan } from '../netvirt/plan.js';

export interface CliModel {
  kinds: KindTable;
  /** The plan of one key (keys.ts; any key `ownerKey` of a kind in `kinds` returns). */
  plan(key: string, inputs: NetvirtPlanInputs): KeyPlan;
}

export const NETVIRT_MODEL: CliModel = { kinds: NETVIRT_KINDS, plan: planNetvirtKey };
