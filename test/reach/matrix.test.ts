/**
 * The policy matrix (matrix-harness.ts, matrix-cases.ts): after every step of every case,
 * what `reach` computes from ODL for each of the 81 probes of each port equals the
 * hand-written truth table. ODL is programmed by the watcher (NetworkPolicy enforcement on)
 * from the Kubernetes simulator; one watcher per profile runs through every case, so each
 * case's first step also undoes the previous case (policies deleted, labels put back).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PROFILES_AND_DIALECTS } from '../helpers/policy-writes.js';
import { CASES } from './matrix-cases.js';
import {
  formatTable,
  initialState,
  parseTable,
  probeAll,
  watcherProgrammer,
  type Programmer,
} from './matrix-harness.js';

describe('the truth tables themselves', () => {
  it('every table parses: 9 rows of 9 cells, in pod order, loopback always open', () => {
    for (const c of CASES)
      for (const step of c.steps)
        for (const e of step.expect) {
          const t = parseTable(e.table);
          for (const [k, v] of t)
            if (k.split('>')[0] === k.split('>')[1]) assert.ok(v, `${c.name}: ${k} is loopback`);
        }
    assert.ok(CASES.length >= 25, `at least 25 upstream cases, got ${CASES.length}`);
  });
});

for (const [profile, dialect] of PROFILES_AND_DIALECTS) {
  describe(`policy matrix (${profile}): reach from the ODL config equals the truth tables`, () => {
    let programmer: Programmer;
    before(async () => {
      programmer = await watcherProgrammer(profile, dialect);
    });
    after(() => programmer?.close());
    for (const c of CASES)
      it(c.name, async () => {
        const state = initialState();
        for (const [i, step] of c.steps.entries()) {
          step.change(state);
          const index = await programmer.program(state);
          for (const e of step.expect)
            for (const port of e.probes) {
              const actual = formatTable(probeAll(index, profile, port));
              const expected = formatTable(parseTable(e.table));
              assert.equal(
                actual,
                expected,
                `step ${i + 1} (${step.does}), ${port}: reach (actual) vs the truth table (expected)`,
              );
            }
        }
      });
  });
}
