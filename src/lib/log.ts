import { pino, type Logger, type DestinationStream } from 'pino';

export type Log = Logger;
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * Structured JSON logs on stdout (or on a given stream, e.g. a test that reads every line).
 * Secrets never go to a log: callers log ids and prefixes, never tokens, passwords or hashes,
 * and the redact list below is a second line of defence for the usual field names.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Log {
  return pino(
    {
      level,
      base: { service: 'gatewayd' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: ['password', '*.password', 'token', '*.token', 'secret', '*.secret', 'authorization', '*.authorization', 'cookie', '*.cookie'],
        censor: '[redacted]',
      },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
