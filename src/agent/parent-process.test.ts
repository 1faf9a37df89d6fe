import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { waitFor } from '../../test/helpers/wait.js';
import { processExists, watchParentProcess, type ParentWatch } from './parent-process.js';

/** A child that runs until killed; resolves once it has exited and been reaped. */
function sleeper(): { pid: number; exited: Promise<void> } {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  if (child.pid === undefined) throw new Error('sleep did not start');
  return { pid: child.pid, exited: new Promise((resolve) => child.once('exit', () => resolve())) };
}

describe('watching the parent process', () => {
  const watches: ParentWatch[] = [];
  const pids: number[] = [];
  after(() => {
    for (const w of watches) w.stop();
    for (const pid of pids) if (processExists(pid)) process.kill(pid, 'SIGKILL');
  });

  it('tells a running process from one that is gone', async () => {
    assert.equal(processExists(process.pid), true);
    const child = sleeper();
    pids.push(child.pid);
    assert.equal(processExists(child.pid), true);
    process.kill(child.pid, 'SIGKILL');
    await child.exited;
    assert.equal(processExists(child.pid), false);
  });

  it('calls back once, soon after the process is gone, and not before', async () => {
    const child = sleeper();
    pids.push(child.pid);
    let calls = 0;
    watches.push(watchParentProcess(child.pid, () => (calls += 1), 20));
    // Several polls find it alive.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(calls, 0);
    process.kill(child.pid, 'SIGKILL');
    await child.exited;
    await waitFor(() => calls === 1, { what: 'the callback' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(calls, 1, 'once only');
  });

  it('keeps quiet after stop()', async () => {
    const child = sleeper();
    pids.push(child.pid);
    let calls = 0;
    const watch = watchParentProcess(child.pid, () => (calls += 1), 20);
    watch.stop();
    process.kill(child.pid, 'SIGKILL');
    await child.exited;
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(calls, 0);
  });

  it('refuses pids that kill(2) reads as process groups', () => {
    for (const pid of [0, -1, 1.5, Number.NaN])
      assert.throws(() => watchParentProcess(pid, () => undefined), RangeError, String(pid));
  });
});
