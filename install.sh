#!/usr/bin/env bash
# Installs or upgrades gatewayd on a Debian or Ubuntu server (run as root):
#   - the binary at /usr/local/bin/gatewayd (replaced atomically on upgrade), from a release
#     download checked against its SHA256SUMS, a file you give, or built from this clone
#   - a `gatewayd` system user, /var/lib/gatewayd (0700) for the database
#   - /etc/gatewayd/gatewayd.toml from `gatewayd init` (0640, root:gatewayd), written only once,
#     and with --domain /etc/gatewayd/Caddyfile, the HTTPS site for Caddy
#   - the hardened systemd unit `gatewayd init` writes; `gatewayd migrate`; enable and (re)start
# Running it again upgrades: new binary, migrations, restart; the configuration and data stay.
#
# Usage: sudo ./install.sh [--download URL | --binary FILE [--sums FILE] | --from-source]
#                          [--domain D | --public-url URL] [--listen HOST:PORT] [--smtp-url URL]
#                          [--email-from F] [--tron-api-key K] [--no-start] [--prefix DIR]
#   --download URL    fetch the release executable for this CPU (gatewayd-linux-x64 or
#                     gatewayd-linux-arm64) and SHA256SUMS from URL, a release's download folder,
#                     and install it only if its SHA-256 is the one SHA256SUMS lists
#   --binary FILE     the gatewayd executable to install (default: ./gatewayd beside this script,
#                     else dist/gatewayd); a SHA256SUMS beside it is checked when it lists FILE
#   --sums FILE       with --binary: the SHA256SUMS that must list FILE's SHA-256
#   --from-source     build the executable in this clone first (npm ci, npm run build:binary)
#   --domain D        the public domain (e.g. pay.example.com) of a new configuration:
#                     public_url https://D, trust_proxy on, and a Caddyfile for HTTPS
#   --public-url URL  server.public_url for a new configuration (e.g. https://pay.example.com)
#   --listen H:P      server.listen for a new configuration (default 127.0.0.1:8080)
#   --smtp-url URL    email.smtp_url for a new configuration (registration and reset mail)
#   --email-from F    email.from for a new configuration
#   --tron-api-key K  tron.api_key for a new configuration (a free TronGrid key)
#   --no-start        install and migrate, but do not enable or start the service
#   --prefix DIR      install under DIR instead of / (a throwaway root for tests): no user is
#                     created, files keep the caller's ownership, systemd is left alone unless
#                     DIR/run/systemd/system exists
set -euo pipefail

PREFIX=""
BINARY=""
SUMS=""
DOWNLOAD=""
FROM_SOURCE=0
PUBLIC_URL=""
LISTEN=""
START=1
# Settings passed on to `gatewayd init` for a new configuration.
init_args=()

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
    --sums) SUMS="${2:?--sums needs a file}"; shift 2 ;;
    --download) DOWNLOAD="${2:?--download needs a URL}"; shift 2 ;;
    --from-source) FROM_SOURCE=1; shift ;;
    --public-url) PUBLIC_URL="${2:?--public-url needs a URL}"; shift 2 ;;
    --listen) LISTEN="${2:?--listen needs host:port}"; shift 2 ;;
    --domain | --smtp-url | --email-from | --tron-api-key) init_args+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
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
if [ -n "$PUBLIC_URL" ]; then init_args+=(--public-url "$PUBLIC_URL"); fi
if [ -n "$LISTEN" ]; then init_args+=(--listen "$LISTEN"); fi
sources=0
for given in "$DOWNLOAD" "$BINARY"; do [ -n "$given" ] && sources=$((sources + 1)); done
sources=$((sources + FROM_SOURCE))
[ "$sources" -le 1 ] || die "give one of --download, --binary and --from-source"
[ -z "$SUMS" ] || [ -n "$BINARY" ] || die "--sums goes with --binary"

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
case "$(uname -m)" in
  x86_64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) die "gatewayd is built for x86_64 (linux-x64) and aarch64 (linux-arm64); this machine is $(uname -m)" ;;
esac
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

# The SHA-256 that SUMS lists for the file named NAME, or nothing.
listed_sum() { awk -v name="$2" '$2 == name || $2 == "*" name { print $1; exit }' "$1"; }
# Refuses FILE unless SUMS lists NAME with FILE's SHA-256.
verify() {
  local file="$1" sums="$2" name="$3" want have
  want="$(listed_sum "$sums" "$name")"
  [ -n "$want" ] || die "$sums does not list $name: refusing to install an executable nobody vouched for"
  have="$(sha256sum "$file" | awk '{ print $1 }')"
  [ "$want" = "$have" ] || die "$name: SHA-256 $have is not the $want that $sums lists (a broken or tampered download): nothing was installed"
  say "checksum: $name matches $sums"
}
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -n "$DOWNLOAD" ]; then
  command -v curl >/dev/null 2>&1 || die "--download needs curl (apt-get install curl)"
  name="gatewayd-linux-$ARCH"
  say "downloading $name and SHA256SUMS from ${DOWNLOAD%/}"
  curl -fsSL --proto '=https,http' -o "$work/SHA256SUMS" "${DOWNLOAD%/}/SHA256SUMS" || die "could not download ${DOWNLOAD%/}/SHA256SUMS"
  curl -fsSL --proto '=https,http' -o "$work/$name" "${DOWNLOAD%/}/$name" || die "could not download ${DOWNLOAD%/}/$name"
  verify "$work/$name" "$work/SHA256SUMS" "$name"
  chmod 0755 "$work/$name"
  BINARY="$work/$name"
elif [ "$FROM_SOURCE" -eq 1 ]; then
  [ -f "$here/package.json" ] || die "--from-source runs in a clone of gatewayd (no package.json beside $0)"
  say "building the executable from source in $here (npm ci, npm run build:binary)"
  (cd "$here" && npm ci --no-audit --no-fund && npm run build:binary) || die "the build from source failed"
  BINARY="$here/dist/gatewayd"
else
  if [ -z "$BINARY" ]; then
    if [ -f "$here/gatewayd" ]; then BINARY="$here/gatewayd"; else BINARY="$here/dist/gatewayd"; fi
  fi
  [ -f "$BINARY" ] || die "no gatewayd binary at $BINARY (pass --binary FILE or --download URL, or run npm run build:binary)"
  if [ -n "$SUMS" ]; then
    verify "$BINARY" "$SUMS" "$(basename "$BINARY")"
  elif [ -f "$(dirname "$BINARY")/SHA256SUMS" ] && [ -n "$(listed_sum "$(dirname "$BINARY")/SHA256SUMS" "$(basename "$BINARY")")" ]; then
    verify "$BINARY" "$(dirname "$BINARY")/SHA256SUMS" "$(basename "$BINARY")"
  fi
fi
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
# `gatewayd init` writes the configuration, the unit and, with --domain, the Caddyfile; the unit is
# taken on every run (an upgrade gets the new binary's), the configuration only once.
mkdir -p "$work/init"
"$BIN" init --dir "$work/init" --system "${init_args[@]}" </dev/null >/dev/null || die "gatewayd init refused the settings (see above)"
if [ -f "$CONF" ]; then
  say "configuration: keeping $CONF"
else
  # The database's real path under --prefix (a throwaway root); /var/lib/gatewayd otherwise.
  (umask 077 && sed -e "s|^path = \"/var/lib/gatewayd/gateway.db\"|path = \"$DB\"|" "$work/init/gatewayd.toml" >"$CONF.new")
  mv -f "$CONF.new" "$CONF"
  say "configuration: wrote $CONF with a fresh server.secret"
  if [ -f "$work/init/Caddyfile" ]; then
    install -m 0644 "$work/init/Caddyfile" "$CONF_DIR/Caddyfile"
    say "Caddy site: $CONF_DIR/Caddyfile"
  fi
fi
chmod 0640 "$CONF"
chmod 0750 "$CONF_DIR"
if [ "$owner_exists" -eq 1 ]; then chown root:"$SERVICE_USER" "$CONF_DIR" "$CONF"; fi

# ---- systemd unit ---------------------------------------------------------------------------------
mkdir -p "$UNIT_DIR"
install -m 0644 "$work/init/gatewayd.service" "$UNIT.new"
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
