/**
 * What the name validators' tests share (not part of the build: tsconfig.build.json excludes
 * testing.ts): one test per value, so that a table of accepted and refused names reports each
 * one that breaks by itself.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { NameError } from './name-error.js';

/** Each of `valid` passes `fn`; each of `invalid` throws a NameError whose message matches. */
export function validatorTable(
  fn: (v: string) => unknown,
  valid: string[],
  invalid: [string, RegExp][],
): void {
  for (const v of valid) {
    it(`accepts ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`, () => {
      assert.doesNotThrow(() => fn(v));
    });
  }
  for (const [v, why] of invalid) {
    it(`rejects ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`, () => {
      assert.throws(
        () => fn(v),
        (err: unknown) => err instanceof NameError && why.test(err.message),
      );
    });
  }
}
