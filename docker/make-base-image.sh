#!/usr/bin/env bash
# Make the base image `tableapi-base:<hash>` (and tag it `tableapi-base:latest`) without any
# image registry: debootstrap a minimal Debian bookworm rootfs with Python 3.11 and a Java 17
# JRE, then `docker import` it.
#
# Idempotent: <hash> covers this script and the package list, so a second run finds the image
# and does nothing. Prints the image reference (tableapi-base:<hash>) as its last stdout line.
#
# Needs root (debootstrap, chroot, mount), docker, and a reachable Debian mirror.
# Environment:
#   DEBIAN_MIRROR           mirror for bookworm (default: the host's apt config, else deb.debian.org)
#   DEBIAN_SECURITY_MIRROR  mirror for bookworm-security (default: host's apt config, else
#                           deb.debian.org/debian-security; set to "none" to skip)
#   BASE_BUILD_DIR          work dir (default: <repo>/.docker-build)
#   FORCE=1                 rebuild even if the image exists
set -euo pipefail

SUITE=bookworm
# Installed by debootstrap (minbase) ...
BOOTSTRAP_PACKAGES="python3 python3-venv python3-pip procps ca-certificates"
# ... then inside the chroot with apt-get (its maintainer scripts run java, so they need /proc).
CHROOT_PACKAGES="openjdk-17-jre-headless"

SCRIPT_PATH="$(readlink -f "${BASH_SOURCE[0]}")"
REPO_ROOT="$(cd "$(dirname "$SCRIPT_PATH")/.." && pwd)"
BUILD_DIR="${BASE_BUILD_DIR:-$REPO_ROOT/.docker-build}"
ROOTFS="$BUILD_DIR/base-rootfs"
START=$SECONDS

log() { printf '[make-base-image %4ss] %s\n' "$((SECONDS - START))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

HASH="$( { cat "$SCRIPT_PATH"; echo "$SUITE|$BOOTSTRAP_PACKAGES|$CHROOT_PACKAGES"; } \
        | sha256sum | cut -c1-12)"
IMAGE="tableapi-base:$HASH"

command -v docker >/dev/null || die "docker is not installed"
if [ "${FORCE:-0}" != 1 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    docker tag "$IMAGE" tableapi-base:latest
    log "$IMAGE already exists: nothing to do"
    echo "$IMAGE"
    exit 0
fi

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, mount)"
mkdir -p "$BUILD_DIR"

# One build at a time (two concurrent CI jobs would share the rootfs dir).
exec 9>"$BUILD_DIR/base-image.lock"
flock 9
if [ "${FORCE:-0}" != 1 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    docker tag "$IMAGE" tableapi-base:latest
    log "$IMAGE was built by a concurrent run"
    echo "$IMAGE"
    exit 0
fi

# --- mirrors: reuse the host's apt configuration when it lists the suite ---------------------
# Prints the first URI that serves suite $1, from one-line and deb822 apt sources.
host_mirror() {
    local suite="$1" f
    {
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -r "$f" ] || continue
            awk -v s="$suite" '
                $1 == "deb" {
                    i = 2
                    if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                    if ($(i + 1) == s) { print $i; exit }
                }' "$f"
        done
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -r "$f" ] || continue
            awk -v s="$suite" '
                BEGIN { RS = ""; FS = "\n" }
                {
                    uri = ""; ok = 0; deb = 0
                    for (i = 1; i <= NF; i++) {
                        if ($i ~ /^Types:/ && $i ~ /[ \t]deb([ \t]|$)/) deb = 1
                        if ($i ~ /^URIs:/) { split($i, a, /[ \t]+/); uri = a[2] }
                        if ($i ~ /^Suites:/) {
                            n = split($i, a, /[ \t]+/)
                            for (j = 2; j <= n; j++) if (a[j] == s) ok = 1
                        }
                    }
                    if (deb && ok && uri != "") { print uri; exit }
                }' "$f"
        done
    } | head -n 1
}

MIRROR="${DEBIAN_MIRROR:-$(host_mirror "$SUITE")}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-$(host_mirror "$SUITE-security")}"
SECURITY_MIRROR="${SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
log "building $IMAGE from $MIRROR ($SUITE), security: $SECURITY_MIRROR"

# --- tools ------------------------------------------------------------------------------------
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
if ! command -v debootstrap >/dev/null || [ ! -r "$KEYRING" ]; then
    log "installing debootstrap and debian-archive-keyring with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends debootstrap debian-archive-keyring >/dev/null
fi

# --- rootfs -----------------------------------------------------------------------------------
cleanup() {
    local rc=$?
    for m in "$ROOTFS/proc" "$ROOTFS/dev/pts" "$ROOTFS/dev" "$ROOTFS/sys"; do
        if mountpoint -q "$m" 2>/dev/null; then umount -l "$m" || true; fi
    done
    # Never delete through a mount point that is still attached (e.g. a bind-mounted /dev).
    if [ -d "$ROOTFS" ]; then
        if grep -q " $ROOTFS/" /proc/mounts; then
            log "WARNING: mounts remain under $ROOTFS, not deleting it"
        else
            rm -rf "$ROOTFS"
        fi
    fi
    [ "$rc" = 0 ] || log "FAILED (exit $rc)"
}
trap cleanup EXIT

if [ -d "$ROOTFS" ]; then
    grep -q " $ROOTFS/" /proc/mounts && die "stale mounts under $ROOTFS; unmount them first"
    log "removing a leftover $ROOTFS"
    rm -rf "$ROOTFS"
fi
mkdir -p "$ROOTFS"

log "debootstrap --variant=minbase $SUITE (+ ${BOOTSTRAP_PACKAGES// /,})"
debootstrap --variant=minbase --keyring="$KEYRING" \
    --include="${BOOTSTRAP_PACKAGES// /,}" \
    "$SUITE" "$ROOTFS" "$MIRROR" >"$BUILD_DIR/debootstrap.log" 2>&1 \
    || { tail -n 30 "$BUILD_DIR/debootstrap.log" >&2; die "debootstrap failed (log: $BUILD_DIR/debootstrap.log)"; }
log "debootstrap done"

{
    echo "deb $MIRROR $SUITE main"
    echo "deb $MIRROR $SUITE-updates main"
    [ "$SECURITY_MIRROR" = none ] || echo "deb $SECURITY_MIRROR $SUITE-security main"
} >"$ROOTFS/etc/apt/sources.list"

# No daemons may start inside the chroot; keep the image small.
printf '#!/bin/sh\nexit 101\n' >"$ROOTFS/usr/sbin/policy-rc.d"
chmod +x "$ROOTFS/usr/sbin/policy-rc.d"
cat >"$ROOTFS/etc/apt/apt.conf.d/90tableapi" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
EOF
cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/90tableapi-nodoc" <<'EOF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
EOF
# openjdk's update-alternatives wants the man1 dir to exist even though man pages are excluded.
mkdir -p "$ROOTFS/usr/share/man/man1"
cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf"

mount -t proc proc "$ROOTFS/proc"
in_root() { chroot "$ROOTFS" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
                DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"; }
log "apt-get update, upgrade (security fixes) and install $CHROOT_PACKAGES"
{
    in_root apt-get update -q
    in_root apt-get -y -q upgrade
    # shellcheck disable=SC2086
    in_root apt-get install -y -q $CHROOT_PACKAGES
} >"$BUILD_DIR/chroot-apt.log" 2>&1 \
    || { tail -n 30 "$BUILD_DIR/chroot-apt.log" >&2; die "apt-get in the chroot failed (log: $BUILD_DIR/chroot-apt.log)"; }
in_root java -version 2>&1 | head -n 1 >&2
in_root python3 -c 'import sys, venv, ensurepip; assert sys.version_info[:2] == (3, 11), sys.version; print("python", sys.version.split()[0])' >&2
umount "$ROOTFS/proc"

log "cleaning the rootfs"
in_root apt-get clean
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/cache/debconf/*-old \
       "$ROOTFS"/var/log/* "$ROOTFS"/tmp/* "$ROOTFS"/var/tmp/* "$ROOTFS"/root/.cache \
       "$ROOTFS"/usr/sbin/policy-rc.d
# Docs from the debootstrap stage (the dpkg path-excludes above only cover later installs).
find "$ROOTFS/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
find "$ROOTFS/usr/share/doc" -mindepth 1 -type d -empty -delete
rm -rf "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/*
find "$ROOTFS/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
mkdir -p "$ROOTFS/usr/share/man/man1"
find "$ROOTFS/usr/lib/python3" "$ROOTFS/usr/lib/python3.11" -name __pycache__ -prune -exec rm -rf {} + 2>/dev/null || true
: >"$ROOTFS/etc/resolv.conf"   # docker bind-mounts its own
echo tableapi-base >"$ROOTFS/etc/hostname"

# Resolve the java symlink chain inside the chroot (its links are absolute).
JAVA_HOME_DIR="$(chroot "$ROOTFS" sh -c 'dirname "$(dirname "$(readlink -f /usr/bin/java)")"')"
log "JAVA_HOME in the image: $JAVA_HOME_DIR"

log "docker import -> $IMAGE"
tar --numeric-owner --xattrs -C "$ROOTFS" -c . | docker import \
    --change "ENV LANG=C.UTF-8" \
    --change "ENV JAVA_HOME=$JAVA_HOME_DIR" \
    --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change 'CMD ["/bin/bash"]' \
    --message "debootstrap $SUITE minbase + $BOOTSTRAP_PACKAGES $CHROOT_PACKAGES" \
    - "$IMAGE" >/dev/null
docker tag "$IMAGE" tableapi-base:latest
log "built $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
echo "$IMAGE"
