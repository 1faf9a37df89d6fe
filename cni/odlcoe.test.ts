import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createServer as createNetServer } from 'node:net';
import {
  agentOutcome,
  callAgent,
  cniEnv,
  HttpResponseReader,
  parseShimConfig,
  runShim,
  ShimError,
  unreachableOutcome,
  spoolDel,
} from './odlcoe.js';

const env = (command: string, extra: Record<string, string> = {}) => ({
  CNI_COMMAND: command,
  CNI_CONTAINERID: 'c0ffee',
  CNI_NETNS: '/run/netns/p',
  CNI_IFNAME: 'eth0',
  CNI_ARGS: 'K8S_POD_NAMESPACE=a;K8S_POD_NAME=b',
  ...extra,
});

describe('the shim reads the HTTP answer itself', () => {
  const feed = (parts: string[], end = false) => {
    const reader = new HttpResponseReader();
    let out: { status: number; body: string } | undefined;
    for (const p of parts) out = reader.push(Buffer.from(p, 'utf8')) ?? out;
    return end ? reader.end() : out;
  };

  it('takes a Content-Length body, whatever the chunking of the stream', () => {
    const body = '{"result":"é"}';
    const whole = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    // Split between every byte, including inside the two-byte "é" and the head terminator.
    const bytes = Buffer.from(whole, 'utf8');
    const reader = new HttpResponseReader();
    let out: { status: number; body: string } | undefined;
    for (let i = 0; i < bytes.length; i++) {
      const r = reader.push(bytes.subarray(i, i + 1));
      if (i < bytes.length - 1) assert.equal(r, undefined);
      else out = r;
    }
    assert.deepEqual(out, { status: 200, body: '{"result":"é"}' });
  });

  it('decodes chunked and close-delimited bodies', () => {
    assert.deepEqual(
      feed(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n', '3\r\n:1}\r\n0\r\n\r\n']),
      { status: 200, body: '{"a":1}' },
    );
    assert.deepEqual(feed(['HTTP/1.0 404 Not Found\r\n\r\nnot here'], true), {
      status: 404,
      body: 'not here',
    });
  });

  it('refuses truncated and malformed answers', () => {
    assert.throws(
      () => feed(['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}'], true),
      /middle of the answer/,
    );
    assert.throws(() => feed(['HTTP/1.1 200 OK\r\n'], true), /before an HTTP answer/);
    assert.throws(() => feed(['SMTP ready\r\n\r\n']), /malformed HTTP status line/);
    assert.throws(() => feed(['HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n']), /malformed Content-Length/);
    assert.throws(() => feed(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']), /chunk size/);
  });

  it('gives up at its deadline on an agent that accepts but never answers', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'odlcoe-shim-mute-'));
    const socket = join(dir, 'mute.sock');
    const server = createNetServer((c) => c.on('data', () => undefined));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      await assert.rejects(callAgent(socket, '{}', 200), /no answer within 0.2 s/);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('shim pure parts', () => {
  it('reads socket, log file and spool dir from the network config', () => {
    // A NetworkAttachmentDefinition's config, as a user writes it: the agent's defaults.
    assert.deepEqual(parseShimConfig('{"cniVersion":"1.0.0","name":"blue","type":"odlcoe"}'), {
      cniVersion: '1.0.0',
      socket: '/run/odlcoe/cni.sock',
      pendingDelDir: '/var/lib/odlcoe/pending-del',
    });
    // Another socket: no guess at where that agent spools.
    assert.deepEqual(parseShimConfig('{"cniVersion":"1.0.0","socket":"/s"}'), {
      cniVersion: '1.0.0',
      socket: '/s',
    });
    assert.deepEqual(
      parseShimConfig('{"cniVersion":"0.4.0","socket":"/s","logFile":"/l","pendingDelDir":"/p"}'),
      {
        cniVersion: '0.4.0',
        socket: '/s',
        logFile: '/l',
        pendingDelDir: '/p',
      },
    );
    assert.throws(
      () => parseShimConfig('{'),
      (e: unknown) => e instanceof ShimError && e.code === 6,
    );
    assert.throws(
      () => parseShimConfig('{"socket":"rel"}'),
      (e: unknown) => e instanceof ShimError && e.code === 7,
    );
  });

  it('forwards only CNI_* variables', () => {
    assert.deepEqual(Object.keys(cniEnv({ ...env('ADD'), HOME: '/root', CNI_PATH: '/opt/cni/bin' })).sort(), [
      'CNI_ARGS',
      'CNI_COMMAND',
      'CNI_CONTAINERID',
      'CNI_IFNAME',
      'CNI_NETNS',
      'CNI_PATH',
    ]);
  });

  it('turns agent answers into stdout and exit code', () => {
    assert.deepEqual(agentOutcome(200, '{"result":{"cniVersion":"1.0.0"}}', '1.0.0'), {
      exitCode: 0,
      stdout: { cniVersion: '1.0.0' },
    });
    assert.deepEqual(agentOutcome(200, '{}', '1.0.0'), { exitCode: 0 });
    const err = agentOutcome(200, '{"error":{"cniVersion":"1.0.0","code":7,"msg":"bad"}}', '1.0.0');
    assert.equal(err.exitCode, 1);
    assert.deepEqual(err.stdout, { cniVersion: '1.0.0', code: 7, msg: 'bad' });
    assert.equal((agentOutcome(400, '{"message":"x"}', '1.0.0').stdout as { code: number }).code, 100);
    assert.equal((agentOutcome(200, 'garbage', '1.0.0').stdout as { code: number }).code, 100);
  });

  it('decides per command when the agent is unreachable', () => {
    const failure = { reason: 'ECONNREFUSED' };
    let spooled = 0;
    const spool = () => {
      spooled += 1;
      return true;
    };
    assert.equal((unreachableOutcome('ADD', '1.0.0', failure, spool).stdout as { code: number }).code, 11);
    assert.equal((unreachableOutcome('CHECK', '1.0.0', failure, spool).stdout as { code: number }).code, 11);
    assert.equal((unreachableOutcome('GC', '1.1.0', failure, spool).stdout as { code: number }).code, 11);
    assert.equal((unreachableOutcome('STATUS', '1.1.0', failure, spool).stdout as { code: number }).code, 50);
    assert.equal(spooled, 0);
    const del = unreachableOutcome('DEL', '1.0.0', failure, spool);
    assert.equal(del.exitCode, 0);
    assert.equal(del.stdout, undefined);
    assert.equal(spooled, 1);
    // Even when the DEL cannot be queued it succeeds: pod deletion must not wedge.
    assert.equal(unreachableOutcome('DEL', '1.0.0', failure, () => false).exitCode, 0);
  });
});

describe('runShim', () => {
  let dir = '';
  let server: Server;
  let socket = '';
  const received: { env: Record<string, string>; config: string }[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'odlcoe-shim-'));
    socket = join(dir, 'agent.sock');
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body) as (typeof received)[number]);
        const answer = JSON.stringify({ result: { cniVersion: '1.0.0', interfaces: [] } });
        // Written in two parts: node:http then frames it chunked, which the shim must read too.
        res.write(answer.slice(0, 10));
        res.end(answer.slice(10));
      });
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('forwards the request and prints the answer', async () => {
    const stdin = JSON.stringify({ cniVersion: '1.0.0', name: 'odlcoe', type: 'odlcoe', socket });
    const out = await runShim({ ...env('ADD'), SECRET: 'x' }, stdin);
    assert.deepEqual(out, { exitCode: 0, stdout: { cniVersion: '1.0.0', interfaces: [] } });
    assert.equal(received[0]?.config, stdin);
    assert.equal(received[0]?.env.SECRET, undefined);
  });

  it('answers VERSION and environment errors locally', async () => {
    assert.deepEqual((await runShim({ CNI_COMMAND: 'VERSION' }, '')).stdout, {
      cniVersion: '1.1.0',
      supportedVersions: ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'],
    });
    const missing = await runShim({}, '{"cniVersion":"0.4.0"}');
    assert.equal(missing.exitCode, 1);
    assert.deepEqual(missing.stdout, {
      cniVersion: '0.4.0',
      code: 4,
      msg: 'required environment variable CNI_COMMAND is missing',
    });
  });

  it('queues a DEL the agent cannot take and succeeds', async () => {
    const spool = join(dir, 'pending');
    const stdin = JSON.stringify({
      cniVersion: '1.0.0',
      name: 'odlcoe',
      type: 'odlcoe',
      socket: join(dir, 'absent.sock'),
      pendingDelDir: spool,
    });
    const del = await runShim(env('DEL'), stdin);
    assert.equal(del.exitCode, 0);
    assert.deepEqual(await readdir(spool), ['c0ffee:eth0.json']);
    const queued = JSON.parse(await readFile(join(spool, 'c0ffee:eth0.json'), 'utf8')) as {
      env: Record<string, string>;
      config: string;
    };
    assert.equal(queued.env.CNI_COMMAND, 'DEL');
    assert.equal(queued.config, stdin);
    const add = await runShim(env('ADD'), stdin);
    assert.equal(add.exitCode, 1);
    assert.equal((add.stdout as { code: number }).code, 11);
  });

  it('queues a DEL at its short deadline when the agent accepts but never answers (hung), and lets ADD wait longer', async () => {
    const sock = join(dir, 'hung.sock');
    const hung = createNetServer(() => undefined);
    await new Promise<void>((resolve) => hung.listen(sock, resolve));
    try {
      const spool = join(dir, 'pending-hung');
      const stdin = JSON.stringify({
        cniVersion: '1.0.0',
        name: 'odlcoe',
        type: 'odlcoe',
        socket: sock,
        pendingDelDir: spool,
      });
      const timeouts = { requestMs: 1_500, delMs: 200 };
      const del = await runShim(env('DEL'), stdin, timeouts);
      assert.equal(del.exitCode, 0);
      assert.match(del.log ?? '', /no answer within 0\.2 s; DEL queued for the agent to replay/);
      assert.deepEqual(await readdir(spool), ['c0ffee:eth0.json']);
      const add = await runShim(env('ADD'), stdin, timeouts);
      assert.equal((add.stdout as { code: number }).code, 11);
      assert.match((add.stdout as { msg: string }).msg, /no answer within 1\.5 s/);
    } finally {
      hung.close();
    }
  });
});

describe('spoolDel', () => {
  it('gives attachments whose ids only differ in where a dot falls files of their own', () => {
    const dir = mkdtempSync(join(tmpdir(), 'odlcoe-spool-'));
    try {
      assert.equal(spoolDel(dir, { CNI_CONTAINERID: 'a', CNI_IFNAME: 'b.c' }, '{}'), true);
      assert.equal(spoolDel(dir, { CNI_CONTAINERID: 'a.b', CNI_IFNAME: 'c' }, '{}'), true);
      assert.equal(readdirSync(dir).filter((f) => f.endsWith('.json')).length, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
