import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { isAlive, stopPid } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { putNodeSubnet, ROOT, startAgentSurroundings, type AgentSurroundings } from './testing.js';

/**
 * The agent binary with `--parent-pid`, started by a supervisor process that is then killed with
 * SIGKILL (as a sandbox killed outright): the orphaned agent notices and stops cleanly by
 * itself. No OVS is needed.
 */

/**
 * A stand-in supervisor: starts the agent with `--parent-pid <its own pid>`, the agent's
 * stderr appended to `log`, prints the agent's pid, and then only waits.
 */
const SUPERVISOR = `
  import { spawn } from 'node:child_process';
  import { openSync } from 'node:fs';
  const [log, ...args] = process.argv.slice(1);
  const agent = spawn(process.execPath, [...args, '--parent-pid', String(process.pid)], {
    stdio: ['ignore', 'ignore', openSync(log, 'a')],
  });
  agent.once('spawn', () => console.log(agent.pid));
  setInterval(() => undefined, 60_000);
`;

describe('odlcoe-agent --parent-pid', { timeout: 120_000 }, () => {
  let world: AgentSurroundings;
  const pids: number[] = [];
  const children: ChildProcess[] = [];

  before(async () => {
    world = await startAgentSurroundings();
    await putNodeSubnet(world.odl.url, '10.11.1.0/24');
  });
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.pid) await stopPid(child.pid);
    for (const pid of pids.splice(0)) await stopPid(pid);
  });
  after(async () => {
    await world?.close();
  });

  const log = (name: string) => join(world.dir, name);
  const env = { ...process.env, ODLCOE_LOG_LEVEL: 'info' };

  it('stops cleanly by itself once the process that started it is killed', async () => {
    const supervisor = spawn(
      process.execPath,
      ['--input-type=module', '-e', SUPERVISOR, log('orphan.log'), ...world.agentArgs()],
      { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(supervisor);
    let stdout = '';
    supervisor.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    await waitFor(() => /^\d+\n/.test(stdout), { what: 'the supervisor to start the agent' });
    const agentPid = Number(stdout.trim());
    pids.push(agentPid);
    // Started and serving: the CNI socket is there and the watch on the parent is armed.
    await waitFor(async () => /"port":\s*\d+/.test(await readFile(log('orphan.log'), 'utf8')), {
      timeoutMs: 60_000,
      what: 'the agent to start',
    });
    assert.ok(await stat(world.socket));

    process.kill(supervisor.pid ?? 0, 'SIGKILL');
    await waitFor(async () => !(await isAlive(agentPid)), { what: 'the orphaned agent to exit' });
    const text = await readFile(log('orphan.log'), 'utf8');
    assert.match(text, /"message":"stopping".*"reason":"the parent process is gone"/);
    assert.doesNotMatch(text, /stop failed/);
    // A clean stop removes the CNI socket (a crash would leave it).
    await assert.rejects(stat(world.socket), /ENOENT/);
  });

  it('refuses to start for a parent that is already gone', async () => {
    const gone = spawn('true');
    await new Promise((resolve) => gone.once('exit', resolve));
    const agent = spawn(process.execPath, world.agentArgs(['--parent-pid', String(gone.pid)]), {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(agent);
    let stderr = '';
    agent.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => agent.once('exit', (c) => resolve(c)));
    assert.equal(code, 1, stderr);
    assert.match(stderr, /the parent process is not running/);
    await assert.rejects(stat(world.socket), /ENOENT/, 'nothing was started');
  });
});
