/** The chain watcher's state as /health and the metrics show it; the watcher updates it in place. */
export interface WatcherStatus {
  state: 'stopped' | 'idle' | 'running' | 'degraded';
  /** Seconds between now and the newest moment every watched address is covered up to; null when nothing is watched. */
  lagSeconds: number | null;
}
