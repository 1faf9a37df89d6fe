/**
 * The shim's spool of DELs the agent was not there to serve: replayed once the agent serves
 * again, so a pod deleted while the agent was down still gives its address and port back.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../common/log.js';
import { errorMessage } from '../../common/log.js';
import { CNI_ERROR } from './error.js';
import type { CniEnv } from './request.js';
import type { CniAnswer } from './server.js';
import { parseEnvelope } from './server.js';

/**
 * DEL requests the shim could not hand to the agent (it was down) and answered with success
 * so that pod deletion does not wedge. Each file is `{"env": {...}, "config": "<stdin>"}`
 * like a socket request. The agent replays them once it serves; a file goes away when its
 * DEL succeeded or can never succeed (a malformed request), and stays for the next pass when
 * the failure may be temporary.
 */
export async function replayPendingDels(
  dir: string,
  handle: (env: CniEnv, stdin: string) => Promise<CniAnswer>,
  logger: Logger,
): Promise<{ replayed: number; kept: number }> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { replayed: 0, kept: 0 };
    throw err;
  }
  let replayed = 0;
  let kept = 0;
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    const file = join(dir, name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const envelope = parseEnvelope(text);
    if (typeof envelope === 'string' || envelope.env.CNI_COMMAND !== 'DEL') {
      logger.error('dropping malformed pending DEL', {
        file,
        problem: typeof envelope === 'string' ? envelope : 'not a DEL',
      });
      await rm(file, { force: true });
      continue;
    }
    const answer = await handle(envelope.env, envelope.config);
    if ('error' in answer && answer.error.code >= CNI_ERROR.tryAgainLater) {
      logger.warn('pending DEL failed; keeping it for the next pass', {
        file,
        code: answer.error.code,
        msg: answer.error.msg,
      });
      kept += 1;
      continue;
    }
    if ('error' in answer) {
      logger.error('dropping pending DEL that cannot succeed', {
        file,
        code: answer.error.code,
        msg: answer.error.msg,
      });
    } else {
      logger.info('replayed pending DEL', {
        containerId: envelope.env.CNI_CONTAINERID,
        ifName: envelope.env.CNI_IFNAME,
      });
      replayed += 1;
    }
    await rm(file, { force: true }).catch((err: unknown) =>
      logger.warn('cannot remove pending DEL', { file, error: errorMessage(err) }),
    );
  }
  return { replayed, kept };
}
