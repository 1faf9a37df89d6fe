/**
 * The undo of a failed CNI ADD: each step registers how to take back what it made, once it
 * made it; on failure they run newest first, every one even when an earlier one fails, so a
 * failed ADD leaves nothing behind, or says exactly what is left for the runtime's DEL.
 */
import type { Logger } from '../common/log.js';
import { errorMessage } from '../common/log.js';
import { CNI_ERROR, CniError } from './cni/error.js';
import type { StepTimer } from './metrics.js';

export class UndoStack {
  private readonly steps: { what: string; run: () => Promise<unknown> }[] = [];

  push(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  /**
   * Undoes every step, newest first, timed as `rollback`, then throws `err` as a CniError:
   * with the undo failures in its details when some step could not be undone.
   */
  async rollBack(
    err: unknown,
    ctx: { timer: StepTimer; logger: Logger; log: Record<string, unknown> },
  ): Promise<never> {
    const failures = await ctx.timer.time('rollback', async () => {
      const failed: string[] = [];
      for (const step of this.steps.splice(0).reverse()) {
        try {
          await step.run();
        } catch (undoErr) {
          failed.push(`${step.what}: ${errorMessage(undoErr)}`);
        }
      }
      return failed;
    });
    const error = err instanceof CniError ? err : new CniError(CNI_ERROR.internal, errorMessage(err));
    if (failures.length > 0) {
      ctx.logger.error('ADD rollback incomplete', { ...ctx.log, failures });
      throw new CniError(
        error.code,
        error.message,
        `rollback incomplete (DEL will retry): ${failures.join('; ')}`,
      );
    }
    ctx.logger.info('ADD failed and was rolled back', { ...ctx.log, error: error.message });
    throw error;
  }
}
