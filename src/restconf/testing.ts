import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import winston from 'winston';
import type { Logger } from '../common/log.js';
import { RestconfError } from './errors.js';
import type { DataPath } from './path.js';

/**
 * Data and helpers shared by the RESTCONF client tests (which run against the real emulator).
 * Not used by production code.
 */

export const elanInstances: DataPath = [{ module: 'elan', name: 'elan-instances' }];
export const elanList: DataPath = [...elanInstances, { name: 'elan-instance' }];

export function elanPath(name: string): DataPath {
  return [...elanInstances, { name: 'elan-instance', keys: [name], keyNames: ['elan-instance-name'] }];
}

export function elanEntry(name: string, segmentationId = 1001): Record<string, unknown> {
  return {
    'elan-instance-name': name,
    'segment-type': 'elan:segment-type-vxlan',
    'segmentation-id': segmentationId,
  };
}

export function elanBody(name: string, segmentationId = 1001): unknown {
  return { 'elan:elan-instance': [elanEntry(name, segmentationId)] };
}

export const elanInterfaces: DataPath = [{ module: 'elan', name: 'elan-interfaces' }];

export function elanInterfacePath(name: string): DataPath {
  return [...elanInterfaces, { name: 'elan-interface', keys: [name], keyNames: ['name'] }];
}

/** An ELAN interface on `instance`: the write that must follow the instance's create. */
export function elanInterfaceBody(name: string, instance: string): unknown {
  return { 'elan:elan-interface': [{ name, 'elan-instance-name': instance }] };
}

/** A logger that keeps every line it would have written, to check what gets logged. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = winston.createLogger({
    level: 'debug',
    format: winston.format.json(),
    transports: [new winston.transports.Stream({ stream })],
  });
  return { logger, lines };
}

/** Polls `check` until it returns true, or throws after `timeoutMs` naming `what`. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The difference of two request counters (`"PUT 201"` → n), without zero entries. */
export function countsSince(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta !== 0) out[key] = delta;
  }
  return out;
}

/** The RestconfError `promise` rejects with; fails the test when it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<RestconfError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof RestconfError, `expected a RestconfError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the request to fail');
}
