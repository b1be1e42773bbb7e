/** Measuring tools for the benchmark run: autocannon as its own process, RSS of a process, load. */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, fsyncSync, openSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';

const DRIVER = join(import.meta.dirname, '../load-driver.js');

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  seconds: number;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** `[<id>]` in the body or the headers becomes a fresh id per request. */
  body?: string;
  connections: number;
  seconds: number;
}

/** Runs autocannon in a separate process (so the load generator never shares the server's event loop). */
export function autocannon(o: LoadOptions): Promise<LoadResult> {
  const ids = (o.body ?? '').includes('[<id>]') || Object.values(o.headers ?? {}).some((v) => v.includes('[<id>]'));
  const opts = {
    url: o.url,
    method: o.method ?? 'GET',
    headers: o.headers ?? {},
    body: o.body,
    connections: o.connections,
    duration: o.seconds,
    idReplacement: ids,
  };
  const args = [DRIVER, JSON.stringify(opts)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${err}`));
      const r = JSON.parse(out) as {
        requests: { total: number; average: number };
        latency: { p50: number; p99: number };
        non2xx: number;
        errors: number;
        timeouts: number;
        duration: number;
        '2xx': number;
      };
      resolve({
        rps: r['2xx'] / r.duration,
        p50: r.latency.p50,
        p99: r.latency.p99,
        ok: r['2xx'],
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
        seconds: r.duration,
      });
    });
  });
}

/** Resident set size of a process in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/**
 * CPU time a process has used so far (user and system), in ms (Linux /proc; NaN elsewhere). The
 * clock ticks of /proc/PID/stat are 1/100 s on Linux (USER_HZ, the same on x86-64 and arm64).
 */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/**
 * The two parts of a process's RSS, in MB: anonymous memory (the heap, compiled code, stacks: the
 * program's own) and file pages (the executable and libraries mapped from disk, shared and
 * reclaimable; how many are counted depends on how the page cache holds the file, see
 * dropFromPageCache).
 */
export function rssPartsMb(pid: number): { anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
}

/**
 * Puts an executable's page cache in the state it has after a reboot and one earlier run: written to
 * disk, dropped from the cache (GNU dd's `iflag=nocache count=0`, posix_fadvise DONTNEED), then run
 * once with `warmArgs` so the measured start reads it from the cache. Why: Linux 6.x holds a file
 * that was just written with large writes (the build's `node --build-sea`) in large folios and maps
 * each one whole on the first touch, so the same program counts ~33 MB more file-backed RSS when
 * started right after the build than after a reboot (86 against 53 MB, issue 32). Without dd
 * (not Linux) nothing is dropped and the figure says so.
 */
export function dropFromPageCache(file: string, warmArgs: string[]): boolean {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    execFileSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none'], { stdio: 'ignore' });
  } catch {
    return false;
  }
  execFileSync(file, warmArgs, { stdio: 'ignore' });
  return true;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak in MB. */
export function rssSampler(pid: number, everyMs = 50): { stop(): number } {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(pid));
    } catch {
      /* the process ended */
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

export const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function percentiles(samples: number[]): { p50: number; p99: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const pick = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { p50: pick(0.5), p99: pick(0.99), max: s.at(-1) ?? NaN };
}
