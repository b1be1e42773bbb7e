import type { Config } from '../config.js';

/** What every `gatewayd doctor` check reports, shared by the local checks (doctor.ts) and the network ones (doctor-network.ts). */
export type Level = 'ok' | 'warn' | 'fail';

export interface Finding {
  level: Level;
  check: string;
  detail: string;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host.toLowerCase()) || /^127\./.test(host);
}

/** The database's network (recorded at its first start) against tron.network: serve refuses a mismatch. */
export function checkRecordedNetwork(config: Config, recorded: string | undefined): Finding {
  const configured = config.network.id;
  if (recorded === undefined) return { level: 'ok', check: 'network', detail: `${configured}; the database records it at its first start` };
  if (recorded !== configured) {
    return {
      level: 'fail',
      check: 'network',
      detail: `the database belongs to ${recorded}, but tron.network = "${config.tron.network}" (${configured}): serve refuses to start; fix ${config.database.url ? 'database.url' : 'database.path'} or tron.network`,
    };
  }
  return { level: 'ok', check: 'network', detail: `${configured}${config.network.test ? ': a test network, no real money' : ''}, as the database records` };
}
