/** The chain watcher's state as /health and the metrics show it; the watcher updates it in place. */
export interface WatcherStatus {
  state: 'stopped' | 'idle' | 'running' | 'degraded';
  /** Seconds between now and the time up to which every block is read; null when idle. */
  lagSeconds: number | null;
  /** When the current condition (ok, behind, down) began; kept by the status object itself (src/system/live-payments.ts). */
  readonly since?: number | null;
}
