import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NameError } from '../common/name-error.js';
import { validatePodRef } from './names.js';

describe('validatePodRef', () => {
  const ok: [string, string][] = [
    ['default', 'nginx-7c5ddbdf54-x2x9k'],
    ['kube-system', 'coredns.1'],
    ['a'.repeat(63), 'b'.repeat(253)],
  ];
  for (const [ns, name] of ok) {
    it(`accepts ${ns.slice(0, 20)}/${name.slice(0, 20)}`, () =>
      assert.doesNotThrow(() => validatePodRef(ns, name)));
  }
  const bad: [string, string, RegExp][] = [
    ['', 'pod', /invalid podNamespace "": must not be empty/],
    ['Default', 'pod', /podNamespace.*DNS-1123 label/],
    ['ns.x', 'pod', /podNamespace.*DNS-1123 label/],
    ['-ns', 'pod', /podNamespace.*DNS-1123 label/],
    ['a'.repeat(64), 'pod', /podNamespace.*longer than 63/],
    ['ns', '', /podName.*must not be empty/],
    ['ns', 'Pod', /podName.*DNS-1123 subdomain/],
    ['ns', 'pod:1', /podName.*DNS-1123 subdomain/],
    ['ns', 'pod..x', /podName.*DNS-1123 subdomain/],
    ['ns', 'pod-', /podName.*DNS-1123 subdomain/],
    ['ns', 'b'.repeat(254), /podName.*longer than 253/],
  ];
  for (const [ns, name, why] of bad) {
    it(`rejects ${JSON.stringify(ns.slice(0, 20))}/${JSON.stringify(name.slice(0, 20))}`, () => {
      assert.throws(
        () => validatePodRef(ns, name),
        (err: unknown) => err instanceof NameError && why.test(err.message),
      );
    });
  }
});
