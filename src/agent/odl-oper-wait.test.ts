import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keptLogger } from '../../test/helpers/kept-logger.js';
import { CNI_ERROR, CniError } from './cni/error.js';
import { OdlOperWait, restconfOperStatus, type OperObservation, type OperWaitMode } from './odl-oper-wait.js';

function waiter(mode: OperWaitMode, timeoutMs: number, read: (name: string) => OperObservation) {
  const reads: string[] = [];
  const { logger, events } = keptLogger();
  const wait = new OdlOperWait({
    mode,
    timeoutMs,
    read: (name) => {
      reads.push(name);
      return Promise.resolve(read(name));
    },
    logger,
  });
  return { wait, reads, events };
}

const never = () => new AbortController().signal;

describe('waiting for ODL to report the pod interface operational', () => {
  it('off: returns at once and asks ODL nothing', async () => {
    const { wait, reads } = waiter('off', 1000, () => ({ absent: true }));
    await wait.wait('default:p', never());
    assert.deepEqual(reads, []);
  });

  it('returns once oper-status is up, after polling through absent and down', async () => {
    const seen: OperObservation[] = [
      { absent: true },
      { status: 'down' },
      { error: 'HTTP 503' },
      { status: 'up' },
    ];
    let i = 0;
    const { wait, reads } = waiter('wait-and-fail', 10_000, () => seen[Math.min(i++, seen.length - 1)]!);
    await wait.wait('default:p', never());
    assert.equal(reads.length, 4);
    assert.equal(wait.polling, 0, 'the loop ended');
  });

  it('wait-and-fail: fails at the timeout with code 105 naming the interface and what ODL showed', async () => {
    const { wait } = waiter('wait-and-fail', 300, () => ({ status: 'down' }));
    await assert.rejects(wait.wait('default:p', never()), (err: unknown) => {
      assert.ok(err instanceof CniError);
      assert.equal(err.code, CNI_ERROR.odlInterface);
      assert.match(
        err.message,
        /ODL did not report interface default:p operational within 0\.3 s \(oper-status down\)/,
      );
      return true;
    });
    assert.equal(wait.polling, 0, 'nobody waits: the loop stopped');
  });

  it('wait: succeeds at the timeout with a warning', async () => {
    const { wait, events } = waiter('wait', 300, () => ({ absent: true }));
    await wait.wait('default:p', never());
    const warning = events.find((e) => e.level === 'warn');
    assert.ok(warning, 'a warning was logged');
    assert.equal(warning.interface, 'default:p');
    assert.equal(warning.lastSeen, 'no interfaces-state entry');
  });

  it('the request deadline ends the wait with try-again-later', async () => {
    const { wait } = waiter('wait', 60_000, () => ({ absent: true }));
    const deadline = new AbortController();
    setTimeout(() => deadline.abort(new Error('deadline passed')), 200);
    await assert.rejects(wait.wait('default:p', deadline.signal), (err: unknown) => {
      assert.ok(err instanceof CniError);
      assert.equal(err.code, CNI_ERROR.tryAgainLater);
      assert.match(err.message, /deadline passed/);
      return true;
    });
    assert.equal(wait.polling, 0);
  });

  it('runs one poll loop per interface however many ADDs wait for it', async () => {
    let up = false;
    const { wait, reads } = waiter('wait-and-fail', 10_000, () => (up ? { status: 'up' } : { absent: true }));
    const first = wait.wait('default:p', never());
    const second = wait.wait('default:p', never());
    const other = wait.wait('default:q', never());
    assert.equal(wait.polling, 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    up = true;
    await Promise.all([first, second, other]);
    const perName = (name: string) => reads.filter((r) => r === name).length;
    assert.ok(
      Math.abs(perName('default:p') - perName('default:q')) <= 1,
      `one loop each: ${perName('default:p')} reads of p, ${perName('default:q')} of q`,
    );
  });

  it('reads interfaces-state from the operational datastore and its oper-status, in both dialects', async () => {
    const answers: unknown[] = [
      { 'ietf-interfaces:interface': [{ name: 'default:p', 'oper-status': 'up' }] },
      { interface: [{ name: 'default:p', 'oper-status': 'down' }] },
      undefined,
    ];
    const calls: { path: unknown; store: unknown }[] = [];
    const read = restconfOperStatus({
      get: (path, store) => {
        calls.push({ path, store });
        return Promise.resolve(answers.shift());
      },
    });
    assert.deepEqual(await read('default:p', never()), { status: 'up' });
    assert.deepEqual(await read('default:p', never()), { status: 'down' });
    assert.deepEqual(await read('default:p', never()), { absent: true });
    assert.equal(calls[0]?.store, 'operational');
    assert.deepEqual(calls[0]?.path, [
      { module: 'ietf-interfaces', name: 'interfaces-state' },
      { name: 'interface', keys: ['default:p'], keyNames: ['name'] },
    ]);
  });
});
