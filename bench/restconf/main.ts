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
import http from 'node:http';
import axios from 'axios';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { authorizationHeader, type RestconfAuth } from '../../src/restconf/auth.js';
import { RestconfClient } from '../../src/restconf/client.js';
import { DIALECTS, encodePath, type DataPath, type Dialect } from '../../src/restconf/path.js';
import { startListening, stopChild } from '../common/child.js';
import { formatMiB, rssOf } from '../common/memory.js';
import { rawRequest, requestJson, restconfData } from '../common/raw-http.js';
import { percentile } from '../common/stats.js';
import { formatTable } from '../common/table.js';

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
  const { root, contentType } = restconfData(baseUrl, dialect);
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
  const { root, contentType } = restconfData(baseUrl, dialect);
  const authorization = authorizationHeader(EMULATOR_AUTH);
  return (index) => {
    const name = entryName(row, index);
    const body = JSON.stringify(elanBody(name, index % KEY_SPACE));
    const headers = {
      'Content-Type': contentType,
      Accept: contentType,
      Authorization: authorization,
      'Content-Length': Buffer.byteLength(body),
    };
    return rawRequest(
      root + encodePath(elanPath(name), dialect),
      { method: 'PUT', agent, headers },
      body,
    ).then(
      (status) => status === 200 || status === 201 || status === 204,
      () => false,
    );
  };
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

function formatRow(row: RowResult): string[] {
  return [
    row.driver,
    String(row.concurrency),
    String(row.requests),
    String(row.errors),
    (row.requests / row.seconds).toFixed(0),
    percentile(row.latenciesMs, 50).toFixed(2),
    percentile(row.latenciesMs, 90).toFixed(2),
    percentile(row.latenciesMs, 99).toFixed(2),
    row.requests > 0 ? (row.cpuMicros / row.requests).toFixed(0) : 'n/a',
  ];
}

/** The emulator's own count of data requests by method and status, to cross-check the table. */
async function emulatorCounters(baseUrl: string): Promise<unknown> {
  const counters = await requestJson(`${baseUrl}/odlcoe-emulator/counters`, 'GET', undefined, {
    Authorization: authorizationHeader(EMULATOR_AUTH),
  });
  return (counters as { requests?: unknown }).requests;
}

const rss = (pid: number) => {
  const bytes = rssOf(pid);
  return bytes === undefined ? 'n/a' : formatMiB(bytes);
};

async function main(): Promise<void> {
  const options = parseOptions();
  const { child, url } = await startListening(
    ['src/emulator/main.ts', '--port', '0', '--profile', 'sodium'],
    'emulator listening',
  );
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
    console.log(
      formatTable(
        ['driver', 'conc', 'requests', 'errors', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'client CPU µs/req'],
        results.map(formatRow),
        2,
      ),
    );
    console.log('');
    console.log(`emulator request counters: ${JSON.stringify(await emulatorCounters(url))}`);
    console.log(
      `bench process RSS ${rss(process.pid)} (peak between rows ${formatMiB(peakRss)}); emulator RSS ${child.pid === undefined ? 'n/a' : rss(child.pid)}`,
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
