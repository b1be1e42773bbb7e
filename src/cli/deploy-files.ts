/**
 * The two files besides gatewayd.toml that put an instance on the internet, written by
 * `gatewayd init --domain` (and by install.sh through it): the hardened systemd unit and a Caddy
 * site that terminates HTTPS with an automatic certificate and forwards to server.listen. One
 * source for both, so that `gatewayd doctor` checks the very shape init writes.
 */

export interface UnitPaths {
  /** The executable systemd starts. */
  exe: string;
  /** The configuration file it is given. */
  config: string;
  /** The folder the database lives in: the only one the service may write. */
  data: string;
}

export const SERVICE_USER = 'gatewayd';

export function systemdUnit(paths: UnitPaths): string {
  return `# Written by \`gatewayd init\` (install.sh rewrites it on upgrade). Local changes belong in a
# drop-in: systemctl edit gatewayd
[Unit]
Description=gatewayd: self-hosted USDT invoicing gateway
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User=${SERVICE_USER}
Group=${SERVICE_USER}
ExecStart=${paths.exe} serve --config ${paths.config}
Restart=on-failure
RestartSec=5s
TimeoutStopSec=30s
UMask=0077
# The packaged binary unpacks its native addons once into $XDG_CACHE_HOME/gatewayd.
CacheDirectory=gatewayd
Environment=XDG_CACHE_HOME=/var/cache
LimitNOFILE=65536

# Hardening: read-only system, writable data folder only, no privileges to gain.
NoNewPrivileges=true
ProtectSystem=strict
ReadWritePaths=${paths.data}
ProtectHome=true
PrivateTmp=true
PrivateDevices=true
ProtectKernelTunables=true
ProtectKernelModules=true
ProtectKernelLogs=true
ProtectControlGroups=true
ProtectClock=true
ProtectHostname=true
RestrictSUIDSGID=true
RestrictNamespaces=true
RestrictRealtime=true
LockPersonality=true
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
CapabilityBoundingSet=
PrivateMounts=true
ProtectProc=invisible
RemoveIPC=true
SystemCallArchitectures=native
SystemCallFilter=@system-service
# A system call outside the list fails with EPERM instead of killing the process.
SystemCallErrorNumber=EPERM
# Not MemoryDenyWriteExecute: V8's JIT compiler needs writable executable memory.

[Install]
WantedBy=multi-user.target
`;
}

/**
 * A Caddy site for the public domain: Caddy obtains and renews the certificate by itself (ports 80
 * and 443 must reach this machine and the domain's DNS must point here) and sends the client's
 * address in X-Forwarded-For, which gatewayd reads with server.trust_proxy = true.
 */
export function caddyfile(domain: string, listen: string): string {
  return `# Written by \`gatewayd init\`: the public HTTPS site of gatewayd. Caddy gets and renews the
# certificate for ${domain} by itself: point the domain's DNS at this machine and open ports 80 and 443.
# Install: copy this file to /etc/caddy/Caddyfile (or import it from there), then systemctl reload caddy.
${domain} {
\tencode zstd gzip
\treverse_proxy ${listen}
}
`;
}

/** The site address and upstream of a Caddyfile of that shape (the first site block), if any. */
export function readCaddyfile(text: string): { sites: string[]; upstream?: string } {
  const lines = text
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter(Boolean);
  const open = lines.findIndex((l) => l.endsWith('{') && !l.startsWith('reverse_proxy'));
  if (open === -1) return { sites: [] };
  const sites = lines[open]!.slice(0, -1)
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((s) => s.replace(/^https?:\/\//, '').replace(/:443$/, ''));
  const proxy = lines.slice(open + 1).find((l) => l.startsWith('reverse_proxy '));
  return { sites, upstream: proxy?.split(/\s+/)[1]?.replace(/^https?:\/\//, '') };
}

/** ExecStart's executable and --config, and ReadWritePaths, of a unit of that shape. */
export function readUnit(text: string): { exe?: string; config?: string; writable: string[] } {
  const value = (key: string) =>
    text
      .split('\n')
      .find((l) => l.startsWith(`${key}=`))
      ?.slice(key.length + 1)
      .trim();
  const exec = value('ExecStart')?.split(/\s+/) ?? [];
  const at = exec.indexOf('--config');
  return { exe: exec[0], config: at === -1 ? undefined : exec[at + 1], writable: (value('ReadWritePaths') ?? '').split(/\s+/).filter(Boolean) };
}
