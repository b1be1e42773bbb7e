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
