/**
 * The doctor's checks of what `gatewayd init --domain` wrote besides the configuration: the Caddy
 * site (it must serve public_url's host and forward to server.listen) and the systemd unit (it must
 * start an executable that exists, with this configuration, and may write the database's folder).
 * Each file is looked for beside the configuration and where install.sh and Caddy put it; one that
 * is not there is not checked (another reverse proxy or service manager may be in use).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../config.js';
import { readCaddyfile, readUnit } from './deploy-files.js';
import type { Finding } from './doctor-findings.js';

export interface DeployPaths {
  caddy: string[];
  unit: string[];
}

/** Where the files are looked for, first found first checked. */
export function deployPaths(config: Config): DeployPaths {
  const here = config.source.endsWith('.toml') ? dirname(resolve(config.source)) : undefined;
  const beside = (name: string) => (here ? [resolve(here, name)] : []);
  return {
    caddy: [...beside('Caddyfile'), '/etc/caddy/Caddyfile'],
    unit: ['/etc/systemd/system/gatewayd.service', ...beside('gatewayd.service')],
  };
}

const found = (paths: string[]) => paths.find((p) => existsSync(p));

export function checkDeploy(config: Config, paths: DeployPaths = deployPaths(config)): Finding[] {
  const findings: Finding[] = [];
  const url = new URL(config.server.public_url);
  const caddy = found(paths.caddy);
  if (caddy && url.protocol === 'https:') {
    const site = readCaddyfile(readFileSync(caddy, 'utf8'));
    const host = url.host.replace(/:443$/, '');
    if (!site.sites.includes(host)) {
      findings.push({
        level: 'fail',
        check: 'caddy',
        detail: `${caddy} serves ${site.sites.join(', ') || 'no site'}, not ${host} (server.public_url): begin its site block with "${host} {", or rewrite it with \`gatewayd init --domain ${host}\``,
      });
    } else if (site.upstream !== config.server.listen) {
      findings.push({
        level: 'fail',
        check: 'caddy',
        detail: `${caddy} forwards ${host} to ${site.upstream ?? 'nothing'}, but gatewayd listens on ${config.server.listen}: write "reverse_proxy ${config.server.listen}" in its site block`,
      });
    } else {
      findings.push({ level: 'ok', check: 'caddy', detail: `${caddy} serves ${host} over HTTPS and forwards to ${config.server.listen}` });
    }
  }
  const unitFile = found(paths.unit);
  if (unitFile && config.source.endsWith('.toml')) {
    const unit = readUnit(readFileSync(unitFile, 'utf8'));
    const configPath = resolve(config.source);
    const database = config.database.url ? undefined : dirname(resolve(config.database.path));
    if (!unit.exe || !existsSync(unit.exe)) {
      findings.push({
        level: 'fail',
        check: 'systemd',
        detail: `${unitFile} starts ${unit.exe ?? 'nothing'}, which does not exist: point ExecStart at the gatewayd executable`,
      });
    } else if (unit.config !== configPath) {
      findings.push({
        level: 'fail',
        check: 'systemd',
        detail: `${unitFile} starts gatewayd with ${unit.config ?? 'no --config'}, not this configuration (${configPath}): set ExecStart=${unit.exe} serve --config ${configPath}`,
      });
    } else if (database && !unit.writable.some((w) => database === w || database.startsWith(`${w}/`))) {
      findings.push({
        level: 'fail',
        check: 'systemd',
        detail: `${unitFile} lets the service write ${unit.writable.join(' ') || 'nothing'}, not the database folder ${database}: set ReadWritePaths=${database}`,
      });
    } else {
      findings.push({ level: 'ok', check: 'systemd', detail: `${unitFile} starts ${unit.exe} with this configuration` });
    }
  }
  return findings;
}
