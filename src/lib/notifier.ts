/**
 * A wake-up call between two parts of the process, typed and explicit: the one consumer connects
 * when it starts, producers call notify(). Before anyone is connected (tests that run a worker's
 * runOnce by hand, CLI commands) a notify does nothing; the consumer's own poll still finds the work.
 */
export class Notifier {
  #listener: (() => void) | undefined;

  /** Called by the consumer at start-up; a later connect replaces the earlier listener. */
  connect(listener: () => void): void {
    this.#listener = listener;
  }

  notify(): void {
    this.#listener?.();
  }
}
