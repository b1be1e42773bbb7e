import type { Log } from './log.js';

/** A background job: one pass of work. Returns true when it did something (the loop then runs again soon). */
export type RunOnce = () => Promise<boolean | void>;

export interface Worker {
  name: string;
  /** Pause between passes when the last pass found nothing to do. */
  intervalMs: number;
  /** A shorter pause after this pass, when the worker knows work is due sooner (e.g. the next block). */
  nextDelayMs?(): number | undefined;
  runOnce: RunOnce;
  /** Called once with the loop's handle, e.g. to let other code wake it. */
  onStart?(loop: LoopHandle): void;
  /** Work the worker started in the background that stop() should wait for (e.g. requests in flight). */
  drain?(): Promise<void>;
  /** Called when stop() begins, so a long pass can end early at a safe point instead of being waited for. */
  onStop?(): void;
}

export interface LoopHandle {
  /** Stops scheduling new passes and waits for the running one to finish. */
  stop(): Promise<void>;
  /** Runs a pass as soon as possible (e.g. after new work was queued). */
  wake(): void;
}

/**
 * Runs a worker until stopped. Errors are logged (never swallowed silently) and the loop goes on
 * after the usual interval; a pass never overlaps the previous one.
 */
export function startLoop(worker: Worker, log: Log): LoopHandle {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let wakeRequested = false;

  const schedule = (delay: number): void => {
    if (stopped) return;
    timer = setTimeout(tick, delay);
    timer.unref?.();
  };

  const tick = (): void => {
    timer = undefined;
    if (stopped) return;
    wakeRequested = false;
    running = (async () => {
      let busy = false;
      try {
        busy = (await worker.runOnce()) === true;
      } catch (err) {
        log.error({ err, worker: worker.name }, 'worker pass failed');
      }
      running = undefined;
      const sooner = worker.nextDelayMs?.();
      schedule(busy || wakeRequested ? 0 : Math.max(0, Math.min(worker.intervalMs, sooner ?? worker.intervalMs)));
    })();
  };

  schedule(0);

  const handle: LoopHandle = {
    async stop() {
      stopped = true;
      worker.onStop?.();
      if (timer) clearTimeout(timer);
      if (running) await running;
      await worker.drain?.();
    },
    wake() {
      if (stopped) return;
      if (running) {
        wakeRequested = true;
      } else if (timer) {
        clearTimeout(timer);
        schedule(0);
      }
    },
  };
  worker.onStart?.(handle);
  return handle;
}
