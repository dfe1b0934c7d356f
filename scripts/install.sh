#!/usr/bin/env bash
# Installs Sluice as a service: the binary, a systemd unit running
# `sluice serve`, a configuration file and a data directory; or removes
# them again.
#
#   ./install.sh [--root DIR] [--binary PATH] [--no-start]
#   ./install.sh --uninstall [--purge] [--root DIR]
#
# Run it from the release tarball (the binary beside it) or give the
# binary with --binary. It installs
#
#   /usr/local/bin/sluice                 the binary
#   /etc/sluice/sluice.conf               the configuration (kept if present)
#   /etc/systemd/system/sluice.service    the unit
#   /var/lib/sluice                       the data directory (owner sluice)
#
# and, into the real root, creates the system user sluice, reloads systemd
# and enables and starts the service (unless --no-start). With --root DIR
# everything goes under DIR instead (a scratch root, a package's staging
# directory) and nothing is started.
#
# --uninstall stops and disables the service and removes the binary and
# the unit; the configuration and the data directory (the jobs, their
# state, the tokens) stay unless --purge is given. The user stays.
set -euo pipefail

root=""
binary=""
start=1
uninstall=0
purge=0
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --root=*) root=${1#--root=}; shift ;;
    --binary) binary=${2:?--binary needs a path}; shift 2 ;;
    --binary=*) binary=${1#--binary=}; shift ;;
    --no-start) start=0; shift ;;
    --uninstall) uninstall=1; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$root" ]; then
  mkdir -p "$root"
  root=$(cd "$root" && pwd)
  start=0
fi

bindir=/usr/local/bin
confdir=/etc/sluice
unitdir=/etc/systemd/system
datadir=/var/lib/sluice
here=$(cd "$(dirname "$0")" && pwd)

# systemd is driven only for the real root, where it runs.
have_systemd=0
if [ -z "$root" ] && command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  have_systemd=1
fi

if [ "$uninstall" = 1 ]; then
  if [ "$have_systemd" = 1 ]; then
    systemctl disable --now sluice.service 2>/dev/null || true
  fi
  rm -f "$root$bindir/sluice" "$root$unitdir/sluice.service"
  if [ "$have_systemd" = 1 ]; then
    systemctl daemon-reload
  fi
  if [ "$purge" = 1 ]; then
    rm -rf "$root$confdir" "$root$datadir"
    echo "sluice removed, with its configuration and data ($datadir)"
  else
    echo "sluice removed; kept $confdir and $datadir (remove them with --uninstall --purge)"
  fi
  exit 0
fi

if [ -z "$binary" ]; then
  for b in "$here/sluice" "$here/../dist/sluice"; do
    if [ -x "$b" ]; then binary=$b; break; fi
  done
fi
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
  echo "install.sh: no sluice binary beside this script; build one (scripts/release.sh) or give --binary PATH" >&2
  exit 1
fi
for f in sluice.service sluice.conf; do
  if [ ! -f "$here/$f" ]; then
    echo "install.sh: $f is missing beside this script" >&2
    exit 1
  fi
done
version=$("$binary" version 2>/dev/null || true)
if [ -z "$version" ]; then
  echo "install.sh: $binary does not run on this machine" >&2
  exit 1
fi

subst() {
  sed -e "s|@BINDIR@|$bindir|g" -e "s|@CONFDIR@|$confdir|g" -e "s|@DATADIR@|$datadir|g" "$1"
}

if [ -z "$root" ] && ! id sluice >/dev/null 2>&1; then
  useradd --system --home-dir "$datadir" --no-create-home --shell /usr/sbin/nologin sluice
fi

install -d -m 0755 "$root$bindir" "$root$confdir" "$root$unitdir"
install -d -m 0750 "$root$datadir"
# The binary is replaced atomically: a running service keeps its copy.
install -m 0755 "$binary" "$root$bindir/.sluice.new"
mv -f "$root$bindir/.sluice.new" "$root$bindir/sluice"
subst "$here/sluice.service" >"$root$unitdir/sluice.service"
chmod 0644 "$root$unitdir/sluice.service"
if [ -e "$root$confdir/sluice.conf" ]; then
  echo "kept the configuration $confdir/sluice.conf"
else
  subst "$here/sluice.conf" >"$root$confdir/sluice.conf"
  chmod 0640 "$root$confdir/sluice.conf"
fi
if [ -z "$root" ]; then
  chown sluice:sluice "$datadir"
  chgrp sluice "$confdir/sluice.conf"
fi
echo "installed $version: $bindir/sluice, $confdir/sluice.conf, $unitdir/sluice.service, $datadir${root:+ (under $root)}"

if [ "$have_systemd" = 1 ]; then
  systemctl daemon-reload
  if [ "$start" = 1 ]; then
    systemctl enable sluice.service
    systemctl restart sluice.service
    echo "sluice.service started; create a token: sudo -u sluice $bindir/sluice token create --data-dir $datadir --name admin"
  fi
elif [ -z "$root" ]; then
  echo "no systemd here: run '$bindir/sluice serve --config $confdir/sluice.conf' as user sluice"
fi
