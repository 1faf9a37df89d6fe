import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../common/log.js';
import { createRegistry } from '../../common/metrics.js';
import { Ovs } from '../../ovs/ovs.js';
import { KeyedLock } from '../keyed-lock.js';
import { AgentMetrics } from '../metrics.js';
import { PodAttacher } from '../pod-attach.js';
import { CniError } from './error.js';
import { startCniServer, type CniServer } from './server.js';
import { CniService } from './service.js';

function post(
  socketPath: string,
  path: string,
  body: string,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'POST' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('CNI server and service (no dataplane)', () => {
  let dir = '';
  let socket = '';
  let server: CniServer;
  const registry = createRegistry('test_');
  const metrics = new AgentMetrics(registry);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-cni-server-'));
    socket = join(dir, 'run', 'cni.sock');
    const ovs = new Ovs({ dbSocket: join(dir, 'no-such-db.sock'), timeoutSeconds: 1 });
    const logger = silentLogger();
    const attacher = new PodAttacher({
      ovs,
      bridge: 'br-int',
      mtu: 1450,
      ipamState: () => undefined,
      metrics,
      logger,
    });
    const service = new CniService({
      attacher,
      lock: new KeyedLock(),
      metrics,
      logger,
      requestTimeoutMs: 5_000,
      addReadiness: () => 'the pod subnet is not known yet',
      status: async () => {
        await ovs.ping().catch(() => {
          throw new CniError(51, 'Open vSwitch is unreachable');
        });
      },
    });
    // A socket left behind by an earlier agent is replaced.
    await startCniServer({ socketPath: socket, handle: () => Promise.resolve({}), logger }).then((s) =>
      s.close(),
    );
    server = await startCniServer({
      socketPath: socket,
      handle: (env, stdin) => service.handle(env, stdin),
      logger,
    });
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const envelope = (env: Record<string, string>, config: unknown) =>
    JSON.stringify({ env, config: typeof config === 'string' ? config : JSON.stringify(config) });

  it('creates the socket for root only', async () => {
    const st = await stat(socket);
    assert.ok(st.isSocket());
    assert.equal(st.mode & 0o777, 0o600);
  });

  it('answers VERSION', async () => {
    const { status, json } = await post(
      socket,
      '/v1/cni',
      envelope({ CNI_COMMAND: 'VERSION' }, { cniVersion: '1.0.0' }),
    );
    assert.equal(status, 200);
    assert.deepEqual(json.result, {
      cniVersion: '1.1.0',
      supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
    });
  });

  it('answers errors in the requested version with the right code', async () => {
    const bad = await post(socket, '/v1/cni', envelope({ CNI_COMMAND: 'ADD' }, '{not json'));
    assert.equal((bad.json.error as { code: number }).code, 6);
    const add = await post(
      socket,
      '/v1/cni',
      envelope(
        {
          CNI_COMMAND: 'ADD',
          CNI_CONTAINERID: 'c1',
          CNI_NETNS: '/run/netns/x',
          CNI_IFNAME: 'eth0',
          CNI_ARGS: 'K8S_POD_NAMESPACE=a;K8S_POD_NAME=b',
        },
        { cniVersion: '0.4.0', name: 'odlcoe', type: 'odlcoe' },
      ),
    );
    assert.deepEqual(add.json.error, {
      cniVersion: '0.4.0',
      code: 11,
      msg: 'odlcoe agent is not ready: the pod subnet is not known yet',
    });
  });

  it('reports STATUS 51 when OVS is unreachable', async () => {
    const { json } = await post(
      socket,
      '/v1/cni',
      envelope({ CNI_COMMAND: 'STATUS' }, { cniVersion: '1.1.0', name: 'odlcoe', type: 'odlcoe' }),
    );
    assert.equal((json.error as { code: number }).code, 51);
  });

  it('counts requests by command and result', async () => {
    const text = await registry.metrics();
    assert.match(text, /odlcoe_agent_cni_request_duration_seconds_count\{command="ADD",result="11"\} 1/);
    assert.match(text, /odlcoe_agent_cni_request_duration_seconds_count\{command="VERSION",result="ok"\} 1/);
  });

  it('refuses malformed envelopes and other paths', async () => {
    assert.equal((await post(socket, '/v1/cni', '{"env": 1}')).status, 400);
    assert.equal(
      (await post(socket, '/v1/cni', JSON.stringify({ env: { CNI_COMMAND: 7 }, config: '' }))).status,
      400,
    );
    assert.equal((await post(socket, '/other', '{}')).status, 404);
  });

  it('never replaces a file that is not a socket', async () => {
    const path = join(dir, 'regular');
    await writeFile(path, 'x');
    await assert.rejects(
      startCniServer({ socketPath: path, handle: () => Promise.resolve({}), logger: silentLogger() }),
      /not a socket/,
    );
  });
});
