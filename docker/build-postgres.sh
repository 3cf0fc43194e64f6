#!/usr/bin/env bash
# Build the PostgreSQL image tableapi-postgres:15 (+ :latest) that the tests start with
# testcontainers (tests/postgres.py) when a Docker engine runs:
#
#   base image  docker/make-base-image.sh (debootstrap, no registry needed), unless BASE_IMAGE
#               is set (e.g. BASE_IMAGE=debian:bookworm-slim for users who can pull)
#   image       docker build of docker/postgres.Dockerfile: Debian's postgresql-15 package
#               (from the Debian mirror, like the base image); skipped when an image built
#               from the same inputs exists
#
# Environment: BASE_IMAGE, IMAGE_NAME (default tableapi-postgres), FORCE=1, DOCKER_BUILD_ARGS.
# Prints the image reference as its last stdout line.
set -euo pipefail
START=$SECONDS
SCRIPT_DIR="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
CONTEXT="$REPO_ROOT/.docker-build/postgres-context"
IMAGE_NAME="${IMAGE_NAME:-tableapi-postgres}"
TAG="$IMAGE_NAME:15"

log() { printf '[build-postgres %4ss] %s\n' "$((SECONDS - START))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
command -v docker >/dev/null || die "docker is not installed"

if [ -n "${BASE_IMAGE:-}" ]; then
    log "base image from the environment: $BASE_IMAGE"
else
    BASE_IMAGE="$(bash "$SCRIPT_DIR/make-base-image.sh" | tail -n 1)"
    [ -n "$BASE_IMAGE" ] || die "make-base-image.sh printed no image"
fi
BASE_ID="$(docker image inspect -f '{{.Id}}' "$BASE_IMAGE" 2>/dev/null || echo "$BASE_IMAGE")"
INPUTS="$( { echo "$BASE_ID ${DOCKER_BUILD_ARGS:-}"; cat "$SCRIPT_DIR/postgres.Dockerfile" \
             "$SCRIPT_DIR/postgres-entrypoint.sh"; } | sha256sum | cut -c1-16)"
if [ "${FORCE:-0}" != 1 ] && [ "$(docker image inspect -f '{{index .Config.Labels "tableapi.build-inputs"}}' "$TAG" 2>/dev/null)" = "$INPUTS" ]; then
    docker tag "$TAG" "$IMAGE_NAME:latest"
    log "$TAG is up to date (inputs $INPUTS): skipped docker build"
    echo "$TAG"
    exit 0
fi
rm -rf "$CONTEXT"
mkdir -p "$CONTEXT"
cp "$SCRIPT_DIR/postgres.Dockerfile" "$SCRIPT_DIR/postgres-entrypoint.sh" "$CONTEXT/"
log "docker build $TAG from $BASE_IMAGE"
# shellcheck disable=SC2086
docker build --build-arg "BASE_IMAGE=$BASE_IMAGE" --label "tableapi.build-inputs=$INPUTS" \
    -t "$TAG" -t "$IMAGE_NAME:latest" ${DOCKER_BUILD_ARGS:-} \
    -f "$CONTEXT/postgres.Dockerfile" "$CONTEXT" >&2
log "image $TAG ready ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}'))"
echo "$TAG"
