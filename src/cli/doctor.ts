/**
 * `gatewayd doctor [--config FILE]`: checks an installation and prints one line per check.
 * FAIL is a problem that breaks or endangers the service (exit 1); WARN is advice (exit stays 0).
 * Nothing here writes: a missing database is reported, never created. Secrets are never printed.
 */
import { hasSupportStaff } from '../accounts/support-staff.js';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError, parseListen, type Config } from '../config.js';
import { openSqlite } from '../db/database.js';
import { migrationStatus } from '../db/migrator.js';
import { recordedSqliteNetwork } from '../db/network-guard.js';
import { checkPostgres } from './doctor-postgres.js';
import { checkRecordedNetwork, isLoopbackHost, type Finding } from './doctor-findings.js';
import { checkClock, checkSmtp, checkTron } from './doctor-network.js';
import { checkAccountNetworks } from './doctor-accounts.js';
import { checkEvmNetworks } from './doctor-evm.js';
import { checkRates } from './doctor-rates.js';
import { checkDeploy, type DeployPaths } from './doctor-deploy.js';

export { isLoopbackHost, type Finding, type Level } from './doctor-findings.js';

export interface DoctorOptions {
  /** Per network check (an EVM provider's own timeout_seconds when shorter). */
  timeoutMs?: number;
  /** Where the Caddy site and the systemd unit are looked for (tests); default deployPaths(config). */
  deployPaths?: DeployPaths;
}

/** Runs every check; config is a loader so a configuration error is reported like any problem. */
export async function runDoctor(load: () => Config, out: (line: string) => void, options: DoctorOptions = {}): Promise<number> {
  const findings: Finding[] = [];
  const report = (f: Finding) => {
    findings.push(f);
    out(`${f.level === 'ok' ? 'ok  ' : f.level.toUpperCase()}  ${f.check.padEnd(12)} ${f.detail}`);
  };
  let config: Config;
  try {
    config = load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    report({ level: 'fail', check: 'config', detail: err.message });
    return summarize(findings, out);
  }
  for (const f of checkConfig(config)) report(f);
  for (const f of checkPermissions(config)) report(f);
  for (const f of checkDeploy(config, options.deployPaths)) report(f);
  for (const f of config.database.url ? await checkPostgres(config) : checkDatabase(config)) report(f);
  report(await checkRuntime());
  const timeoutMs = options.timeoutMs ?? 5000;
  const tron = await checkTron(config, timeoutMs);
  for (const f of tron.findings) report(f);
  report(checkClock(tron.dateHeader, tron.blockTime));
  // Each EVM provider with its own timeout_seconds (as the watcher asks it), no longer than a test asks.
  for (const f of await checkEvmNetworks(config, options.timeoutMs)) report(f);
  for (const f of await checkAccountNetworks(config, options.timeoutMs)) report(f);
  report(await checkSmtp(config, timeoutMs));
  for (const f of await checkRates(config, timeoutMs)) report(f);
  return summarize(findings, out);
}

function summarize(findings: Finding[], out: (line: string) => void): number {
  const fails = findings.filter((f) => f.level === 'fail').length;
  const warns = findings.filter((f) => f.level === 'warn').length;
  out(fails === 0 ? `no problems found${warns ? `, ${warns} warning(s)` : ''}` : `${fails} problem(s) found, ${warns} warning(s)`);
  return fails === 0 ? 0 : 1;
}

export function checkConfig(config: Config): Finding[] {
  const findings: Finding[] = [];
  findings.push(
    config.source === 'built-in defaults'
      ? { level: 'warn', check: 'config', detail: 'no configuration file: built-in defaults (run `gatewayd init`)' }
      : { level: 'ok', check: 'config', detail: `${config.source} is valid` },
  );
  if (config.secretGenerated) {
    findings.push({ level: 'fail', check: 'secret', detail: 'server.secret is empty: every restart signs everyone out; set it (`gatewayd init` writes one)' });
  } else if (config.server.secret.length < 32) {
    findings.push({
      level: 'warn',
      check: 'secret',
      detail: `server.secret is short (${config.server.secret.length} characters); use 32 random bytes or more`,
    });
  } else {
    findings.push({ level: 'ok', check: 'secret', detail: 'server.secret is set' });
  }
  const url = new URL(config.server.public_url);
  if (url.protocol === 'https:') {
    findings.push({ level: 'ok', check: 'public_url', detail: `${config.publicOrigin} (https)` });
  } else if (isLoopbackHost(url.hostname)) {
    findings.push({ level: 'ok', check: 'public_url', detail: `${config.publicOrigin} (http on loopback: local use only)` });
  } else {
    findings.push({
      level: 'warn',
      check: 'public_url',
      detail:
        `${config.publicOrigin} is plain http on a public name: sessions and checkout links travel unencrypted; ` +
        'serve it over https behind a reverse proxy',
    });
  }
  if (url.protocol === 'https:' && !config.server.trust_proxy) {
    findings.push({
      level: 'warn',
      check: 'trust_proxy',
      detail: `public_url is https but server.trust_proxy = false: behind a reverse proxy every client shares the proxy's address, so per-IP rate limits block everyone at once; set trust_proxy = true when a proxy terminates TLS`,
    });
  }
  if (!hasSupportStaff(config)) {
    findings.push({
      level: 'warn',
      check: 'support',
      detail:
        'support.staff_emails is empty: nobody can read support tickets, so the public contact form and chat are off; list the accounts that answer support',
    });
  }
  const listen = parseListen(config.server.listen)!;
  const publicPort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  if (url.protocol === 'http:' && publicPort !== listen.port) {
    findings.push({
      level: 'warn',
      check: 'public_url',
      detail:
        `server.public_url ${config.publicOrigin} names port ${publicPort} but server.listen is ${config.server.listen}: a browser on the listen address is refused every signed-in request ("Origin ... does not match server.public_url"); ` +
        'unset server.public_url (it then follows server.listen) or make the two agree, unless a reverse proxy forwards that port',
    });
  }
  if (!isLoopbackHost(listen.host) && url.protocol === 'https:' && !config.server.trust_proxy) {
    findings.push({
      level: 'warn',
      check: 'listen',
      detail: `server.listen ${config.server.listen} is not loopback although public_url is https: is the reverse proxy bypassable?`,
    });
  }
  if (config.metrics.enabled) {
    const m = parseListen(config.metrics.listen)!;
    findings.push(
      isLoopbackHost(m.host)
        ? { level: 'ok', check: 'metrics', detail: `enabled on ${config.metrics.listen}` }
        : { level: 'warn', check: 'metrics', detail: `metrics.listen ${config.metrics.listen} is not loopback: make sure only your scraper can reach it` },
    );
  }
  return findings;
}

/** The config may be group-readable (0640, for a service group) but nothing else. */
export function checkPermissions(config: Config): Finding[] {
  const findings: Finding[] = [];
  const mode = (path: string) => statSync(path).mode & 0o777;
  const octal = (m: number) => `0${m.toString(8)}`;
  if (config.source !== 'built-in defaults' && existsSync(config.source)) {
    const m = mode(config.source);
    findings.push(
      (m & 0o037) === 0
        ? { level: 'ok', check: 'permissions', detail: `${config.source} is ${octal(m)}` }
        : { level: 'fail', check: 'permissions', detail: `${config.source} is ${octal(m)}: it holds server.secret; chmod 0640 (or 0600)` },
    );
  }
  const db = config.database.path;
  if (db === ':memory:') return findings;
  const dir = dirname(db);
  if (existsSync(dir)) {
    const m = mode(dir);
    findings.push(
      (m & 0o077) === 0
        ? { level: 'ok', check: 'permissions', detail: `${dir} is ${octal(m)}` }
        : { level: 'fail', check: 'permissions', detail: `${dir} is ${octal(m)}: the data folder should be 0700` },
    );
  }
  const dirOwner = existsSync(dir) ? statSync(dir).uid : undefined;
  for (const file of [db, `${db}-wal`, `${db}-shm`]) {
    if (!existsSync(file)) continue;
    const st = statSync(file);
    const m = st.mode & 0o777;
    findings.push(
      (m & 0o077) === 0
        ? { level: 'ok', check: 'permissions', detail: `${file} is ${octal(m)}` }
        : { level: 'fail', check: 'permissions', detail: `${file} is ${octal(m)}: it holds password hashes and webhook secrets; chmod 0600` },
    );
    // A file created by a command run as another user (root) locks the service out of its database.
    if (dirOwner !== undefined && st.uid !== dirOwner) {
      findings.push({
        level: 'fail',
        check: 'permissions',
        detail: `${file} is owned by uid ${st.uid}, its folder by uid ${dirOwner}: chown it to the service user`,
      });
    }
  }
  return findings;
}

export function checkDatabase(config: Config): Finding[] {
  const path = config.database.path;
  if (path !== ':memory:' && !existsSync(path)) {
    return [{ level: 'fail', check: 'database', detail: `${path} does not exist: run \`gatewayd migrate\`` }];
  }
  let sqlite;
  try {
    // Read-write although nothing is written: a read-only connection leaves -wal and -shm files
    // behind, owned by whoever ran doctor (often root), which the service user then cannot open.
    // The last read-write connection to close removes them.
    sqlite = openSqlite(path);
  } catch (err) {
    return [{ level: 'fail', check: 'database', detail: `${path}: cannot open (${(err as Error).message})` }];
  }
  const findings: Finding[] = [];
  try {
    const result = sqlite.pragma('integrity_check', { simple: true });
    findings.push(
      result === 'ok'
        ? { level: 'ok', check: 'database', detail: `${path}: integrity ok, journal ${String(sqlite.pragma('journal_mode', { simple: true }))}` }
        : { level: 'fail', check: 'database', detail: `${path}: integrity check failed (${String(result)}); restore the latest backup` },
    );
  } catch (err) {
    findings.push({ level: 'fail', check: 'database', detail: `${path}: ${(err as Error).message}; restore the latest backup` });
  }
  try {
    const hasTable = sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
    if (!hasTable) {
      findings.push({ level: 'fail', check: 'migrations', detail: 'no migration was ever applied: run `gatewayd migrate`' });
    } else {
      const s = migrationStatus(sqlite);
      findings.push(
        s.pending.length === 0
          ? { level: 'ok', check: 'migrations', detail: `${s.applied.length} applied, none pending` }
          : {
              level: 'fail',
              check: 'migrations',
              detail: `${s.pending.length} pending (${s.pending.map((m) => m.version).join(', ')}): run \`gatewayd migrate\``,
            },
      );
      findings.push(checkRecordedNetwork(config, recordedSqliteNetwork(sqlite)));
    }
  } catch (err) {
    findings.push({ level: 'fail', check: 'migrations', detail: (err as Error).message });
  }
  sqlite.close();
  return findings;
}

/** The native addons load and work (in the packaged binary they come from the embedded cache). */
async function checkRuntime(): Promise<Finding> {
  try {
    const probe = openSqlite(':memory:');
    const version = (probe.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    probe.close();
    const argon2 = await import('@node-rs/argon2');
    const hash = await argon2.hash('doctor-probe', { memoryCost: 1024, timeCost: 1 });
    if (!(await argon2.verify(hash, 'doctor-probe'))) throw new Error('argon2 verify failed');
    return { level: 'ok', check: 'runtime', detail: `node ${process.versions.node}, sqlite ${version}, argon2 ok` };
  } catch (err) {
    return { level: 'fail', check: 'runtime', detail: `a native component does not load: ${(err as Error).message}` };
  }
}
