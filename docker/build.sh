#!/usr/bin/env bash
# Build the server image tableapi-server:<version> (+ :latest). The one entry point:
#
#   1. wheelhouse  .docker-build/wheelhouse/{deps,project}: `pip wheel <repo>[server]` with
#                  $PYTHON (default python3; must be CPython 3.11 like the image). Dependency
#                  wheels are rebuilt only when the project's dependencies change, the project
#                  wheel only when its sources change.
#   2. base image  docker/make-base-image.sh (debootstrap, no registry needed), unless
#                  BASE_IMAGE is set in the environment (e.g. BASE_IMAGE=python:3.11-slim-bookworm).
#   3. image       docker build of docker/Dockerfile with a context holding only the wheelhouse;
#                  skipped when an image built from the very same inputs exists.
#
# Environment: PYTHON, BASE_IMAGE, IMAGE_NAME (default tableapi-server), FORCE=1 (run docker build
# even if the image's inputs are unchanged), FORCE_BASE=1 (rebuild the base image too),
# DOCKER_BUILD_ARGS (extra `docker build` arguments, word-split).
set -euo pipefail

START=$SECONDS
SCRIPT_DIR="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
BUILD_DIR="$REPO_ROOT/.docker-build"
WHEELHOUSE="$BUILD_DIR/wheelhouse"
CONTEXT="$BUILD_DIR/context"
PYTHON="${PYTHON:-python3}"
IMAGE_NAME="${IMAGE_NAME:-tableapi-server}"

log() { printf '[build %4ss] %s\n' "$((SECONDS - START))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
trap 'rc=$?; [ "$rc" = 0 ] || log "FAILED (exit $rc) after $((SECONDS - START))s"' EXIT

command -v docker >/dev/null || die "docker is not installed"
command -v "$PYTHON" >/dev/null || die "no python interpreter '$PYTHON' (set PYTHON)"
"$PYTHON" - <<'EOF' || die "PYTHON=$PYTHON must be CPython 3.11 with pip: the image runs Python 3.11 and the wheelhouse holds cp311 wheels"
import platform, sys
import pip  # noqa: F401
assert platform.python_implementation() == "CPython" and sys.version_info[:2] == (3, 11)
EOF
mkdir -p "$BUILD_DIR"
exec 9>"$BUILD_DIR/build.lock"
flock 9

sha() { sha256sum | cut -c1-16; }

# --- 1. wheelhouse ----------------------------------------------------------------------------
# What the dependency wheels depend on: the declared dependencies (not the rest of pyproject).
DEPS_HASH="$(
    "$PYTHON" - "$REPO_ROOT/pyproject.toml" <<'EOF' | sha
import json, platform, sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print(json.dumps([project.get("dependencies"), project.get("optional-dependencies", {}).get("server"),
                  project.get("requires-python"), platform.machine(), "wheelhouse-v1"]))
EOF
)"

# The project's source files (tracked + untracked, minus .gitignore'd), relative to the repo.
list_sources() {
    local paths=(pyproject.toml README.md LICENSE MANIFEST.in setup.py setup.cfg tableapi server_ext)
    (
        cd "$REPO_ROOT"
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
            git ls-files -z --cached --others --exclude-standard -- "${paths[@]}"
        else
            local p existing=()
            for p in "${paths[@]}"; do [ -e "$p" ] && existing+=("$p"); done
            find "${existing[@]}" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0
        fi | sort -zu | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done
    )
}
SRC_HASH="$(list_sources | (cd "$REPO_ROOT" && xargs -0 sha256sum) | sha)"

build_wheels() {   # $1 = "all" or "project"
    local stage="$BUILD_DIR/src" out="$BUILD_DIR/wheels.tmp"
    rm -rf "$stage" "$out"
    mkdir -p "$stage" "$out"
    # Build from a copy: pip builds in-tree and would litter the repo with build/ and egg-info.
    list_sources | (cd "$REPO_ROOT" && xargs -0 cp --parents -t "$stage")
    # pyproject.toml names README.md as the readme; tolerate its absence.
    [ -f "$stage/README.md" ] || echo "flink-tableapi-spark" >"$stage/README.md"
    if [ "$1" = all ]; then
        log "pip wheel $REPO_ROOT[server] (project + all dependencies)"
        "$PYTHON" -m pip wheel --wheel-dir "$out" "$stage[server]" >"$BUILD_DIR/pip-wheel.log" 2>&1 \
            || { tail -n 40 "$BUILD_DIR/pip-wheel.log" >&2; die "pip wheel failed (log: $BUILD_DIR/pip-wheel.log)"; }
    else
        log "pip wheel --no-deps $REPO_ROOT (project only: its sources changed)"
        "$PYTHON" -m pip wheel --no-deps --wheel-dir "$out" "$stage" >"$BUILD_DIR/pip-wheel.log" 2>&1 \
            || { tail -n 40 "$BUILD_DIR/pip-wheel.log" >&2; die "pip wheel failed (log: $BUILD_DIR/pip-wheel.log)"; }
    fi
    rm -rf "$stage"
    if [ "$1" = all ]; then
        rm -rf "$WHEELHOUSE"
        mkdir -p "$WHEELHOUSE/deps" "$WHEELHOUSE/project"
        mv "$out"/flink_tableapi_spark-*.whl "$WHEELHOUSE/project/"
        mv "$out"/*.whl "$WHEELHOUSE/deps/"
        echo "$DEPS_HASH" >"$WHEELHOUSE/deps.hash"
    else
        rm -f "$WHEELHOUSE"/project/*.whl
        mv "$out"/flink_tableapi_spark-*.whl "$WHEELHOUSE/project/"
    fi
    rm -rf "$out"
    echo "$SRC_HASH" >"$WHEELHOUSE/project.hash"
}

# The project wheel carries server_ext's JVM operator jar (setup.py runs javac against the
# jars of the pyspark wheel in deps/). Required when a JDK is here; TABLEAPI_REQUIRE_JAR=0
# builds an image without it (its server then runs the Python operators only).
if [ -z "${TABLEAPI_REQUIRE_JAR:-}" ]; then
    if command -v javac >/dev/null || [ -x "${JAVA_HOME:-/nonexistent}/bin/javac" ]; then
        export TABLEAPI_REQUIRE_JAR=1
    else
        export TABLEAPI_REQUIRE_JAR=0
        log "WARNING: no javac: the image gets no JVM operators (install openjdk-17-jdk-headless)"
    fi
fi
spark_jars() {   # pyspark/jars of the pyspark wheel in deps/, extracted once per wheel
    local whl dir="$BUILD_DIR/spark-jars"
    whl="$(ls "$WHEELHOUSE"/deps/pyspark-*.whl | head -n 1)"
    if [ "$(cat "$dir/.from" 2>/dev/null)" != "$(basename "$whl")" ]; then
        rm -rf "$dir" && mkdir -p "$dir"
        "$PYTHON" - "$whl" "$dir" <<'EOF2'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("pyspark/jars/")])
EOF2
        basename "$whl" >"$dir/.from"
    fi
    echo "$dir/pyspark/jars"
}

T0=$SECONDS
if [ "$(cat "$WHEELHOUSE/deps.hash" 2>/dev/null)" != "$DEPS_HASH" ] \
        || ! ls "$WHEELHOUSE"/deps/pyspark-*.whl >/dev/null 2>&1; then
    # The dependency wheels first (pyspark's jars are needed to compile the operator jar),
    # then the project wheel again, with the jar.
    TABLEAPI_REQUIRE_JAR=0 build_wheels all
    TABLEAPI_SPARK_JARS="$(spark_jars)" build_wheels project
elif [ "$(cat "$WHEELHOUSE/project.hash" 2>/dev/null)" != "$SRC_HASH" ] \
        || ! ls "$WHEELHOUSE"/project/*.whl >/dev/null 2>&1; then
    TABLEAPI_SPARK_JARS="$(spark_jars)" build_wheels project
else
    log "wheelhouse is up to date (deps $DEPS_HASH, sources $SRC_HASH)"
fi
PROJECT_WHEEL="$(ls "$WHEELHOUSE"/project/flink_tableapi_spark-*.whl)"
VERSION="$(basename "$PROJECT_WHEEL" | cut -d- -f2)"
log "wheelhouse ready in $((SECONDS - T0))s: $(ls "$WHEELHOUSE/deps" | wc -l) dependency wheels, $(du -sh "$WHEELHOUSE" | cut -f1); project $VERSION"

# --- 2. base image ----------------------------------------------------------------------------
T0=$SECONDS
if [ -n "${BASE_IMAGE:-}" ]; then
    log "base image from the environment: $BASE_IMAGE"
else
    BASE_IMAGE="$(FORCE="${FORCE_BASE:-0}" bash "$SCRIPT_DIR/make-base-image.sh" | tail -n 1)"
    [ -n "$BASE_IMAGE" ] || die "make-base-image.sh printed no image"
    log "base image $BASE_IMAGE ready in $((SECONDS - T0))s"
fi
# An image ID (not a tag) makes the inputs hash change whenever the base image is rebuilt.
BASE_ID="$(docker image inspect -f '{{.Id}}' "$BASE_IMAGE" 2>/dev/null || echo "$BASE_IMAGE")"

# --- 3. server image --------------------------------------------------------------------------
T0=$SECONDS
INPUTS="$( { echo "$BASE_ID $DEPS_HASH $SRC_HASH $VERSION ${DOCKER_BUILD_ARGS:-}"
             cat "$SCRIPT_DIR/Dockerfile"
             (cd "$WHEELHOUSE" && ls deps project); } | sha)"
TAG="$IMAGE_NAME:$VERSION"
# The build context: the wheelhouse only (hard links, no copy), never the repo with its .venv.
# It stays after the build for `docker compose build` (compose.yaml); the Dockerfile copy is for
# a plain `docker build .docker-build/context` by hand.
rm -rf "$CONTEXT"
mkdir -p "$CONTEXT"
cp -al "$WHEELHOUSE" "$CONTEXT/wheelhouse" 2>/dev/null || cp -a "$WHEELHOUSE" "$CONTEXT/wheelhouse"
rm -f "$CONTEXT"/wheelhouse/*.hash
cp "$SCRIPT_DIR/Dockerfile" "$CONTEXT/Dockerfile"
if [ "${FORCE:-0}" != 1 ] && [ "$(docker image inspect -f '{{index .Config.Labels "tableapi.build-inputs"}}' "$TAG" 2>/dev/null)" = "$INPUTS" ]; then
    docker tag "$TAG" "$IMAGE_NAME:latest"
    log "$TAG is up to date (inputs $INPUTS): skipped docker build"
else
    OLD_ID="$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)"
    log "docker build $TAG from $BASE_IMAGE"
    # shellcheck disable=SC2086
    docker build \
        --build-arg "BASE_IMAGE=$BASE_IMAGE" \
        --label "tableapi.build-inputs=$INPUTS" \
        -t "$TAG" -t "$IMAGE_NAME:latest" \
        ${DOCKER_BUILD_ARGS:-} \
        -f "$CONTEXT/Dockerfile" "$CONTEXT" >&2
    # The context stays (hard links: no extra disk) for `docker compose build` (compose.yaml).
    log "docker build done in $((SECONDS - T0))s"
    # Drop the image this one replaces if nothing uses it any more (no tag left; docker refuses
    # while a container uses it). Shared layers and the build cache stay.
    if [ -n "$OLD_ID" ] && [ "$OLD_ID" != "$(docker image inspect -f '{{.Id}}' "$TAG")" ] \
            && [ "$(docker image inspect -f '{{len .RepoTags}}' "$OLD_ID" 2>/dev/null)" = 0 ]; then
        docker rmi "$OLD_ID" >/dev/null 2>&1 && log "removed the previous image ${OLD_ID:7:12}" || true
    fi
fi
SIZE="$(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%.0f MB", $1/1e6}')"
log "image $TAG (= $IMAGE_NAME:latest), $SIZE; total $((SECONDS - START))s"
echo "$TAG"
