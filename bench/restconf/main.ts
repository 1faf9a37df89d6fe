/**
 * RESTCONF client benchmark: elan-instance PUT throughput and latency of RestconfClient at
 * several concurrencies, next to the emulator's raw capacity measured in the same run by a
 * minimal node:http client (keep-alive agent, same concurrency, same URLs, bodies and headers).
 * A third row drives bare axios with the client's settings. raw → bare axios is axios' cost;
 * bare axios → RestconfClient is the client's own (queue, path encoding, status handling);
 * the CPU column (this process's CPU time per request) shows that cost even when the shared
 * machine is busy and wall-clock figures are noisy.
 *
 *   node --import tsx bench/restconf/main.ts [--seconds 3] [--dialect bierman02|rfc8040] [--concurrency 1,8,32]
 *
 * The emulator runs as a child process on an ephemeral port and is stopped by pid at the end.
 * Both processes share the machine, so figures are relative, not absolute.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import axios from 'axios';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { authorizationHeader, type RestconfAuth } from '../../src/restconf/auth.js';
import { RestconfClient } from '../../src/restconf/client.js';
import { DIALECTS, encodePath, type DataPath, type Dialect } from '../../src/restconf/path.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const STARTUP_TIMEOUT_MS = 60_000;
/** Long enough for the JIT to warm up axios and the client before a row is measured. */
const WARMUP_MS = 1_000;
/** Entries per row: the first pass creates them (201), later passes replace (200/204). */
const KEY_SPACE = 512;
const EMULATOR_AUTH: RestconfAuth = { kind: 'basic', user: 'admin', password: 'admin' };

interface Options {
  seconds: number;
  dialect: Dialect;
  concurrencies: number[];
}

interface RowResult {
  driver: 'raw node:http' | 'bare axios' | 'RestconfClient';
  concurrency: number;
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
  /** CPU time of this (the client) process during the row, user + system. */
  cpuMicros: number;
}

/** One PUT: resolves true on 2xx, false on any other answer or failure. */
type PutFn = (index: number) => Promise<boolean>;

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '3' },
      dialect: { type: 'string', default: 'bierman02' },
      concurrency: { type: 'string', default: '1,8,32' },
    },
    strict: true,
  });
  const seconds = Number(values.seconds);
  if (!(seconds > 0 && seconds <= 60)) throw new Error(`--seconds must be in (0, 60], got ${values.seconds}`);
  const dialect = values.dialect as Dialect;
  if (!DIALECTS.includes(dialect)) throw new Error(`--dialect must be one of ${DIALECTS.join(', ')}`);
  const concurrencies = String(values.concurrency)
    .split(',')
    .map((c) => Number(c.trim()));
  if (concurrencies.some((c) => !Number.isInteger(c) || c < 1 || c > 1024))
    throw new Error(`--concurrency must list integers 1..1024`);
  return { seconds, dialect, concurrencies };
}

/** Starts the emulator and resolves with its URL once it logs `emulator listening`. */
async function startEmulator(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/emulator/main.ts', '--port', '0', '--profile', 'sodium'],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ODLCOE_LOG_LEVEL: 'info' },
    },
  );
  const lines = createInterface({ input: child.stderr! });
  const tail: string[] = [];
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`emulator did not report "emulator listening" within ${STARTUP_TIMEOUT_MS} ms`)),
        STARTUP_TIMEOUT_MS,
      );
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`emulator exited (${signal ?? code}) before listening:\n${tail.join('\n')}`));
      });
      lines.on('line', (line) => {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        let entry: unknown;
        try {
          entry = JSON.parse(line);
        } catch {
          return;
        }
        const record = entry as { message?: unknown; msg?: unknown; url?: unknown };
        if (
          (record.message === 'emulator listening' || record.msg === 'emulator listening') &&
          typeof record.url === 'string'
        ) {
          clearTimeout(timer);
          resolve(record.url);
        }
      });
    });
    // Keep draining stderr so the child never blocks on a full pipe.
    child.removeAllListeners('exit');
    return { child, url };
  } catch (err) {
    await stopChild(child);
    throw err;
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
      process.kill(child.pid, 'SIGKILL');
  }, 5_000);
  await exited;
  clearTimeout(timer);
}

function elanPath(name: string): DataPath {
  return [
    { module: 'elan', name: 'elan-instances' },
    { name: 'elan-instance', keys: [name] },
  ];
}

function elanBody(name: string, index: number): unknown {
  return {
    'elan:elan-instance': [
      {
        'elan-instance-name': name,
        'segment-type': 'elan:segment-type-vxlan',
        'segmentation-id': 10_000 + index,
      },
    ],
  };
}

function entryName(row: string, index: number): string {
  return `bench-${row}-${index % KEY_SPACE}`;
}

function restconfClientPut(client: RestconfClient, row: string): PutFn {
  return async (index) => {
    const name = entryName(row, index);
    try {
      await client.put(elanPath(name), elanBody(name, index % KEY_SPACE));
      return true;
    } catch {
      return false;
    }
  };
}

/**
 * axios alone with the same agent and settings as RestconfClient, without its queue, retries,
 * path encoding or error decoding: separates axios' cost from the client's own.
 */
function bareAxiosPut(baseUrl: string, dialect: Dialect, agent: http.Agent, row: string): PutFn {
  const root = dialect === 'bierman02' ? `${baseUrl}/restconf/config/` : `${baseUrl}/rests/data/`;
  const contentType = dialect === 'bierman02' ? 'application/json' : 'application/yang-data+json';
  const instance = axios.create({
    httpAgent: agent,
    headers: { Accept: contentType, Authorization: authorizationHeader(EMULATOR_AUTH) },
    maxRedirects: 0,
    validateStatus: () => true,
    responseType: 'text',
    transformResponse: [(data: unknown) => data],
    proxy: false,
  });
  return async (index) => {
    const name = entryName(row, index);
    try {
      const res = await instance.put(
        root + encodePath(elanPath(name), dialect),
        JSON.stringify(elanBody(name, index % KEY_SPACE)),
        {
          headers: { 'Content-Type': contentType },
        },
      );
      return res.status === 200 || res.status === 201 || res.status === 204;
    } catch {
      return false;
    }
  };
}

/** The least a client can do: keep-alive agent, prebuilt headers, no queue, no retries. */
function rawPut(baseUrl: string, dialect: Dialect, agent: http.Agent, row: string): PutFn {
  const root = dialect === 'bierman02' ? `${baseUrl}/restconf/config/` : `${baseUrl}/rests/data/`;
  const contentType = dialect === 'bierman02' ? 'application/json' : 'application/yang-data+json';
  const authorization = authorizationHeader(EMULATOR_AUTH);
  return (index) =>
    new Promise<boolean>((resolve) => {
      const name = entryName(row, index);
      const body = JSON.stringify(elanBody(name, index % KEY_SPACE));
      const req = http.request(
        root + encodePath(elanPath(name), dialect),
        {
          method: 'PUT',
          agent,
          headers: {
            'Content-Type': contentType,
            Accept: contentType,
            Authorization: authorization,
            'Content-Length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve(res.statusCode === 200 || res.statusCode === 201 || res.statusCode === 204),
          );
          res.on('error', () => resolve(false));
        },
      );
      req.on('error', () => resolve(false));
      req.end(body);
    });
}

/** Runs `concurrency` workers issuing PUTs back to back for `ms`; records each latency. */
async function drive(
  put: PutFn,
  concurrency: number,
  ms: number,
  record: boolean,
): Promise<Omit<RowResult, 'driver' | 'concurrency'>> {
  const latenciesMs: number[] = [];
  const cpuBefore = process.cpuUsage();
  let requests = 0;
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + ms;
  const worker = async () => {
    while (performance.now() < deadline) {
      const index = next++;
      const t0 = performance.now();
      const ok = await put(index);
      if (record) latenciesMs.push(performance.now() - t0);
      requests += 1;
      if (!ok) errors += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const cpu = process.cpuUsage(cpuBefore);
  return {
    requests,
    errors,
    seconds: (performance.now() - started) / 1000,
    latenciesMs,
    cpuMicros: cpu.user + cpu.system,
  };
}

async function measure(
  driver: RowResult['driver'],
  put: PutFn,
  concurrency: number,
  seconds: number,
): Promise<RowResult> {
  await drive(put, concurrency, WARMUP_MS, false);
  const result = await drive(put, concurrency, seconds * 1000, true);
  return { driver, concurrency, ...result };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

function formatRow(row: RowResult): string[] {
  const sorted = [...row.latenciesMs].sort((a, b) => a - b);
  return [
    row.driver,
    String(row.concurrency),
    String(row.requests),
    String(row.errors),
    (row.requests / row.seconds).toFixed(0),
    percentile(sorted, 50).toFixed(2),
    percentile(sorted, 90).toFixed(2),
    percentile(sorted, 99).toFixed(2),
    row.requests > 0 ? (row.cpuMicros / row.requests).toFixed(0) : 'n/a',
  ];
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

function rssMiB(pid?: number): string {
  if (pid === undefined) return (process.memoryUsage().rss / 2 ** 20).toFixed(1);
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? (Number(kb) / 1024).toFixed(1) : 'n/a';
  } catch {
    return 'n/a';
  }
}

/** The emulator's own count of data requests by method and status, to cross-check the table. */
function emulatorCounters(baseUrl: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${baseUrl}/odlcoe-emulator/counters`,
      { headers: { Authorization: authorizationHeader(EMULATOR_AUTH) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          try {
            resolve((JSON.parse(text) as { requests?: unknown }).requests);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      },
    );
    req.on('error', reject);
  });
}

async function main(): Promise<void> {
  const options = parseOptions();
  const { child, url } = await startEmulator();
  const results: RowResult[] = [];
  let peakRss = process.memoryUsage().rss;
  try {
    console.log(
      `emulator ${url} (pid ${child.pid}), profile sodium, dialect ${options.dialect}, ${options.seconds} s per row after ${WARMUP_MS} ms warm-up`,
    );
    for (const concurrency of options.concurrencies) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
      results.push(
        await measure(
          'raw node:http',
          rawPut(url, options.dialect, agent, `raw-c${concurrency}`),
          concurrency,
          options.seconds,
        ),
      );
      agent.destroy();

      const axiosAgent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
      results.push(
        await measure(
          'bare axios',
          bareAxiosPut(url, options.dialect, axiosAgent, `axios-c${concurrency}`),
          concurrency,
          options.seconds,
        ),
      );
      axiosAgent.destroy();

      const client = new RestconfClient({
        baseUrl: url,
        dialect: options.dialect,
        auth: EMULATOR_AUTH,
        concurrency,
        retry: { maxAttempts: 1 },
      });
      results.push(
        await measure(
          'RestconfClient',
          restconfClientPut(client, `client-c${concurrency}`),
          concurrency,
          options.seconds,
        ),
      );
      client.close();
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
    console.log('');
    printTable(
      ['driver', 'conc', 'requests', 'errors', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'client CPU µs/req'],
      results.map(formatRow),
    );
    console.log('');
    console.log(`emulator request counters: ${JSON.stringify(await emulatorCounters(url))}`);
    console.log(
      `bench process RSS ${rssMiB()} MiB (peak between rows ${(peakRss / 2 ** 20).toFixed(1)} MiB); emulator RSS ${rssMiB(child.pid)} MiB`,
    );
    if (results.some((r) => r.errors > 0)) {
      console.log('some PUTs failed: the figures above include failed attempts');
      process.exitCode = 1;
    }
  } finally {
    await stopChild(child);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
