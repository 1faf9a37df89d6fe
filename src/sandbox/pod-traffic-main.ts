/**
 * pod-traffic: the two ends of a TCP and a UDP exchange between pods, run inside their network
 * namespaces (`nsenter --net=<netns>`) by src/sandbox/pod-traffic.ts. Node built-ins only.
 *
 *   pod-traffic-main serve --port 8080 [--lifetime-ms 120000]
 *     HTTP on TCP <port> answers GET /<token> with <token>; UDP <port> echoes every datagram.
 *     Prints "ready" once both listen; exits on SIGTERM or after the lifetime.
 *   pod-traffic-main probe --to <ip> --port 8080 [--timeout-ms 5000]
 *     An HTTP GET and a UDP echo with a random token; prints one JSON line
 *     {"tcp":{"ok":true,"ms":1.2},"udp":{"ok":false,"error":"..."}} and exits 0.
 */
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { createServer, get } from 'node:http';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

export interface ExchangeResult {
  ok: boolean;
  ms?: number;
  error?: string;
}

function fail(message: string): never {
  process.stderr.write(`pod-traffic: ${message}\n`);
  process.exit(2);
}

function number(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) fail(`--${name} must be a positive integer`);
  return n;
}

function serve(port: number, lifetimeMs: number): void {
  const http = createServer((req, res) => {
    const body = (req.url ?? '/').slice(1);
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  const udp = createSocket('udp4');
  udp.on('message', (msg, from) => udp.send(msg, from.port, from.address));
  let listening = 0;
  const up = () => {
    listening += 1;
    if (listening === 2) process.stdout.write('ready\n');
  };
  http.on('error', (err) => fail(`TCP ${port}: ${err.message}`));
  udp.on('error', (err) => fail(`UDP ${port}: ${err.message}`));
  http.listen(port, '0.0.0.0', up);
  udp.bind(port, '0.0.0.0', up);
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Never outlives a parent that could not stop it.
  setTimeout(stop, lifetimeMs).unref();
}

/**
 * One exchange with a deadline: `start` begins it and returns how to tear it down; the first
 * outcome (its own, or the deadline's) wins.
 */
function exchange(
  timeoutMs: number,
  timeoutError: string,
  start: (done: (r: ExchangeResult) => void) => () => void,
): Promise<ExchangeResult> {
  return new Promise((resolve) => {
    let settled = false;
    let teardown: (() => void) | undefined = undefined;
    const done = (r: ExchangeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      teardown?.();
      resolve(r);
    };
    const timer = setTimeout(() => done({ ok: false, error: timeoutError }), timeoutMs);
    teardown = start(done);
  });
}

function httpGet(to: string, port: number, timeoutMs: number): Promise<ExchangeResult> {
  const token = randomBytes(8).toString('hex');
  const started = performance.now();
  return exchange(timeoutMs, `no HTTP answer from ${to}:${port} within ${timeoutMs} ms`, (done) => {
    const req = get({ host: to, port, path: `/${token}`, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        done(
          res.statusCode === 200 && body === token
            ? { ok: true, ms: round(performance.now() - started) }
            : { ok: false, error: `HTTP ${res.statusCode ?? '?'} with an unexpected body` },
        ),
      );
    });
    req.on('error', (err) => done({ ok: false, error: err.message }));
    return () => req.destroy();
  });
}

function udpEcho(to: string, port: number, timeoutMs: number): Promise<ExchangeResult> {
  const token = Buffer.from(randomBytes(8).toString('hex'));
  const started = performance.now();
  return exchange(timeoutMs, `no UDP echo from ${to}:${port} within ${timeoutMs} ms`, (done) => {
    const socket = createSocket('udp4');
    socket.on('message', (msg) => {
      if (msg.equals(token)) done({ ok: true, ms: round(performance.now() - started) });
    });
    socket.on('error', (err) => done({ ok: false, error: err.message }));
    // A datagram may be lost; a few more within the deadline.
    const send = () => socket.send(token, port, to);
    const resend = setInterval(send, 500);
    send();
    return () => {
      clearInterval(resend);
      socket.close();
    };
  });
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string' },
      to: { type: 'string' },
      'timeout-ms': { type: 'string' },
      'lifetime-ms': { type: 'string' },
    },
  });
  const port = number('port', values.port, 8080);
  if (port > 65535) fail('--port must be at most 65535');
  if (command === 'serve') {
    serve(port, number('lifetime-ms', values['lifetime-ms'], 120_000));
    return;
  }
  if (command === 'probe') {
    const to = values.to ?? '';
    if (isIP(to) !== 4) fail('--to must be an IPv4 address');
    const timeoutMs = number('timeout-ms', values['timeout-ms'], 5_000);
    const [tcp, udp] = await Promise.all([httpGet(to, port, timeoutMs), udpEcho(to, port, timeoutMs)]);
    process.stdout.write(`${JSON.stringify({ tcp, udp })}\n`);
    return;
  }
  fail('usage: pod-traffic-main serve --port N | probe --to IP --port N [--timeout-ms N]');
}

void main();
