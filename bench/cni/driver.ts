/**
 * The bench's stand-in for a container runtime: a separate, small process that execs CNI
 * plugins and times them. Exec'ing them from the bench's own process would fork the agent
 * (which runs there, with the Kubernetes client loaded): every fork copies its page tables
 * and blocks its event loop, a cost that containerd's execs never put on the real agent.
 *
 * Input on stdin (JSON): {"cmd", "args", "width", "jobs": [{"env", "stdin"}]}; output on
 * stdout: the latency of each job in milliseconds, or the first failure. Only node: imports.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export interface DriverJob {
  env: Record<string, string>;
  stdin: string;
}

export interface DriverInput {
  cmd: string;
  args: string[];
  /** Jobs in flight at once. */
  width: number;
  jobs: DriverJob[];
}

export type DriverOutput = { latencies: number[] } | { error: string };

function exec(cmd: string, args: string[], job: DriverJob): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: job.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(`${cmd} ${job.env.CNI_COMMAND ?? ''} exited ${code}: ${stdout.trim()} ${stderr.trim()}`),
        );
    });
    child.stdin.end(job.stdin);
  });
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as DriverInput;
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(input.width, input.jobs.length) }, async () => {
      while (next < input.jobs.length) {
        const job = input.jobs[next++] as DriverJob;
        const start = performance.now();
        await exec(input.cmd, input.args, job);
        latencies.push(performance.now() - start);
      }
    }),
  );
  const out: DriverOutput = { latencies };
  process.stdout.write(JSON.stringify(out));
}

main().catch((err: unknown) => {
  const out: DriverOutput = { error: err instanceof Error ? err.message : String(err) };
  process.stdout.write(JSON.stringify(out));
  process.exitCode = 1;
});
