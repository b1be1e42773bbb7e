#!/usr/bin/env bash
# Installs or upgrades gatewayd on a Debian or Ubuntu server (run as root):
#   - the binary at /usr/local/bin/gatewayd (replaced atomically on upgrade)
#   - a `gatewayd` system user, /var/lib/gatewayd (0700) for the database
#   - /etc/gatewayd/gatewayd.toml from `gatewayd init` (0640, root:gatewayd), written only once
#   - a hardened systemd unit; `gatewayd migrate`; enable and (re)start the service
# Running it again upgrades: new binary, migrations, restart; the configuration and data stay.
#
# Usage: sudo ./install.sh [--binary FILE] [--public-url URL] [--listen HOST:PORT] [--no-start]
#                          [--prefix DIR]
#   --binary FILE     the gatewayd executable to install (default: ./gatewayd beside this script,
#                     else dist/gatewayd)
#   --public-url URL  server.public_url for a new configuration (e.g. https://pay.example.com)
#   --listen H:P      server.listen for a new configuration (default 127.0.0.1:8080)
#   --no-start        install and migrate, but do not enable or start the service
#   --prefix DIR      install under DIR instead of / (a throwaway root for tests): no user is
#                     created, files keep the caller's ownership, systemd is left alone unless
#                     DIR/run/systemd/system exists
set -euo pipefail

PREFIX=""
BINARY=""
PUBLIC_URL=""
LISTEN=""
START=1

die() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}
say() {
  printf '==> %s\n' "$*"
}

while [ $# -gt 0 ]; do
  case "$1" in
    --binary) BINARY="${2:?--binary needs a file}"; shift 2 ;;
    --public-url) PUBLIC_URL="${2:?--public-url needs a URL}"; shift 2 ;;
    --listen) LISTEN="${2:?--listen needs host:port}"; shift 2 ;;
    --prefix) PREFIX="${2:?--prefix needs a folder}"; shift 2 ;;
    --no-start) START=0; shift ;;
    -h|--help) awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

case "$PUBLIC_URL" in
  "" | http://* | https://*) ;;
  *) die "--public-url must start with https:// (or http://)" ;;
esac
case "$PUBLIC_URL$LISTEN" in
  *[\|\&\"\\\ ]*) die "--public-url and --listen may not contain | & \" \\ or spaces" ;;
esac

if [ -n "$PREFIX" ]; then
  mkdir -p "$PREFIX"
  PREFIX="$(cd "$PREFIX" && pwd)"
fi

BIN_DIR="$PREFIX/usr/local/bin"
BIN="$BIN_DIR/gatewayd"
CONF_DIR="$PREFIX/etc/gatewayd"
CONF="$CONF_DIR/gatewayd.toml"
DATA_DIR="$PREFIX/var/lib/gatewayd"
DB="$DATA_DIR/gateway.db"
UNIT_DIR="$PREFIX/etc/systemd/system"
UNIT="$UNIT_DIR/gatewayd.service"
SERVICE_USER="gatewayd"

# ---- checks -----------------------------------------------------------------------------------
if [ -z "$PREFIX" ] && [ "$(id -u)" -ne 0 ]; then
  die "run as root (sudo ./install.sh), or pass --prefix DIR for a trial install"
fi
[ "$(uname -s)" = "Linux" ] || die "gatewayd runs on Linux only"
[ "$(uname -m)" = "x86_64" ] || die "this build is for x86_64 (linux-x64); this machine is $(uname -m)"
glibc="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')" || glibc=""
if [ -n "$glibc" ]; then
  major="${glibc%%.*}"
  minor="${glibc#*.}"
  minor="${minor%%.*}"
  if [ "$major" -lt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -lt 34 ]; }; then
    die "glibc $glibc is too old: the binary needs glibc >= 2.34 (Debian 12+, Ubuntu 22.04+)"
  fi
else
  die "no glibc found (musl/Alpine is not supported): the binary needs glibc >= 2.34"
fi

if [ -z "$BINARY" ]; then
  here="$(cd "$(dirname "$0")" && pwd)"
  if [ -f "$here/gatewayd" ]; then BINARY="$here/gatewayd"; else BINARY="$here/dist/gatewayd"; fi
fi
[ -f "$BINARY" ] || die "no gatewayd binary at $BINARY (pass --binary FILE, or run npm run build:binary)"
new_version="$("$BINARY" version)" || die "$BINARY does not run"

systemd=0
if [ -d "$PREFIX/run/systemd/system" ] && command -v systemctl >/dev/null 2>&1; then systemd=1; fi

owner_exists=0
if [ -z "$PREFIX" ]; then
  if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
    say "creating the system user $SERVICE_USER"
    useradd --system --user-group --home-dir /var/lib/gatewayd --no-create-home \
      --shell /usr/sbin/nologin --comment "gatewayd service" "$SERVICE_USER"
  fi
  owner_exists=1
else
  say "prefix install under $PREFIX: no system user, files keep your ownership"
fi

# ---- binary -----------------------------------------------------------------------------------
was_active=0
if [ "$systemd" -eq 1 ] && systemctl is-active --quiet gatewayd 2>/dev/null; then was_active=1; fi

mkdir -p "$BIN_DIR"
old_version=""
if [ -x "$BIN" ]; then old_version="$("$BIN" version 2>/dev/null || true)"; fi
# Copy then rename: a running process keeps the old file; nothing ever sees half a binary.
install -m 0755 "$BINARY" "$BIN.new"
mv -f "$BIN.new" "$BIN"
if [ -n "$old_version" ]; then
  say "binary: $old_version -> $new_version ($BIN)"
else
  say "binary: $new_version installed at $BIN"
fi

# ---- folders and configuration ------------------------------------------------------------------
mkdir -p "$DATA_DIR"
chmod 0700 "$DATA_DIR"
mkdir -p "$CONF_DIR"
if [ -f "$CONF" ]; then
  say "configuration: keeping $CONF"
else
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$BIN" init --dir "$tmp" >/dev/null
  sed_args=(-e "s|^path = \"data/gateway.db\"|path = \"$DB\"|")
  if [ -n "$PUBLIC_URL" ]; then sed_args+=(-e "s|^#* *public_url = .*|public_url = \"$PUBLIC_URL\"|"); fi
  if [ -n "$LISTEN" ]; then sed_args+=(-e "0,/^listen = .*/s||listen = \"$LISTEN\"|"); fi
  (umask 077 && sed "${sed_args[@]}" "$tmp/gatewayd.toml" >"$CONF.new")
  mv -f "$CONF.new" "$CONF"
  rm -rf "$tmp"
  trap - EXIT
  say "configuration: wrote $CONF with a fresh server.secret"
fi
chmod 0640 "$CONF"
chmod 0750 "$CONF_DIR"
if [ "$owner_exists" -eq 1 ]; then chown root:"$SERVICE_USER" "$CONF_DIR" "$CONF"; fi

# ---- systemd unit ---------------------------------------------------------------------------------
mkdir -p "$UNIT_DIR"
cat >"$UNIT.new" <<EOF
# Installed by gatewayd's install.sh; rewritten on upgrade. Local changes belong in a drop-in:
# systemctl edit gatewayd
[Unit]
Description=gatewayd: self-hosted USDT (TRC20) invoicing gateway
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
User=$SERVICE_USER
Group=$SERVICE_USER
ExecStart=/usr/local/bin/gatewayd serve --config /etc/gatewayd/gatewayd.toml
Restart=on-failure
RestartSec=5s
TimeoutStopSec=30s
UMask=0077
# The packaged binary unpacks its native addons once into \$XDG_CACHE_HOME/gatewayd.
CacheDirectory=gatewayd
Environment=XDG_CACHE_HOME=/var/cache
LimitNOFILE=65536

# Hardening: read-only system, writable data folder only, no privileges to gain.
NoNewPrivileges=true
ProtectSystem=strict
ReadWritePaths=/var/lib/gatewayd
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
EOF
mv -f "$UNIT.new" "$UNIT"
chmod 0644 "$UNIT"
say "systemd unit: $UNIT"

# ---- database -------------------------------------------------------------------------------------
if [ "$was_active" -eq 1 ]; then
  say "stopping gatewayd for the upgrade"
  systemctl stop gatewayd
fi
"$BIN" migrate --config "$CONF"
if [ "$owner_exists" -eq 1 ]; then chown -R "$SERVICE_USER:$SERVICE_USER" "$DATA_DIR"; fi
chmod 0700 "$DATA_DIR"
if [ -f "$DB" ]; then chmod 0600 "$DB"; fi

# ---- service ------------------------------------------------------------------------------------
if [ "$systemd" -eq 0 ]; then
  say "systemd not found: skipping systemctl; start it yourself with"
  printf '      %s serve --config %s\n' "$BIN" "$CONF"
elif [ "$START" -eq 0 ]; then
  systemctl daemon-reload
  if [ "$was_active" -eq 1 ]; then
    systemctl start gatewayd
    say "--no-start: gatewayd was running before the upgrade, so it was started again"
  else
    say "--no-start: not enabling or starting the service"
  fi
else
  systemctl daemon-reload
  systemctl enable gatewayd >/dev/null 2>&1 || systemctl enable gatewayd
  systemctl restart gatewayd
  say "gatewayd is enabled and (re)started: systemctl status gatewayd; journalctl -u gatewayd -f"
fi

if [ -n "$old_version" ]; then
  say "upgrade done: $new_version"
  exit 0
fi
# Next steps, numbered, naming only what is still to do.
step=0
next_step() { step=$((step + 1)); printf '  %d. %s\n' "$step" "$1"; shift; for line in "$@"; do printf '     %s\n' "$line"; done; }
printf '\n%s is installed. Next steps:\n' "$new_version"
if [ -z "$PUBLIC_URL" ]; then
  next_step "Set server.public_url in $CONF to your HTTPS address (e.g. https://pay.example.com)."
fi
next_step "Set tron.api_key in $CONF (a free TronGrid key: without one the TRON API rate-limits the watcher)," \
  "and email.smtp_url if you want registration and password-reset mail."
next_step "Put a reverse proxy with HTTPS in front of ${LISTEN:-127.0.0.1:8080} (Caddy and nginx examples in" \
  "docs/operations.md), and set server.trust_proxy = true once it is the only way in."
next_step "Restart after editing: systemctl restart gatewayd"
next_step "Check everything: gatewayd doctor --config $CONF"
next_step "First account: register at your public URL (needs SMTP), or" \
  "gatewayd merchant create --email you@example.com --config $CONF"
next_step "Back up regularly: gatewayd backup /root/gatewayd-\$(date +%F).db --config $CONF"
