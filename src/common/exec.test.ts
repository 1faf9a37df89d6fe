import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandError, run } from './exec.js';

const node = process.execPath;

/** Whether a pid still names a live (non-zombie) process. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('run', () => {
  it('returns stdout and stderr of a successful command', async () => {
    const { stdout, stderr } = await run(node, [
      '-e',
      'process.stdout.write("out"); process.stderr.write("err")',
    ]);
    assert.equal(stdout, 'out');
    assert.equal(stderr, 'err');
  });

  it('passes arguments verbatim, with no shell in between', async () => {
    const args = ['$(touch /tmp/odlcoe-pwned)', '; echo hi', '"quoted" \'x\'', 'a b', '*'];
    const { stdout } = await run(node, ['-e', 'console.log(JSON.stringify(process.argv.slice(1)))', ...args]);
    assert.deepEqual(JSON.parse(stdout), args);
  });

  it('rejects a non-zero exit with a CommandError carrying code and stderr', async () => {
    const err = await run(node, ['-e', 'process.stderr.write("no such device\\n"); process.exit(3)']).then(
      () => assert.fail('should have failed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof CommandError);
    assert.equal(err.code, 3);
    assert.equal(err.signal, null);
    assert.equal(err.timedOut, false);
    assert.equal(err.stderr, 'no such device\n');
    assert.equal(err.cmd, node);
    assert.match(err.message, /exited with code 3: no such device/);
  });

  it('kills a command that outlives its timeout, by its pid', async () => {
    // sh starts in about a millisecond (node may need more than the timeout on a loaded machine,
    // and would then be killed before printing its pid); `exec` keeps the printed pid.
    const err = await run('/bin/sh', ['-c', 'echo $$; exec sleep 60'], {
      timeoutMs: 1000,
    }).then(
      () => assert.fail('should have timed out'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof CommandError);
    assert.equal(err.timedOut, true);
    assert.equal(err.signal, 'SIGTERM');
    assert.match(err.message, /timed out/);
    const pid = Number(err.stdout.trim());
    assert.ok(pid > 1, `child printed its pid: ${err.stdout}`);
    assert.equal(alive(pid), false);
  });

  it('follows up with SIGKILL when the command ignores SIGTERM', async () => {
    // An ignored signal stays ignored across exec, so sleep ignores SIGTERM from its first instant.
    const err = await run('/bin/sh', ['-c', 'trap "" TERM; echo $$; exec sleep 60'], {
      timeoutMs: 1000,
    }).then(
      () => assert.fail('should have timed out'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof CommandError);
    assert.equal(err.timedOut, true);
    assert.equal(err.signal, 'SIGKILL');
    assert.equal(alive(Number(err.stdout.trim())), false);
  });

  it('writes input to stdin', async () => {
    const { stdout } = await run(node, ['-e', 'process.stdin.pipe(process.stdout)'], {
      input: '{"cniVersion":"1.0.0"}',
    });
    assert.equal(stdout, '{"cniVersion":"1.0.0"}');
  });

  it('survives a command that exits without reading its input', async () => {
    await run(node, ['-e', 'process.exit(0)'], { input: 'x'.repeat(4 * 1024 * 1024) });
  });

  it('replaces the environment when one is given', async () => {
    const { stdout } = await run(node, ['-e', 'console.log(JSON.stringify(process.env))'], {
      env: { CNI_COMMAND: 'ADD' },
    });
    const env = JSON.parse(stdout) as Record<string, string>;
    assert.equal(env.CNI_COMMAND, 'ADD');
    assert.equal(env.PATH, undefined);
  });

  it('reports a command that cannot be started', async () => {
    const err = await run('/nonexistent/odlcoe-tool', ['x']).then(
      () => assert.fail('should have failed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof CommandError);
    assert.equal(err.code, null);
    assert.match(err.message, /could not be started \(ENOENT\)/);
  });

  it('refuses a nonsensical timeout', async () => {
    await assert.rejects(run(node, ['-e', '0'], { timeoutMs: 0 }), RangeError);
  });
});
