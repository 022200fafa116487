#!/usr/bin/env bash
# The hostile probe of issue 47, repeatable: rightsize tried as a hostile user would, against
# its own simulators on 127.0.0.1. Full and read-only disks during a run, signals in every
# state, absurd flag values, broken configs, datasets and traces, broken run folders and
# imports, misbehaving servers, killed workers and controllers, a closed dashboard terminal,
# runs in which every request fails, and secrets handed to `k8s render`. docs/limits.md,
# "Probing it yourself", says what each group holds the tool to.
#
#   bash benches/hostile_probe.sh [REGEX]     # REGEX: only the cases whose group or name match
#   RIGHTSIZE=path/to/rightsize bash benches/hostile_probe.sh   # a binary instead of building
#   CI=true bash benches/hostile_probe.sh     # a skip the machine could have run is a FAIL
#
# One line per case (PASS, FAIL or SKIP, its group, what it tries, why it failed or skipped),
# then `held N of M, K skipped`; the exit code is 1 when a case failed. Cases that mount a
# small tmpfs or run as another user need root and skip, saying so, without it (root ignores
# a folder's 555, so the read-only folder runs the binary as `nobody`); a case skipped for a
# missing tool (tmux, python3, setpriv) fails under CI=true. Needs bash 5, jq, coreutils.
# Every process it starts is killed when it ends, and every file it made is removed.
#
# shellcheck disable=SC2317  # the cases are called through the table at the end
# shellcheck disable=SC2016  # backticks in single quotes are the tool's own messages
set -u
export LC_ALL=C

if ((BASH_VERSINFO[0] < 5)); then
  echo "hostile_probe: needs bash 5 (EPOCHREALTIME)" >&2
  exit 2
fi
for tool in jq timeout mktemp; do
  command -v "$tool" >/dev/null || {
    echo "hostile_probe: needs $tool" >&2
    exit 2
  }
done

FILTER=${1:-}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -n ${RIGHTSIZE:-} ]]; then
  B=$(realpath "$RIGHTSIZE")
else
  echo "building: cargo build --release" >&2
  (cd "$ROOT" && cargo build --release --quiet) || {
    echo "hostile_probe: cargo build --release failed" >&2
    exit 2
  }
  B=$ROOT/target/release/rightsize
fi
[[ -x $B ]] || {
  echo "hostile_probe: no binary at $B" >&2
  exit 2
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rightsize-probe.XXXXXX")
chmod 755 "$WORK" # user nobody walks through it in the read-only cases
mkdir -p "$WORK/tmp" "$WORK/xdg/data" "$WORK/xdg/config" "$WORK/cases" "$WORK/shared"
# nothing lands in the real data or config dir, and a summary kept "elsewhere" lands here
export XDG_DATA_HOME=$WORK/xdg/data XDG_CONFIG_HOME=$WORK/xdg/config TMPDIR=$WORK/tmp
unset RIGHTSIZE_WORKER_TOKEN
SOCK=$WORK/tmux.sock # our own tmux server (and socket, removed with WORK), never the user's
PIDS=()     # processes started by this script (and workers seen), killed at the end
MOUNTS=()   # tmpfs mounted by this script
SESSIONS=() # tmux sessions started by this script
SHARED=()   # simulators and servers kept for the whole probe

# Background processes get SIGINT and SIGQUIT at their defaults, as from a terminal (a
# non-interactive bash starts them ignored, which would hide a signal sent before the
# binary installs its handlers).
DEFSIG=()
if env --default-signal=INT,QUIT true 2>/dev/null; then
  # shellcheck disable=SC2054  # one option, INT,QUIT its value
  DEFSIG=(env --default-signal=INT,QUIT)
fi

is_root() { [[ $(id -u) == 0 ]]; }

# alive PID: the process exists and is not a zombie
alive() {
  local st
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [[ -n $st && $st != Z && $st != X ]]
}

# ours PID: a live process of this probe's binary (a pid seen once may have been reused)
ours() { alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$B"; }

kill_tracked() {
  local p s
  for s in "${SESSIONS[@]}"; do tmux -S "$SOCK" kill-session -t "$s" 2>/dev/null; done
  SESSIONS=()
  for p in "${PIDS[@]}"; do
    if ours "$p"; then
      kill -CONT "$p" 2>/dev/null
      kill -KILL "$p" 2>/dev/null
    fi
  done
  for p in "${PIDS[@]}"; do { wait "$p"; } 2>/dev/null; done
  PIDS=()
  local m
  for m in "${MOUNTS[@]}"; do
    chmod -R u+rwX "$m" 2>/dev/null
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
  done
  MOUNTS=()
}

cleanup() {
  kill_tracked
  local p
  for p in "${SHARED[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for p in "${SHARED[@]}"; do { wait "$p"; } 2>/dev/null; done
  chmod -R u+rwX "$WORK" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

now_ms() { NOW=$((${EPOCHREALTIME/./} / 1000)); }

# ---------------------------------------------------------------------------------------
# verdicts: the first one a case gives is its verdict

V="" WHY=""
pass() { [[ -n $V ]] || V=PASS; }
fail() { [[ -n $V ]] || {
  V=FAIL
  WHY=$*
}; }
# the machine cannot run it (not root, no mount allowed, a limit): a SKIP even under CI
skip_machine() { [[ -n $V ]] || {
  V=SKIP
  WHY=$*
}; }
# the machine could run it with a tool installed: a FAIL under CI=true
skip_missing() {
  [[ -n $V ]] && return
  if [[ ${CI:-} == true ]]; then
    V=FAIL
    WHY="CI: $* (install it)"
  else
    V=SKIP
    WHY=$*
  fi
}

need_root() { # need_root WHAT
  is_root && return 0
  skip_machine "$1 needs root"
  return 1
}
need_tool() { # need_tool TOOL
  command -v "$1" >/dev/null && return 0
  skip_missing "no $1"
  return 1
}

# the last lines of the case's stderr, on one line
excerpt() {
  tail -n "${2:-3}" "${1:-$C/err}" 2>/dev/null | cut -c1-240 | tr '\n' '|' | sed 's/|$//'
}

# ---------------------------------------------------------------------------------------
# running the binary

# run SECS ARGS...: the binary in the foreground, bounded; RC its exit code (124: timed out)
run() {
  local secs=$1
  shift
  timeout -k 3 "$secs" "$B" "$@" >"$C/out" 2>"$C/err" </dev/null
  RC=$?
}

# spawn OUT ERR CMD...: CMD in the background; LAST its pid
spawn() {
  local out=$1 err=$2
  shift 2
  "${DEFSIG[@]}" "$@" >"$out" 2>"$err" </dev/null &
  LAST=$!
  PIDS+=("$LAST")
}

# wait_exit PID SECS: waits for a child to end; RC its exit code; 1 (and killed) past SECS
wait_exit() {
  local pid=$1 deadline
  now_ms
  deadline=$((NOW + $2 * 1000))
  while alive "$pid"; do
    now_ms
    if ((NOW > deadline)); then
      kill -CONT "$pid" 2>/dev/null
      kill -KILL "$pid" 2>/dev/null
      { wait "$pid"; } 2>/dev/null
      RC=-1
      return 1
    fi
    sleep 0.02
  done
  { wait "$pid"; } 2>/dev/null
  RC=$?
  return 0
}

# wait_until SECS CMD...: polls CMD every 20 ms until it succeeds; 1 past SECS
wait_until() {
  local deadline
  now_ms
  deadline=$((NOW + $1 * 1000))
  shift
  until "$@"; do
    now_ms
    ((NOW > deadline)) && return 1
    sleep 0.02
  done
}

has_line() { grep -Eq -- "$2" "$1" 2>/dev/null; }       # has_line FILE REGEX
seen_or_ended() { has_line "$1" "$2" || ! alive "$3"; } # seen_or_ended FILE REGEX PID
still_running() { # still_running PID: or the case fails, saying how the run ended
  alive "$1" && return 0
  wait_exit "$1" 1
  fail "the run ended early (exit $RC): $(excerpt)"
  return 1
}
file_there() { compgen -G "$1" >/dev/null; }            # file_there GLOB
# after_line FILE FROM REGEX: a line matching REGEX at or after the first matching FROM
after_line() { sed -n "/$2/,\$p" "$1" 2>/dev/null | grep -Eq -- "$3"; }

# ---------------------------------------------------------------------------------------
# checks: each gives the case's FAIL and returns 1 when it does not hold

rc_is() { # rc_is CODE...: RC is one of them
  local c
  for c in "$@"; do [[ $RC == "$c" ]] && return 0; done
  if [[ $RC == -1 ]]; then
    fail "still running at its bound: $(excerpt)"
  else
    fail "exit $RC, not $*: $(excerpt)"
  fi
  return 1
}
has() { # has TEXT: stderr holds TEXT
  grep -qF -- "$1" "$C/err" && return 0
  fail "stderr lacks \`$1\`: $(excerpt)"
  return 1
}
lacks() { # lacks TEXT: stderr does not hold TEXT
  grep -qF -- "$1" "$C/err" || return 0
  fail "stderr holds \`$1\`: $(grep -m1 -F -- "$1" "$C/err" | cut -c1-200)"
  return 1
}
no_panic() { lacks "panicked"; }
one_line() { # one_line A B: exactly one stderr line holds both
  local n
  n=$(grep -F -- "$1" "$C/err" | grep -cF -- "$2")
  [[ $n == 1 ]] && return 0
  fail "$n lines name \`$1\` and \`$2\`: $(excerpt)"
  return 1
}
err_under() { # err_under BYTES: stderr is short
  local n
  n=$(wc -c <"$C/err")
  ((n <= $1)) && return 0
  fail "stderr is $n bytes (at most $1 expected): $(head -c 200 "$C/err" | tr '\n' '|')"
  return 1
}
no_runs() { # nothing was measured: no run folder under $R
  if [[ -d $R ]] && [[ -n $(ls -A "$R" 2>/dev/null) ]]; then
    fail "a run folder was made: $(find "$R" -mindepth 1 -maxdepth 1 -printf '%f ')"
    return 1
  fi
}
jv() { jq -r "$2" "$1" 2>/dev/null; } # jv FILE EXPR
is_json() { # is_json FILE EXPR WANT
  local got
  got=$(jv "$1" "$2")
  [[ $got == "$3" ]] && return 0
  fail "$(basename "$1") $2 is ${got:-missing}, not $3"
  return 1
}
only_run() { # only_run: RUN the one run folder under $R
  local runs
  runs=("$R"/*/)
  if [[ ${#runs[@]} != 1 || ! -d ${runs[0]} ]]; then
    fail "not one run folder under $R: $(find "$R" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null)"
    return 1
  fi
  RUN=${runs[0]%/}
}
whole() { # whole DIR: JSON files parse, every JSONL line parses, no .tmp is left
  local f
  f=$(find "$1" -maxdepth 1 -name '*.tmp' | head -1)
  [[ -z $f ]] || {
    fail "a leftover $(basename "$f")"
    return 1
  }
  for f in "$1"/*.json; do
    [[ -e $f ]] || continue
    jq -e . "$f" >/dev/null 2>&1 || {
      fail "$(basename "$f") is not whole JSON"
      return 1
    }
  done
  for f in "$1"/*.jsonl; do
    [[ -e $f ]] || continue
    jq -c . "$f" >/dev/null 2>&1 || {
      fail "$(basename "$f") has a line that is not JSON"
      return 1
    }
  done
}
kept() { # kept: KEPT the summary a failed run says it kept, which must parse
  local l
  l=$(grep -m1 -E '^kept( elsewhere)?: ' "$C/err") || {
    fail "no line says where the summary was kept: $(excerpt)"
    return 1
  }
  case $l in
    "kept: "*)
      l=${l#kept: }
      KEPT=${l%% (*}
      ;;
    *) KEPT=${l##*) is in } ;;
  esac
  jq -e . "$KEPT" >/dev/null 2>&1 || {
    fail "the kept summary $KEPT does not parse"
    return 1
  }
}
interrupted_files() { # run.json and summary.json of $RUN say interrupted
  is_json "$RUN/run.json" .interrupted true || return 1
  is_json "$RUN/summary.json" .interrupted true
}
level_done() { # level_done FILE: requests the level file counts, ok and failed
  jv "$1" '(.request_count.avg // 0) + (.error_request_count.avg // 0) | floor'
}
none_alive() { # none_alive PID...: none of them runs
  local p
  for p in "$@"; do ours "$p" && return 1; done
  return 0
}

# ---------------------------------------------------------------------------------------
# fixtures

TINY=(--input-tokens 16 --output-tokens 4)

# start_sim ARGS...: a simulator on a free port, SIM_URL its URL, SIM_PID its process
start_sim() {
  local f
  f=$(mktemp "$WORK/shared/sim.XXXXXX")
  spawn "$f" "$f.err" "$B" sim --port 0 "$@"
  SIM_PID=$LAST
  if ! wait_until 15 has_line "$f" '^http://'; then
    fail "the simulator did not start: $(excerpt "$f.err")"
    return 1
  fi
  SIM_URL=$(head -1 "$f")
}

# shared simulators: FAST at 50x (quick runs), SLOW at 2x (levels of seconds, to signal)
shared_sims() {
  [[ -n ${FAST_URL:-} ]] && return 0
  start_sim --time-scale 50 || return 1
  FAST_URL=$SIM_URL
  SHARED+=("$SIM_PID")
  start_sim --time-scale 2 || return 1
  SLOW_URL=$SIM_URL
  SHARED+=("$SIM_PID")
  PIDS=("${PIDS[@]:0:${#PIDS[@]}-2}") # kept for the whole probe, not the case
}

SERVER_PY=$WORK/shared/server.py
cat >"$SERVER_PY" <<'EOF'
# A server for pre-flight: `silent` accepts and never answers, `garbage` answers bytes that
# are not HTTP. It writes its port to PORTFILE and a line to LOG per connection.
import os, socket, sys
mode, portfile, log = sys.argv[1:4]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(128)
with open(portfile + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
held = []
while True:
    c, _ = s.accept()
    with open(log, "a") as f:
        f.write("accepted\n")
    if mode == "garbage":
        try:
            c.settimeout(2)
            c.recv(65536)
            c.sendall(b"\x00\xff\xfe this is not HTTP\r\n\r\n")
        except OSError:
            pass
        c.close()
    else:
        held.append(c)
EOF

# server MODE: SRV_URL and SRV_LOG of a shared python server (silent or garbage)
declare -A SRV_URLS=()
server() {
  need_tool python3 || return 1
  local d=$WORK/shared/$1
  if [[ -z ${SRV_URLS[$1]:-} ]]; then
    mkdir -p "$d"
    : >"$d/log"
    python3 "$SERVER_PY" "$1" "$d/port" "$d/log" >/dev/null 2>"$d/err" </dev/null &
    SHARED+=("$!")
    wait_until 10 test -s "$d/port" || {
      fail "the $1 server did not start: $(excerpt "$d/err")"
      return 1
    }
    SRV_URLS[$1]="http://127.0.0.1:$(cat "$d/port")/v1"
  fi
  SRV_URL=${SRV_URLS[$1]}
  SRV_LOG=$d/log
}
accepts() { wc -l <"$SRV_LOG"; }
accepted_past() { (($(accepts) > $1)); } # accepted_past N: the server took more than N

# fixture_run: FIX a finished two-level run folder (made once)
fixture_run() {
  FIX=$(compgen -G "$WORK/shared/fixture/*/" | head -1)
  FIX=${FIX%/}
  [[ -n $FIX ]] && return 0
  timeout 60 "$B" sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c 1,2 -n 8 --no-tui \
    --out "$WORK/shared/fixture" >/dev/null 2>"$WORK/shared/fixture.err"
  FIX=$(compgen -G "$WORK/shared/fixture/*/" | head -1)
  FIX=${FIX%/}
  [[ -n $FIX ]] || {
    fail "the fixture run failed: $(excerpt "$WORK/shared/fixture.err")"
    return 1
  }
}
# copy_fixture NAME: a copy of the fixture run in the case's folder, as COPY
copy_fixture() {
  fixture_run || return 1
  COPY=$C/$1
  cp -r "$FIX" "$COPY"
}

# small_disk SIZE: MNT, a tmpfs of SIZE on a fresh folder (root only)
small_disk() {
  need_root "mounting a tmpfs" || return 1
  MNT=$C/disk
  mkdir -p "$MNT"
  if ! mount -t tmpfs -o "size=$1" tmpfs "$MNT" 2>"$C/mount.err"; then
    skip_machine "cannot mount a tmpfs here: $(excerpt "$C/mount.err" 1)"
    return 1
  fi
  MOUNTS+=("$MNT")
}
fill_disk() { # fill_disk LEAVE_BYTES: fills MNT but for LEAVE_BYTES
  local avail
  avail=$(df --output=avail -B1 "$MNT" | tail -1 | tr -d ' ')
  if ((avail > $1 + 1024)); then
    dd if=/dev/zero of="$MNT/fill" bs=1024 count=$(((avail - $1) / 1024)) 2>/dev/null
  fi
  [[ $1 == 0 ]] && dd if=/dev/zero of="$MNT/fill2" bs=512 2>/dev/null
  return 0
}

# as_other: RUNAS, the prefix that runs the binary where a folder's 555 holds (as `nobody`
# when root, as this user otherwise), and OUT, a folder it may write
as_other() {
  OUT=$C/out-dir
  mkdir -p "$OUT"
  RUNAS=()
  is_root || return 0
  need_tool setpriv || return 1
  chown nobody: "$OUT" 2>/dev/null || {
    skip_machine "there is no user nobody to run as"
    return 1
  }
  RUNAS=(setpriv --reuid=65534 --regid=65534 --clear-groups -- env "HOME=$OUT"
    "XDG_CONFIG_HOME=$OUT/.config" "XDG_DATA_HOME=$OUT/.data" "TMPDIR=$OUT")
  "${RUNAS[@]}" "$B" --version >/dev/null 2>&1 || {
    skip_machine "user nobody cannot run $B (a folder on its path is closed to others)"
    return 1
  }
}

# ---------------------------------------------------------------------------------------
# disks

LONG_LEVELS=$(seq -s, 4 43) # 40 levels of 400 requests: more than the small disks hold

case_full_disk() {
  small_disk 96k || return
  spawn "$C/out" "$C/err" "$B" sweep -e sim --sim-time-scale 50 "${TINY[@]}" \
    -c "$LONG_LEVELS" -n 400 --no-tui --out "$MNT"
  wait_exit "$LAST" 30
  rc_is 1 && one_line "$MNT" "No space left on device" && no_panic || return
  R=$MNT
  only_run && whole "$RUN" && kept || return
  is_json "$KEPT" .interrupted true && pass
}

case_full_disk_then_sigint() {
  small_disk 2m || return
  fill_disk 8192
  spawn "$C/out" "$C/err" "$B" sweep -e sim --sim-time-scale 20 -c 4 -n 400 \
    --output-tokens 2000 --no-tui --out "$MNT/runs"
  # the run may fail its write before the first progress line: then there is nothing to cut
  wait_until 60 seen_or_ended "$C/err" '/400 done' "$LAST"
  kill -INT "$LAST" 2>/dev/null
  wait_exit "$LAST" 20
  rc_is 1 && lacks "before any load" && one_line "$MNT/runs" "No space left on device" &&
    kept && pass
}

case_full_disk_from_the_start() {
  small_disk 64k || return
  fill_disk 0
  run 30 sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c 2 -n 8 --no-tui --out "$MNT/runs"
  rc_is 1 && one_line "$MNT/runs" "No space left on device" && lacks "level 1:" && pass
}

case_read_only_folder_mid_run() {
  as_other || return
  spawn "$C/out" "$C/err" "${RUNAS[@]}" "$B" sweep -e sim --sim-time-scale 50 "${TINY[@]}" \
    -c "$LONG_LEVELS" -n 400 --no-tui --out "$OUT"
  wait_until 60 file_there "$OUT/*/level-001-c0004.json" || {
    fail "no first level file: $(excerpt)"
    return
  }
  RUN=$(dirname "$OUT"/*/level-001-c0004.json)
  chmod 555 "$RUN"
  wait_exit "$LAST" 10
  chmod 755 "$RUN"
  rc_is 1 && one_line "$RUN" "Permission denied" && whole "$RUN" && kept && pass
}

case_read_only_folder_then_sigint() {
  as_other || return
  spawn "$C/out" "$C/err" "${RUNAS[@]}" "$B" sweep -e sim --sim-time-scale 2 \
    --input-tokens 32 --output-tokens 64 -c 4,2 -n 40 --no-tui --out "$OUT"
  wait_until 60 seen_or_ended "$C/err" '^level 2:' "$LAST" || {
    fail "never reached level 2: $(excerpt)"
    return
  }
  RUN=$(dirname "$OUT"/*/level-001-c0004.json)
  chmod 555 "$RUN"
  sleep 0.3
  kill -INT "$LAST" 2>/dev/null
  wait_exit "$LAST" 20
  chmod 755 "$RUN"
  rc_is 1 && one_line "level-002-c0002.json" "Permission denied" && lacks "before any load" &&
    kept && is_json "$KEPT" '.levels | length' 1 && pass
}

case_out_on_a_read_only_filesystem() {
  need_root "mounting a read-only tmpfs" || return
  MNT=$C/disk
  mkdir -p "$MNT"
  mount -t tmpfs -o size=1m,ro tmpfs "$MNT" 2>/dev/null || {
    skip_machine "cannot mount a tmpfs here"
    return
  }
  MOUNTS+=("$MNT")
  run 30 sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c 2 -n 8 --no-tui --out "$MNT/runs"
  rc_is 1 && one_line "$MNT/runs" "Read-only file system" && lacks "level 1:" && pass
}

case_out_is_a_file() {
  echo "not a folder" >"$C/results"
  run 30 sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c 1 -n 2 --no-tui --out "$C/results"
  rc_is 1 && has "error: cannot write the results: $C/results: " && pass
}

case_export_to_a_full_disk_leaves_no_half_file() {
  fixture_run || return
  small_disk 64k || return
  fill_disk 0
  run 30 export "$FIX" --html "$MNT/report.html"
  rc_is 1 && one_line "$MNT/report.html" "No space left on device" || return
  if [[ -e $MNT/report.html ]]; then
    fail "a $(stat -c %s "$MNT/report.html")-byte report.html is left where the export failed"
    return
  fi
  pass
}

# ---------------------------------------------------------------------------------------
# signals: before pre-flight, during pre-flight, mid-level, between levels, during the write

code_of() { case $1 in INT) echo 130 ;; TERM) echo 143 ;; HUP) echo 129 ;; esac }

# a dataset that takes the run a second or more to read and tokenize before its pre-flight
big_dataset() {
  MANY=$WORK/shared/many.jsonl
  [[ -s $MANY ]] && return 0
  yes '{"text": "hello world, how are you today? tell me a story about the sea"}' |
    head -n 400000 >"$MANY"
}

signal_before_preflight() {
  local sig=$1
  server silent || return
  big_dataset
  local n0
  n0=$(accepts)
  spawn "$C/out" "$C/err" "$B" sweep -e "$SRV_URL" -m m -c 1 -n 2 --dataset "$MANY" \
    --tokenizer o200k --no-tui --out "$R"
  sleep 0.3
  if (($(accepts) != n0)); then
    fail "mis-timed: pre-flight began within 0.3 s (the dataset read faster than this case assumes)"
    return
  fi
  kill -"$sig" "$LAST" 2>/dev/null
  wait_exit "$LAST" 10
  rc_is "$(code_of "$sig")" && no_runs && pass
}

signal_during_preflight() {
  local sig=$1
  server silent || return
  local n0
  n0=$(accepts)
  spawn "$C/out" "$C/err" "$B" sweep -e "$SRV_URL" -m m -c 1 -n 2 --timeout 60s \
    --no-tui --out "$R"
  wait_until 20 accepted_past "$n0" || {
    fail "the pre-flight never connected: $(excerpt)"
    return
  }
  kill -"$sig" "$LAST" 2>/dev/null
  wait_exit "$LAST" 10
  rc_is "$(code_of "$sig")" && no_runs && pass
}

# a two-level sweep on the 2x simulator: level 1 about 4 s, level 2 about 7 s
two_levels() {
  shared_sims || return 1
  spawn "$C/out" "$C/err" "$B" sweep -e "$SLOW_URL" --input-tokens 32 --output-tokens 64 \
    -c 4,2 -n 40 --no-tui --out "$R"
}

signal_mid_level() {
  local sig=$1
  two_levels || return
  # a progress line of level 2 with requests done: the level is under way
  wait_until 60 after_line "$C/err" '^level 2:' '^ +[1-9][0-9]*/40 done' || {
    fail "never saw level 2 under way: $(excerpt)"
    return
  }
  kill -"$sig" "$LAST" 2>/dev/null
  wait_exit "$LAST" 20
  rc_is "$(code_of "$sig")" && only_run || return
  is_json "$RUN/level-001-c0004.json" .partial false || return
  is_json "$RUN/level-002-c0002.json" .partial true || return
  local n
  n=$(level_done "$RUN/level-002-c0002.json")
  if ! ((n > 0 && n < 40)); then
    fail "the cut level counts $n of 40 requests"
    return
  fi
  interrupted_files && whole "$RUN" && has "interrupted: finished levels are saved" && pass
}

signal_between_levels() {
  local sig=$1
  two_levels || return
  wait_until 60 file_there "$R/*/level-001-c0004.json" || {
    fail "level 1 was never written: $(excerpt)"
    return
  }
  kill -"$sig" "$LAST" 2>/dev/null
  wait_exit "$LAST" 20
  rc_is "$(code_of "$sig")" && only_run || return
  is_json "$RUN/level-001-c0004.json" .partial false || return
  is_json "$RUN/level-001-c0004.json" '.request_count.avg' 40 || return
  if [[ -e $RUN/level-002-c0002.json ]]; then
    is_json "$RUN/level-002-c0002.json" .partial true || return
  fi
  interrupted_files && whole "$RUN" && pass
}

# the signal as the last level's file appears, while summary.json and run.json are written
# next: the run may end either way (often 128+n, sometimes 0 when it was done first), but what
# is on disk is whole and says what happened
signal_during_write() {
  local sig=$1 code spins=0 deadline
  code=$(code_of "$sig")
  spawn "$C/out" "$C/err" "$B" sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c 2,4 -n 2000 \
    --no-tui --out "$R"
  now_ms
  deadline=$((NOW + 60000))
  # a busy look (compgen is a builtin: no fork) so the signal lands within the write
  until compgen -G "$R/*/level-002-c0004.json" >/dev/null; do
    ((++spins % 2000)) && continue
    now_ms
    if ((NOW > deadline)) || ! alive "$LAST"; then
      fail "the last level was never written: $(excerpt)"
      return
    fi
  done
  kill -"$sig" "$LAST" 2>/dev/null
  wait_exit "$LAST" 20
  rc_is 0 "$code" && only_run && whole "$RUN" || return
  [[ -e $RUN/summary.json ]] || {
    fail "no summary.json"
    return
  }
  local want=false
  [[ $RC == "$code" ]] && want=true
  is_json "$RUN/run.json" .interrupted "$want" && is_json "$RUN/summary.json" .interrupted "$want" &&
    is_json "$RUN/level-001-c0002.json" .partial false && pass
}

case_signals_in_a_burst() {
  spawn "$C/out" "$C/err" "$B" sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c 4 -n 1000000 \
    --no-tui --out "$R"
  wait_until 30 seen_or_ended "$C/err" '/1000000 done' "$LAST" || {
    fail "no progress: $(excerpt)"
    return
  }
  # the first signal decides the story; the later ones, 0.1 s on (a second Ctrl-C, then a
  # service manager's SIGTERM), change nothing. (Sent in the same instant, INT and TERM are
  # both pending at once and either may be read first: no order to hold the tool to.)
  kill -INT "$LAST" 2>/dev/null
  sleep 0.1
  kill -INT "$LAST" 2>/dev/null
  kill -TERM "$LAST" 2>/dev/null
  wait_exit "$LAST" 15
  rc_is 130 && only_run && whole "$RUN" && interrupted_files &&
    is_json "$RUN/level-001-c0004.json" .partial true && pass
}

case_huge_n_starts_at_once_and_stops() {
  spawn "$C/out" "$C/err" "$B" sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c 4 -n 1000000 \
    --no-tui --out "$R"
  wait_until 30 seen_or_ended "$C/err" '/1000000 done' "$LAST" || {
    fail "no progress within 30 s: $(excerpt)"
    return
  }
  kill -INT "$LAST" 2>/dev/null
  wait_exit "$LAST" 10
  rc_is 130 && only_run && is_json "$RUN/level-001-c0004.json" .partial true &&
    interrupted_files && pass
}

trace_1k() { # TRACE: 1,000 Mooncake records 10 ms apart (10 s at --speedup 1)
  TRACE=$WORK/shared/trace1k.jsonl
  [[ -s $TRACE ]] && return 0
  local i
  for ((i = 0; i < 1000; i++)); do
    printf '{"timestamp": %d, "input_length": 16, "output_length": 4, "hash_ids": [%d]}\n' \
      $((i * 10)) "$i"
  done >"$TRACE"
}

case_sigterm_mid_replay() {
  trace_1k
  spawn "$C/out" "$C/err" "$B" replay "$TRACE" -e sim --sim-time-scale 50 --no-tui --out "$R"
  wait_until 30 file_there "$R/*/run.json" || {
    fail "the replay never started: $(excerpt)"
    return
  }
  sleep 1
  kill -TERM "$LAST" 2>/dev/null
  wait_exit "$LAST" 15
  rc_is 143 && only_run && interrupted_files && whole "$RUN" || return
  local f
  f=$(compgen -G "$RUN/level-001-*.json" | head -1)
  [[ -n $f ]] || {
    fail "no level file for the cut replay"
    return
  }
  is_json "$f" .partial true && pass
}

case_sigint_mid_search() {
  shared_sims || return
  spawn "$C/out" "$C/err" "$B" search -e "$SLOW_URL" --input-tokens 32 --output-tokens 64 \
    --e2e-sla 5s --max 64 --no-tui --out "$R"
  wait_until 60 seen_or_ended "$C/err" ' [1-9][0-9]*/[0-9]+ done' "$LAST" || {
    fail "no progress: $(excerpt)"
    return
  }
  kill -INT "$LAST" 2>/dev/null
  wait_exit "$LAST" 20
  rc_is 130 && only_run && interrupted_files && whole "$RUN" && pass
}

# ---------------------------------------------------------------------------------------
# absurd flag values: refused with exit 2 before anything runs, naming the flag

# refused CODE TEXT ARGS...: `rightsize ARGS` ends with CODE and says TEXT, runs nothing
refused() {
  local code=$1 text=$2
  shift 2
  run 20 "$@"
  rc_is "$code" && has "$text" && no_panic && lacks "level 1:" && no_runs && pass
}
# sweep_refused TEXT ARGS...: `sweep ARGS` refused with exit 2
sweep_refused() {
  local text=$1
  shift
  refused 2 "$text" sweep "$@" --no-tui --out "$R"
}

case_rate_1e20() { sweep_refused 'rate `1e20` must be between 0.01 and 1000000 requests/s' --rate 1e20; }
case_rate_nan() { sweep_refused 'rate `NaN` must be between 0.01 and 1000000' --rate NaN; }
case_rate_inf() { sweep_refused 'rate `inf` must be between 0.01 and 1000000' --rate inf; }
case_rate_negative() { sweep_refused 'rate `-5` must be between 0.01 and 1000000' --rate=-5; }
case_rate_empty() { sweep_refused "for '--rate <RPS>'" --rate ''; }
case_rates_1e20() { sweep_refused '--rates: rate `1e20` must be between 0.01 and 1000000' --rates 1,1e20; }
case_schedule_ramp_1e20() { sweep_refused 'rate `1e20` must be between 0 and 1000000 requests/s' --schedule 'ramp:0-1e20rps@10s'; }
case_schedule_steps_1e20() { sweep_refused 'rate `1e20` must be between 0 and 1000000 requests/s' --schedule 'steps:1e20@10s'; }
case_schedule_ramp_1e7() { sweep_refused 'rate `1e7` must be between 0 and 1000000 requests/s' --schedule 'ramp:0-1e7rps@10s'; }
case_schedule_30M_requests() { sweep_refused 'in one level; at most 10000000' --schedule 'ramp:0-1000000rps@60s'; }
case_rate_for_an_hour() { sweep_refused 'in one level; at most 10000000' --rate 1000000 --level-duration 1h; }
case_workers_100000() { sweep_refused '--workers 100000: at most 256 local worker processes' -c 4 --workers 100000; }
case_workers_0() { sweep_refused "must be at least 1, got 0" --workers 0; }
case_workers_above_concurrency() { sweep_refused "more workers than the plan's highest concurrency (4)" -c 2,4 --workers 8; }
case_n_4e9() { sweep_refused '-n 4000000000: at most 1000000 per level' -n 4000000000; }
case_n_negative() { sweep_refused 'must be at least 1, got -1' -n=-1; }
case_n_zero() { sweep_refused 'must be at least 1, got 0' -n 0; }
case_n_empty() { sweep_refused '`` is not a whole number' -n ''; }
case_n_float() { sweep_refused '`1e3` is not a whole number' -n 1e3; }
case_c_1e8() { sweep_refused 'the open-file limit is' -e sim -c 100000000 -n 1; }
case_c_repeated() { sweep_refused '--concurrency lists 4 more than once' -c 4,4,2; }
case_c_empty() { sweep_refused "for '--concurrency <LIST>'" -c ''; }
case_c_negative() { sweep_refused 'concurrency must be at least 1, got -4' --concurrency=-4; }
case_timeout_8761h() { sweep_refused '`8761h` is too long (at most 365 days)' --timeout 8761h; }
case_timeout_zero() { sweep_refused 'a timeout of zero fails every request' --timeout 0; }
case_timeout_negative() { sweep_refused '`-1s` is not a duration' --timeout=-1s; }
case_timeout_nan() { sweep_refused '`NaNs` is not a duration' --timeout NaNs; }
case_input_tokens_1000001() { sweep_refused 'more than the largest supported (1000000)' --input-tokens 1000001; }
case_output_tokens_1000001() { sweep_refused 'more than the largest supported (1000000)' --output-tokens 1000001; }
case_input_tokens_negative() { sweep_refused 'must be at least 1, got -1' --input-tokens=-1; }
case_turns_1001() { sweep_refused 'at most 1000 turns a session' --turns 1001; }
case_turns_0() { sweep_refused 'a session has at least 1 turn' --turns 0; }
case_warmup_1000001() { sweep_refused '--warmup 1000001: at most 1000000 per level' --warmup 1000001; }
case_prefix_share_nan() { sweep_refused 'must be a fraction between 0 and 1, got NaN' --prefix-share NaN; }
case_max_error_rate_2() { sweep_refused '`2` is above 100 %' --max-error-rate 2; }
case_headroom_negative() { sweep_refused '`-20%` must not be negative' --headroom=-20%; }
case_level_duration_zero() { sweep_refused "a level's duration must be longer than zero" --rates 10 --level-duration 0s; }
case_window_zero() { sweep_refused 'a metrics window must be longer than zero' --rates 10 --window 0s; }
case_burstiness_nan() { sweep_refused '--burstiness NaN: must be above 0' --rate 10 --arrival gamma --burstiness NaN; }
case_max_in_flight_zero() { sweep_refused 'must be at least 1, got 0' --rate 10 --max-in-flight 0; }
case_think_time_8761h() { sweep_refused '`8761h` is too long (at most 365 days)' --think-time 8761h; }
case_seed_too_big() { sweep_refused 'number too large to fit in target type' --seed 99999999999999999999999; }
case_sim_time_scale_zero() { sweep_refused "--sim-time-scale 0: the simulator's time scale must be above 0" -e sim --sim-time-scale 0; }
case_sim_time_scale_nan() { sweep_refused "--sim-time-scale NaN: the simulator's time scale must be above 0" -e sim --sim-time-scale NaN; }
case_sim_time_scale_1e300() { sweep_refused '--sim-time-scale 1e300: ' -e sim --sim-time-scale 1e300 "${TINY[@]}" -c 1 -n 2; }
case_price_nan() { sweep_refused '`NaN` is not a non-negative number' --price-per-hour NaN; }
case_peak_rps_nan() { sweep_refused 'the peak must be a positive number, got NaN' --peak-rps NaN; }
case_endpoint_ftp() { sweep_refused 'is not an endpoint rightsize can reach' --endpoint ftp://h:8000/v1; }
case_endpoint_bad_port() { sweep_refused 'invalid port number' --endpoint http://127.0.0.1:99999/v1; }
case_header_crlf() { sweep_refused 'holds a line break or another control character' --header $'X-A: b\r\nEvil: 1'; }
case_search_requests_1000001() { refused 2 '1000001: at most 1000000 per level' search --e2e-sla 1s --max-requests-per-level 1000001 --no-tui --out "$R"; }
case_search_error_sla_2() { refused 2 'must be a fraction between 0 and 1, got 2' search --error-rate-sla 2 --no-tui --out "$R"; }
case_export_size_8001() {
  fixture_run || return
  refused 2 'between 800x450 and 8000x8000' export "$FIX" --size 8001x900 --png "$C/x.png"
}
case_sim_time_scale_zero_server() { refused 2 '--time-scale must be above 0 and at most 10000, got 0' sim --port 0 --time-scale 0; }
case_sim_port_99999() { refused 2 '99999 is not in 0..=65535' sim --port 99999; }
case_sim_fault_probability_2() { refused 2 'expected a probability between 0 and 1' sim --port 0 --fault-http500 2; }
case_worker_connect_timeout_8761h() { refused 2 '`8761h` is too long (at most 365 days)' worker --controller http://127.0.0.1:9 --connect-timeout 8761h; }

case_concurrency_8000_runs() {
  local hard
  hard=$(ulimit -Hn)
  if [[ $hard != unlimited ]] && ((hard < 8400)); then
    skip_machine "the open-file hard limit is $hard; 8,000 streams need about 8,100"
    return
  fi
  shared_sims || return
  (
    ulimit -n "$hard" 2>/dev/null
    exec timeout -k 3 120 "$B" sweep -e "$FAST_URL" "${TINY[@]}" -c 8000 -n 8000 --no-tui \
      --out "$R" >"$C/out" 2>"$C/err" </dev/null
  )
  RC=$?
  rc_is 0 && no_panic && only_run || return
  is_json "$RUN/level-001-c8000.json" .partial false || return
  is_json "$RUN/level-001-c8000.json" '.error_request_count.avg // 0' 0 && pass
}

# ---------------------------------------------------------------------------------------
# configs: exit 2 naming the file (and line, and key)

# config_refused TEXT CONTENT: a config holding CONTENT is refused, saying TEXT and the file
config_refused() {
  printf '%s' "$2" >"$C/bad.toml"
  run 20 sweep --no-tui --config "$C/bad.toml" --out "$R"
  rc_is 2 && has "$1" && no_panic && no_runs && err_under 4096 && pass
}

case_config_50mb_one_line() {
  { printf 'x = "'; head -c 50000000 /dev/zero | tr '\0' a; printf '"\n'; } >"$C/big.toml"
  run 60 sweep --no-tui --config "$C/big.toml" --out "$R"
  rc_is 2 && has "$C/big.toml" && has 'characters 1 to 160 shown' && err_under 4096 && pass
}
case_config_50mb_value() {
  { printf '[defaults]\ntimeout = "'; head -c 50000000 /dev/zero | tr '\0' a; printf '"\n'; } >"$C/big.toml"
  run 60 sweep --no-tui --config "$C/big.toml" --out "$R"
  rc_is 2 && has "$C/big.toml" && err_under 4096 && pass
}
case_config_unknown_key() { config_refused 'unknown field `output_tokenz`' $'[profiles.rag]\ninput_tokens = 1024\noutput_tokenz = 256\n'; }
case_config_wrong_type() { config_refused 'line 2, column 16' $'[profiles.rag]\ninput_tokens = "abc"\n'; }
case_config_zero_level() { config_refused 'must be at least 1, got 0' $'[sweeps.x]\nconcurrency = [8, 0]\n'; }
case_config_request_count_4e9() { config_refused 'request_count 4000000000: at most 1000000 per level' $'[sweeps.x]\nconcurrency = [8]\nrequest_count = 4000000000\n[defaults]\nsweep = "x"\n'; }
case_config_input_tokens_1e8() { config_refused 'more than the largest supported (1000000)' $'[profiles.rag]\ninput_tokens = 100000000\noutput_tokens = 4\n'; }
case_config_timeout_zero() { config_refused 'a timeout of zero fails every request' $'[defaults]\ntimeout = "0s"\n'; }
case_config_timeout_huge() { config_refused 'is too long (at most 365 days)' $'[defaults]\ntimeout = "99999999999h"\n'; }
case_config_no_levels() { config_refused 'concurrency lists no level' $'[sweeps.e]\nconcurrency = []\n[defaults]\nsweep = "e"\n'; }
case_config_bad_url() { config_refused 'TOML parse error at line 2' $'[endpoints.x]\nurl = "http://:99/v1"\n'; }
case_config_not_utf8() {
  printf '\xff\xfe\x00garbage' >"$C/bad.toml"
  run 20 sweep --no-tui --config "$C/bad.toml" --out "$R"
  rc_is 2 && has "$C/bad.toml: cannot read" && no_runs && pass
}
case_config_missing() { refused 2 "$C/missing.toml: cannot read" sweep --no-tui --config "$C/missing.toml" --out "$R"; }
case_config_is_a_folder() { refused 2 "$C: cannot read" sweep --no-tui --config "$C" --out "$R"; }
case_config_nested_100k_deep() {
  { printf 'a = '; head -c 100000 /dev/zero | tr '\0' '['; head -c 100000 /dev/zero | tr '\0' ']'; echo; } >"$C/deep.toml"
  run 20 sweep --no-tui --config "$C/deep.toml" --out "$R"
  rc_is 2 && has "$C/deep.toml" && no_panic && err_under 4096 && pass
}

# ---------------------------------------------------------------------------------------
# datasets and traces

# dataset_refused TEXT FILE [ARGS...]: a sweep on FILE is refused with exit 2, saying TEXT
dataset_refused() {
  local text=$1 file=$2
  shift 2
  run 30 sweep -e sim --sim-time-scale 50 -c 1 -n 2 --output-tokens 4 --dataset "$file" "$@" \
    --no-tui --out "$R"
  rc_is 2 && has "$text" && no_panic && no_runs && err_under 4096 && pass
}

case_mooncake_input_length_4e9() {
  printf '%s\n' '{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}' \
    '{"timestamp": 10, "input_length": 4000000000, "output_length": 10, "hash_ids": [1, 2]}' >"$C/m.jsonl"
  dataset_refused "$C/m.jsonl:2: \`input_length\` 4000000000: at most 1000000 tokens" "$C/m.jsonl"
}
case_mooncake_output_length_4e9() {
  echo '{"timestamp": 0, "input_length": 100, "output_length": 4000000000, "hash_ids": [1]}' >"$C/m.jsonl"
  dataset_refused "$C/m.jsonl:1: \`output_length\` 4000000000: at most 1000000 tokens" "$C/m.jsonl"
}
case_jsonl_text_over_the_token_cap() {
  # 1,100,000 words: past the 1,000,000 tokens --input-tokens and Mooncake records are held to
  { echo '{"text": "hi"}'; printf '{"text": "'; head -c 4400000 /dev/zero | tr '\0' a | sed 's/aaaa/aaa /g'; printf '"}\n'; } >"$C/t.jsonl"
  dataset_refused "$C/t.jsonl:2" "$C/t.jsonl"
}
case_jsonl_malformed_line() {
  printf '{"text": "hello"}\n{"text": \n{"text": "x"}\n' >"$C/bad.jsonl"
  dataset_refused "$C/bad.jsonl:2" "$C/bad.jsonl"
}
case_jsonl_50mb_unterminated_line() {
  { printf '{"text": "'; head -c 50000000 /dev/zero | tr '\0' a; echo; } >"$C/big.jsonl"
  dataset_refused "$C/big.jsonl:1" "$C/big.jsonl"
}
case_dataset_empty() {
  : >"$C/empty.jsonl"
  dataset_refused "$C/empty.jsonl: the dataset is empty" "$C/empty.jsonl"
}
case_dataset_missing() { dataset_refused "$C/nope.jsonl: cannot read the dataset: No such file or directory" "$C/nope.jsonl"; }
case_dataset_folder_of_junk() {
  mkdir -p "$C/junk"
  echo junk >"$C/junk/x.txt"
  dataset_refused "$C/junk: no .jsonl files under this folder" "$C/junk"
}
case_trace_negative_timestamp() {
  printf '%s\n' '{"timestamp": 5000, "input_length": 16, "output_length": 4, "hash_ids": [1]}' \
    '{"timestamp": -1000, "input_length": 16, "output_length": 4, "hash_ids": [2]}' >"$C/t.jsonl"
  refused 2 "$C/t.jsonl line 2: timestamp -1000 is not a time in ms" replay "$C/t.jsonl" -e sim --no-tui --out "$R"
}
case_trace_spanning_10000_years() {
  printf '%s\n' '{"timestamp": 0, "input_length": 16, "output_length": 4, "hash_ids": [1]}' \
    '{"timestamp": 315360000000000, "input_length": 16, "output_length": 4, "hash_ids": [2]}' >"$C/t.jsonl"
  refused 2 'a replay spans at most 365 days' replay "$C/t.jsonl" -e sim --no-tui --out "$R"
}
case_trace_without_timestamps() {
  echo '{"text": "hello"}' >"$C/t.jsonl"
  refused 2 "$C/t.jsonl line 1: no \`timestamp\`" traffic "$C/t.jsonl"
}
case_replay_speedup_zero() {
  trace_1k
  refused 2 '--speedup 0: must be above 0' replay "$TRACE" -e sim --speedup 0 --no-tui --out "$R"
}
case_replay_speedup_past_the_rate_bound() {
  # 1,000 records 10 ms apart at 1,000,000x: 100,000,000 req/s offered, past --rate's bound
  trace_1k
  refused 2 '1000000' replay "$TRACE" -e sim --sim-time-scale 50 --speedup 1000000 --no-tui --out "$R"
}

# ---------------------------------------------------------------------------------------
# run folders and imports

case_show_broken_run_json() {
  copy_fixture broken || return
  echo '{"tool": "rights' >"$COPY/run.json"
  refused 1 "$COPY/run.json" show "$COPY"
}
case_export_broken_run_json() {
  copy_fixture broken || return
  echo '{"tool": "rights' >"$COPY/run.json"
  refused 1 "$COPY/run.json" export "$COPY" --csv "$C/x.csv"
}
case_show_broken_level_file() {
  copy_fixture broken || return
  echo '[' >"$COPY/level-001-c0001.json"
  refused 1 "$COPY/level-001-c0001.json" show "$COPY"
}
case_show_without_summary() {
  copy_fixture nosummary || return
  rm "$COPY/summary.json"
  run 20 show "$COPY"
  rc_is 0 && no_panic && grep -q '^ *2 ' "$C/out" && pass
}
case_show_without_run_json() {
  copy_fixture norun || return
  rm "$COPY/run.json"
  run 20 show "$COPY"
  rc_is 0 && no_panic && grep -q '^ *2 ' "$C/out" && pass
}
case_show_a_folder_that_is_no_run() {
  mkdir -p "$C/nothing"
  refused 2 "$C/nothing" show "$C/nothing"
}
case_compare_with_a_missing_run() {
  fixture_run || return
  refused 2 "$C/nope" compare "$FIX" "$C/nope"
}
case_runs_lists_past_a_broken_folder() {
  fixture_run || return
  mkdir -p "$C/runs/junk" "$C/runs/empty"
  cp -r "$FIX" "$C/runs/"
  echo '{' >"$C/runs/junk/run.json"
  run 20 runs --runs-dir "$C/runs"
  rc_is 0 && no_panic || return
  grep -qF "$(basename "$FIX")" "$C/out" || {
    fail "the good run is not listed: $(head -c 300 "$C/out")"
    return
  }
  if grep -q '^junk .*unreadable' "$C/out"; then
    pass
  else
    fail "the broken folder is not listed as unreadable"
  fi
}
case_import_missing_file() { refused 2 "$C/nope.json: no such file or folder" import aiperf "$C/nope.json" --runs-dir "$R"; }
case_import_not_json() {
  echo '{' >"$C/bad.json"
  refused 2 "$C/bad.json: not JSON" import aiperf "$C/bad.json" --runs-dir "$R"
}
case_import_vllm_empty() {
  : >"$C/empty.json"
  refused 2 "$C/empty.json: empty" import vllm "$C/empty.json" --runs-dir "$R"
}
case_import_guidellm_not_json() {
  echo '{' >"$C/bad.json"
  refused 2 "$C/bad.json: not JSON" import guidellm "$C/bad.json" --runs-dir "$R"
}
case_import_70mb_file() {
  { printf '['; head -c 70000000 /dev/zero | tr '\0' ' '; printf ']'; } >"$C/huge.json"
  run 30 import aiperf "$C/huge.json" --runs-dir "$R"
  rc_is 2 && has "$C/huge.json" && err_under 4096 && no_runs && pass
}

# ---------------------------------------------------------------------------------------
# misbehaving servers

case_connection_refused() {
  local port
  port=$( (python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])') 2>/dev/null || echo 9)
  run 30 sweep -e "http://127.0.0.1:$port/v1" -m m -c 4 -n 8 --no-tui --out "$R"
  rc_is 1 && has "pre-flight failed" && has "refused" && no_runs && pass
}
case_silent_server_preflight_timeout() {
  server silent || return
  run 30 sweep -e "$SRV_URL" -m m -c 1 -n 1 --preflight-timeout 6s --no-tui --out "$R"
  rc_is 1 && has "pre-flight: waiting for $SRV_URL to answer (5 s so far; gives up after 6 s, --preflight-timeout)" &&
    has "$SRV_URL did not answer within 6000 ms" && no_runs && pass
}
case_garbage_server() {
  server garbage || return
  run 30 sweep -e "$SRV_URL" -m m -c 1 -n 2 --preflight-timeout 10s --no-tui --out "$R"
  rc_is 1 && has "pre-flight failed" && has "$SRV_URL" && no_runs && pass
}
case_wrong_model_said_once() {
  shared_sims || return
  run 30 sweep -e "$FAST_URL" -m no-such-model -c 1 -n 2 --no-tui --out "$R"
  rc_is 1 && no_runs || return
  local line cause
  line=$(grep -m1 '^error:' "$C/err")
  cause=${line#error: pre-flight failed: }
  [[ -n $cause && $(grep -cF -- "$cause" "$C/err") == 1 ]] || {
    fail "the cause is not said once: $(excerpt)"
    return
  }
  pass
}
case_http_500_always() {
  start_sim --time-scale 50 --fault-http500 1 || return
  run 30 sweep -e "$SIM_URL" "${TINY[@]}" -c 2 -n 8 --no-tui --out "$R"
  rc_is 1 && has "pre-flight failed" && has "HTTP 500" && no_runs && pass
}

# fault_run FLAG VALUE TYPE: a run against a simulator failing every third request that way
# ends within its bound, with exit 0, its errors of TYPE in the level file, and a summary
fault_run() {
  start_sim --time-scale 50 "$1" "$2" || return
  run 60 sweep -e "$SIM_URL" --input-tokens 16 --output-tokens 32 -c 2 -n 12 --timeout 2s \
    --no-tui --out "$R"
  rc_is 0 && no_panic && only_run && whole "$RUN" || return
  [[ -e $RUN/summary.json ]] || {
    fail "no summary.json"
    return
  }
  local errs
  errs=$(jv "$RUN/level-001-c0002.json" "[.error_summary[]?.error_details.type] | map(select(. == \"$3\")) | length")
  ((errs > 0)) || {
    fail "no $3 error in the level file"
    return
  }
  pass
}
case_fault_http500_every_3() { fault_run --fault-http500 every:3 http_status; }
case_fault_http429_every_3() { fault_run --fault-http429 every:3 http_status; }
case_fault_reset_every_3() { fault_run --fault-reset every:3 broken_stream; }
case_fault_stall_every_3() { fault_run --fault-stall every:3 timeout; }
case_fault_malformed_every_3() { fault_run --fault-malformed every:3 bad_payload; }
case_fault_in_stream_error_every_3() { fault_run --fault-in-stream-error every:3 in_stream_error; }

case_endpoint_dies_mid_run() {
  start_sim --time-scale 2 || return
  spawn "$C/out" "$C/err" "$B" sweep -e "$SIM_URL" --input-tokens 32 --output-tokens 64 \
    -c 4,2 -n 40 --no-tui --out "$R"
  local run=$LAST
  wait_until 30 seen_or_ended "$C/err" '^level 1:' "$LAST" || {
    fail "never started: $(excerpt)"
    return
  }
  sleep 1
  kill -KILL "$SIM_PID"
  { wait "$SIM_PID"; } 2>/dev/null
  wait_exit "$run" 30
  rc_is 0 1 && no_panic && only_run && whole "$RUN" || return
  [[ -e $RUN/summary.json ]] || {
    fail "no summary.json"
    return
  }
  is_json "$RUN/level-002-c0002.json" '.error_summary[0].error_details.type' connect && pass
}

# ---------------------------------------------------------------------------------------
# killed workers and controllers (local workers, docs/distributed.md)

# workers_mid_level: CTL a controller of two local workers mid-level, WORKERS their pids
workers_mid_level() {
  shared_sims || return 1
  spawn "$C/out" "$C/err" "$B" sweep -e "$SLOW_URL" --input-tokens 32 --output-tokens 64 \
    -c 8 -n 4000 --no-tui --workers 2 --worker-backend local --out "$R"
  CTL=$LAST
  wait_until 60 seen_or_ended "$C/err" '^level 1:' "$LAST" || {
    fail "the level never began: $(excerpt)"
    return 1
  }
  still_running "$CTL" || return 1
  mapfile -t WORKERS < <(pgrep -P "$CTL")
  PIDS+=("${WORKERS[@]}")
  [[ ${#WORKERS[@]} == 2 ]] || {
    fail "${#WORKERS[@]} worker processes, not 2"
    return 1
  }
}

case_sigkill_controller_leaves_no_worker() {
  workers_mid_level || return
  kill -KILL "$CTL"
  wait_exit "$CTL" 5
  if ! wait_until 2 none_alive "${WORKERS[@]}"; then
    fail "a worker still runs 2 s after its controller was SIGKILLed"
    return
  fi
  pass
}
case_sigkill_a_worker() {
  workers_mid_level || return
  kill -KILL "${WORKERS[1]}"
  wait_exit "$CTL" 30
  rc_is 1 && has "lost worker 1" && has "the run ended there" && only_run || return
  local lvl=$RUN/level-001-c0008.json
  is_json "$lvl" .partial true || return
  jv "$lvl" '.workers.shares[1].lost' | grep -q 'its process exited' || {
    fail "share 1 is not lost for its exit: $(jv "$lvl" '.workers.shares[1].lost')"
    return
  }
  wait_until 4 none_alive "${WORKERS[0]}" || {
    fail "worker 0 still runs after the run ended"
    return
  }
  pass
}
case_sigstop_a_worker() {
  workers_mid_level || return
  kill -STOP "${WORKERS[0]}"
  wait_exit "$CTL" 40
  rc_is 1 && only_run || return
  local lvl=$RUN/level-001-c0008.json
  is_json "$lvl" .partial true || return
  jv "$lvl" '.workers.shares[0].lost' | grep -q '^nothing heard from it for 5' || {
    fail "share 0 is not lost for silence: $(jv "$lvl" '.workers.shares[0].lost')"
    return
  }
  wait_until 5 none_alive "${WORKERS[0]}" || {
    fail "the frozen worker still exists after the run ended"
    return
  }
  pass
}
controller_signal() {
  local sig=$1
  workers_mid_level || return
  kill -"$sig" "$CTL"
  wait_exit "$CTL" 20
  rc_is "$(code_of "$sig")" && only_run || return
  is_json "$RUN/level-001-c0008.json" .partial true || return
  wait_until 4 none_alive "${WORKERS[@]}" || {
    fail "a worker still runs 4 s after the controller ended"
    return
  }
  interrupted_files && pass
}
case_sigint_controller() { controller_signal INT; }
case_sigterm_controller() { controller_signal TERM; }

# external_controller: CTL a controller waiting for 2 external workers, CTL_URL its address
external_controller() {
  shared_sims || return 1
  RIGHTSIZE_WORKER_TOKEN=probe-token-4f9c2a1b spawn "$C/out" "$C/err" "$B" sweep -e "$FAST_URL" \
    "${TINY[@]}" -c 2 -n 8 --no-tui --workers 2 --worker-backend external \
    --controller-listen 127.0.0.1:0 --out "$R"
  CTL=$LAST
  wait_until 20 seen_or_ended "$C/err" '^controller on 127\.0\.0\.1:[0-9]+:' "$LAST" || {
    fail "the controller never listened: $(excerpt)"
    return 1
  }
  still_running "$CTL" || return 1
  CTL_URL=http://127.0.0.1:$(sed -n 's/^controller on 127\.0\.0\.1:\([0-9]*\):.*/\1/p' "$C/err")
}
case_external_workers_never_come() {
  external_controller || return
  sleep 1
  kill -TERM "$CTL"
  wait_exit "$CTL" 10
  rc_is 143 && has "interrupted before any load was sent" && pass
}
case_worker_with_a_wrong_token() {
  external_controller || return
  RIGHTSIZE_WORKER_TOKEN=wrong timeout -k 3 20 "$B" worker --controller "$CTL_URL" \
    --connect-timeout 5s >"$C/wout" 2>"$C/werr" </dev/null
  local wrc=$?
  kill -TERM "$CTL"
  wait_exit "$CTL" 10
  RC=$wrc
  cp "$C/werr" "$C/err"
  rc_is 1 && has "the controller refused this worker's token" && pass
}
case_worker_without_a_controller() {
  RIGHTSIZE_WORKER_TOKEN=x run 20 worker --controller http://127.0.0.1:9 --connect-timeout 2s
  rc_is 1 && has "cannot reach the controller at http://127.0.0.1:9 for 2 s" && pass
}
case_worker_without_a_token() {
  refused 2 "RIGHTSIZE_WORKER_TOKEN is not set" worker --controller http://127.0.0.1:9
}

# ---------------------------------------------------------------------------------------
# the dashboard in a terminal that goes away (tmux on our own socket, $WORK/tmux.sock)

# dashboard NAME: a dashboard sweep in tmux session NAME (level 1 about 3 s, level 2 about
# 7 s), seen in its second level; DASH its process. With the terminal closed, its shell's
# `echo $?` never runs; otherwise $C/exit gets the exit code.
dashboard() {
  need_tool tmux || return 1
  local cmd
  cmd=$(printf '%q ' "$B" sweep -e sim --sim-time-scale 2 --input-tokens 128 \
    --output-tokens 128 -c 16,4 -n 32 --out "$R")
  printf '%s\necho $? > %q\n' "$cmd" "$C/exit" >"$C/dash.sh"
  tmux -S "$SOCK" new-session -d -s "$1" -x 100 -y 30 "sh $C/dash.sh" || {
    fail "tmux could not start a session"
    return 1
  }
  SESSIONS+=("$1")
  local pane
  pane=$(tmux -S "$SOCK" display -p -t "$1" '#{pane_pid}')
  wait_until 10 pgrep -P "$pane" >/dev/null || {
    fail "the dashboard did not start"
    return 1
  }
  DASH=$(pgrep -P "$pane" | head -1)
  PIDS+=("$DASH")
  wait_until 60 file_there "$R/*/level-001-c0016.json" || {
    fail "the dashboard never finished level 1"
    return 1
  }
}
dashboard_kept() { # level 1 whole, level 2 cut, run.json and summary.json interrupted
  only_run || return 1
  [[ -e $RUN/summary.json ]] || {
    fail "no summary.json"
    return 1
  }
  is_json "$RUN/level-001-c0016.json" .partial false && is_json "$RUN/level-002-c0004.json" .partial true &&
    interrupted_files && whole "$RUN"
}
case_closed_terminal_keeps_the_run() {
  dashboard closed || return
  tmux -S "$SOCK" kill-session -t closed
  wait_until 30 file_there "$R/*/summary.json"
  wait_until 10 none_alive "$DASH" || {
    fail "the dashboard still runs 10 s after its terminal closed"
    return
  }
  dashboard_kept && pass
}
dashboard_signal() {
  local sig=$1
  dashboard "sig$sig" || return
  kill -"$sig" "$DASH"
  wait_until 20 test -s "$C/exit" || {
    fail "the dashboard did not end 20 s after SIG$sig"
    return
  }
  RC=$(cat "$C/exit")
  rc_is "$(code_of "$sig")" && dashboard_kept && pass
}
case_dashboard_sighup() { dashboard_signal HUP; }
case_dashboard_sigterm() { dashboard_signal TERM; }
case_dashboard_sigint() { dashboard_signal INT; }

# ---------------------------------------------------------------------------------------
# runs in which every request failed (prompts longer than the server's context): exit 1

all_fail_sim() { start_sim --time-scale 50 --max-model-len 64; }

case_every_request_failed_sweep() {
  all_fail_sim || return
  run 60 sweep -e "$SIM_URL" --input-tokens 128 --output-tokens 4 -c 2 -n 8 --no-tui --out "$R"
  rc_is 1 && has "every request failed: 8 of 8 (http_status 8)" && only_run && whole "$RUN" && pass
}
case_every_request_failed_open_loop() {
  all_fail_sim || return
  run 60 sweep -e "$SIM_URL" --input-tokens 128 --output-tokens 4 --rate 50 -n 20 --no-tui --out "$R"
  rc_is 1 && has "every request failed: 20 of 20" && pass
}
case_every_request_failed_search() {
  all_fail_sim || return
  run 60 search -e "$SIM_URL" --input-tokens 128 --output-tokens 4 --e2e-sla 1s --min 1 \
    --max 8 --max-requests-per-level 64 --no-tui --out "$R"
  rc_is 1 && has "every request failed" && pass
}
# dashboard_then_q NAME ARGS...: `rightsize ARGS` in tmux session NAME until its run has ended
# (the status line says finished or failed), then q; RC the exit code
dashboard_then_q() {
  local name=$1
  shift
  need_tool tmux || return 1
  local cmd
  cmd=$(printf '%q ' "$B" "$@")
  printf '%s\necho $? > %q\n' "$cmd" "$C/exit" >"$C/dash.sh"
  tmux -S "$SOCK" new-session -d -s "$name" -x 100 -y 30 "sh $C/dash.sh" || {
    fail "tmux could not start a session"
    return 1
  }
  SESSIONS+=("$name")
  wait_until 60 pane_says "$name" '^(finished|run failed)' || {
    fail "the run never ended: $(tmux -S "$SOCK" capture-pane -p -t "$name" | tail -1)"
    return 1
  }
  tmux -S "$SOCK" send-keys -t "$name" q
  wait_until 10 test -s "$C/exit" || {
    fail "the dashboard did not quit on q"
    return 1
  }
  RC=$(cat "$C/exit")
}
pane_says() { tmux -S "$SOCK" capture-pane -p -t "$1" 2>/dev/null | grep -Eq -- "$2"; }

case_every_request_failed_dashboard() {
  all_fail_sim || return
  dashboard_then_q allfail sweep -e "$SIM_URL" --input-tokens 128 --output-tokens 4 -c 2 -n 8 \
    --out "$R" || return
  rc_is 1 && pass
}
case_dashboard_failed_write() {
  small_disk 96k || return
  dashboard_then_q fulldisk sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c "$LONG_LEVELS" \
    -n 400 --out "$MNT" || return
  rc_is 1 && pass
}
case_dashboard_failed_gate() {
  dashboard_then_q gate sweep -e sim --sim-time-scale 50 "${TINY[@]}" -c 1,2 -n 8 --out "$R" \
    --require-concurrency 1000 || return
  rc_is 3 && pass
}

# ---------------------------------------------------------------------------------------
# k8s render: a secret in the command is refused (it would be in the Job's args)

K8S_TOKEN=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0
# k8s_refused TEXT SECRET COMMAND...: refused with exit 2, TEXT said, SECRET nowhere
k8s_refused() {
  local text=$1 secret=$2
  shift 2
  RIGHTSIZE_WORKER_TOKEN=$K8S_TOKEN run 20 k8s render --workers 4 --name r1 --image x -- "$@"
  if grep -qF -- "$secret" "$C/out" "$C/err"; then
    fail "\`$secret\` is printed (exit $RC)"
    return
  fi
  rc_is 2 && has "$text" && has "--env-from-secret" && pass
}
case_k8s_url_password() { k8s_refused 'a URL with a password or token in it (`http://alice:***@h:8000/v1`)' PW9x sweep --endpoint http://alice:PW9x@h:8000/v1; }
case_k8s_url_password_attached_short_flag() { k8s_refused 'a URL with a password or token in it' PW9x sweep -ehttp://alice:PW9x@h:8000/v1; }
case_k8s_url_api_key_query() { k8s_refused 'a URL with a password or token in it' K1x9 sweep --endpoint=http://h:8000/v1?api_key=K1x9; }
case_k8s_authorization_header() { k8s_refused 'sends a `Authorization` header' 'Bearer T9x' sweep --endpoint http://h/v1 --header 'Authorization: Bearer T9x'; }
case_k8s_lowercase_authorization() { k8s_refused 'sends a `authorization` header' Zm9vOmJhcg sweep --endpoint http://h/v1 --header 'authorization: Basic Zm9vOmJhcg=='; }
case_k8s_api_key_header() { k8s_refused 'sends a `X-Api-Key` header' K2x9 sweep --endpoint http://h/v1 --header 'X-Api-Key: K2x9'; }
case_k8s_cookie_header() { k8s_refused 'sends a `Cookie` header' s3ss sweep --endpoint http://h/v1 --header 'Cookie: session=s3ss'; }
case_k8s_search_url_password() { k8s_refused 'a URL with a password or token in it' pw7q search --e2e-sla 1s --endpoint http://bob:pw7q@h/v1; }
case_k8s_plain_header_goes_through() {
  RIGHTSIZE_WORKER_TOKEN=$K8S_TOKEN run 20 k8s render --workers 4 --name r1 --image x -- \
    sweep --endpoint http://h/v1 --header 'X-Trace: 1'
  rc_is 0 || return
  if grep -qF 'X-Trace: 1' "$C/out"; then
    pass
  else
    fail "the header is not in the Job"
  fi
}
case_k8s_api_key_env_goes_through() {
  RIGHTSIZE_WORKER_TOKEN=$K8S_TOKEN MY_PROBE_KEY=sk-probe-secret run 20 k8s render --workers 4 \
    --name r1 --image x -- sweep --endpoint http://h/v1 --api-key-env MY_PROBE_KEY
  rc_is 0 || return
  if grep -qF sk-probe-secret "$C/out" "$C/err"; then
    fail "the key's value is printed"
  else
    if grep -qF MY_PROBE_KEY "$C/out"; then
      pass
    else
      fail "the variable's name is not in the Job"
    fi
  fi
}
case_k8s_workers_100001() { refused 2 'at most 100000' k8s render --name r --image x --workers 100001; }

# ---------------------------------------------------------------------------------------
# the table: group, function, what it tries

CASES=(
  "disks|case_full_disk|a disk that fills mid-run (96 KiB tmpfs): exit 1 naming the file, files whole, summary kept"
  "disks|case_full_disk_then_sigint|a full disk (8 KiB left) then SIGINT: exit 1 naming the write, not 'before any load'"
  "disks|case_full_disk_from_the_start|a disk full before the run: exit 1 naming the file, no load"
  "disks|case_read_only_folder_mid_run|the run folder made 555 mid-run: exit 1 naming it, files whole, summary kept elsewhere"
  "disks|case_read_only_folder_then_sigint|the run folder made 555, then SIGINT: exit 1 naming the level file"
  "disks|case_out_on_a_read_only_filesystem|--out on a read-only tmpfs: exit 1 naming it, no load"
  "disks|case_out_is_a_file|--out is a file: exit 1 naming it"
  "disks|case_export_to_a_full_disk_leaves_no_half_file|export --html to a full disk: exit 1 naming it, no half file left"
  "signals|signal_before_preflight INT|SIGINT before pre-flight (reading a dataset): 130, no run folder"
  "signals|signal_before_preflight TERM|SIGTERM before pre-flight: 143, no run folder"
  "signals|signal_before_preflight HUP|SIGHUP before pre-flight: 129, no run folder"
  "signals|signal_during_preflight INT|SIGINT during pre-flight (a silent server): 130 at once, no run folder"
  "signals|signal_during_preflight TERM|SIGTERM during pre-flight: 143 at once, no run folder"
  "signals|signal_during_preflight HUP|SIGHUP during pre-flight: 129 at once, no run folder"
  "signals|signal_mid_level INT|SIGINT mid-level: 130, level 1 kept, level 2 partial, interrupted"
  "signals|signal_mid_level TERM|SIGTERM mid-level: 143, level 1 kept, level 2 partial, interrupted"
  "signals|signal_mid_level HUP|SIGHUP mid-level: 129, level 1 kept, level 2 partial, interrupted"
  "signals|signal_between_levels INT|SIGINT as level 1 is written: 130, level 1 whole, interrupted"
  "signals|signal_between_levels TERM|SIGTERM as level 1 is written: 143, level 1 whole, interrupted"
  "signals|signal_between_levels HUP|SIGHUP as level 1 is written: 129, level 1 whole, interrupted"
  "signals|signal_during_write INT|SIGINT as the results are written: files whole, interrupted iff exit 130"
  "signals|signal_during_write TERM|SIGTERM as the results are written: files whole, interrupted iff exit 143"
  "signals|signal_during_write HUP|SIGHUP as the results are written: files whole, interrupted iff exit 129"
  "signals|case_signals_in_a_burst|SIGINT, then SIGINT and SIGTERM 0.1 s later: 130, files whole"
  "signals|case_huge_n_starts_at_once_and_stops|-n 1000000 starts at once and stops at SIGINT: 130, partial"
  "signals|case_sigterm_mid_replay|SIGTERM mid-replay: 143, the replay level partial"
  "signals|case_sigint_mid_search|SIGINT mid-search: 130, interrupted"
  "flags|case_rate_1e20|--rate 1e20 refused"
  "flags|case_rate_nan|--rate NaN refused"
  "flags|case_rate_inf|--rate inf refused"
  "flags|case_rate_negative|--rate=-5 refused"
  "flags|case_rate_empty|--rate '' refused"
  "flags|case_rates_1e20|--rates 1,1e20 refused"
  "flags|case_schedule_ramp_1e20|--schedule ramp:0-1e20rps@10s refused"
  "flags|case_schedule_steps_1e20|--schedule steps:1e20@10s refused"
  "flags|case_schedule_ramp_1e7|--schedule ramp:0-1e7rps@10s refused"
  "flags|case_schedule_30M_requests|--schedule ramp:0-1000000rps@60s (30M requests) refused"
  "flags|case_rate_for_an_hour|--rate 1000000 --level-duration 1h refused"
  "flags|case_workers_100000|--workers 100000 refused before any is started"
  "flags|case_workers_0|--workers 0 refused"
  "flags|case_workers_above_concurrency|--workers 8 for -c 2,4 refused"
  "flags|case_n_4e9|-n 4000000000 refused"
  "flags|case_n_negative|-n=-1 refused"
  "flags|case_n_zero|-n 0 refused"
  "flags|case_n_empty|-n '' refused"
  "flags|case_n_float|-n 1e3 refused"
  "flags|case_c_1e8|-c 100000000 refused naming the open-file limit"
  "flags|case_c_repeated|-c 4,4,2 refused"
  "flags|case_c_empty|-c '' refused"
  "flags|case_c_negative|--concurrency=-4 refused"
  "flags|case_timeout_8761h|--timeout 8761h refused"
  "flags|case_timeout_zero|--timeout 0 refused"
  "flags|case_timeout_negative|--timeout=-1s refused"
  "flags|case_timeout_nan|--timeout NaNs refused"
  "flags|case_input_tokens_1000001|--input-tokens 1000001 refused"
  "flags|case_output_tokens_1000001|--output-tokens 1000001 refused"
  "flags|case_input_tokens_negative|--input-tokens=-1 refused"
  "flags|case_turns_1001|--turns 1001 refused"
  "flags|case_turns_0|--turns 0 refused"
  "flags|case_warmup_1000001|--warmup 1000001 refused"
  "flags|case_prefix_share_nan|--prefix-share NaN refused"
  "flags|case_max_error_rate_2|--max-error-rate 2 refused"
  "flags|case_headroom_negative|--headroom=-20% refused"
  "flags|case_level_duration_zero|--level-duration 0s refused"
  "flags|case_window_zero|--window 0s refused"
  "flags|case_burstiness_nan|--burstiness NaN refused"
  "flags|case_max_in_flight_zero|--max-in-flight 0 refused"
  "flags|case_think_time_8761h|--think-time 8761h refused"
  "flags|case_seed_too_big|--seed 99999999999999999999999 refused"
  "flags|case_sim_time_scale_zero|--sim-time-scale 0 refused"
  "flags|case_sim_time_scale_nan|--sim-time-scale NaN refused"
  "flags|case_sim_time_scale_1e300|--sim-time-scale 1e300 refused (it is a rate multiplier)"
  "flags|case_price_nan|--price-per-hour NaN refused"
  "flags|case_peak_rps_nan|--peak-rps NaN refused"
  "flags|case_endpoint_ftp|--endpoint ftp://... refused"
  "flags|case_endpoint_bad_port|--endpoint with port 99999 refused"
  "flags|case_header_crlf|a header with CR LF in its value refused"
  "flags|case_search_requests_1000001|search --max-requests-per-level 1000001 refused"
  "flags|case_search_error_sla_2|search --error-rate-sla 2 refused"
  "flags|case_export_size_8001|export --size 8001x900 refused"
  "flags|case_sim_time_scale_zero_server|sim --time-scale 0 refused"
  "flags|case_sim_port_99999|sim --port 99999 refused"
  "flags|case_sim_fault_probability_2|sim --fault-http500 2 refused"
  "flags|case_worker_connect_timeout_8761h|worker --connect-timeout 8761h refused"
  "flags|case_concurrency_8000_runs|-c 8000 -n 8000 against a simulator: exit 0, the level whole"
  "configs|case_config_50mb_one_line|a 50 MB one-line config: exit 2, a bounded excerpt"
  "configs|case_config_50mb_value|a 50 MB value of a duration key: exit 2, bounded error text"
  "configs|case_config_unknown_key|an unknown key: exit 2 naming it"
  "configs|case_config_wrong_type|a string for a number: exit 2 naming line and column"
  "configs|case_config_zero_level|concurrency = [8, 0]: exit 2"
  "configs|case_config_request_count_4e9|request_count = 4000000000: exit 2 naming the key"
  "configs|case_config_input_tokens_1e8|input_tokens = 100000000: exit 2"
  "configs|case_config_timeout_zero|timeout = \"0s\": exit 2"
  "configs|case_config_timeout_huge|timeout = \"99999999999h\": exit 2"
  "configs|case_config_no_levels|concurrency = []: exit 2"
  "configs|case_config_bad_url|an endpoint url with an empty host: exit 2"
  "configs|case_config_not_utf8|a config that is not UTF-8: exit 2"
  "configs|case_config_missing|a missing config: exit 2"
  "configs|case_config_is_a_folder|a folder for --config: exit 2"
  "configs|case_config_nested_100k_deep|100,000 nested arrays: exit 2, no crash"
  "datasets|case_mooncake_input_length_4e9|Mooncake input_length 4000000000: exit 2 naming file and line"
  "datasets|case_mooncake_output_length_4e9|Mooncake output_length 4000000000: exit 2 naming file and line"
  "datasets|case_jsonl_text_over_the_token_cap|a JSONL text of 1,100,000 tokens: exit 2 naming file and line"
  "datasets|case_jsonl_malformed_line|a malformed JSONL line: exit 2 naming file and line"
  "datasets|case_jsonl_50mb_unterminated_line|a 50 MB unterminated line: exit 2, bounded message"
  "datasets|case_dataset_empty|an empty dataset: exit 2"
  "datasets|case_dataset_missing|a missing dataset: exit 2 naming the OS error"
  "datasets|case_dataset_folder_of_junk|a folder with no .jsonl: exit 2"
  "datasets|case_trace_negative_timestamp|a trace with a negative timestamp: exit 2 naming the line"
  "datasets|case_trace_spanning_10000_years|a trace spanning 10,000 years: exit 2"
  "datasets|case_trace_without_timestamps|traffic on records without timestamps: exit 2"
  "datasets|case_replay_speedup_zero|replay --speedup 0: exit 2"
  "datasets|case_replay_speedup_past_the_rate_bound|replay --speedup offering 1e8 req/s: refused as --rate is"
  "runs|case_show_broken_run_json|show a run with a truncated run.json: exit 1 naming it"
  "runs|case_export_broken_run_json|export a run with a truncated run.json: exit 1 naming it"
  "runs|case_show_broken_level_file|show a run with a broken level file: exit 1 naming it"
  "runs|case_show_without_summary|show a run without summary.json: its levels"
  "runs|case_show_without_run_json|show a run without run.json: its levels"
  "runs|case_show_a_folder_that_is_no_run|show a folder that is no run: exit 2 naming it"
  "runs|case_compare_with_a_missing_run|compare with a missing run: exit 2 naming it"
  "runs|case_runs_lists_past_a_broken_folder|runs lists the good runs past a broken folder"
  "runs|case_import_missing_file|import a missing file: exit 2"
  "runs|case_import_not_json|import aiperf of a broken file: exit 2"
  "runs|case_import_vllm_empty|import vllm of an empty file: exit 2"
  "runs|case_import_guidellm_not_json|import guidellm of a broken file: exit 2"
  "runs|case_import_70mb_file|import a 70 MB file: exit 2, bounded"
  "servers|case_connection_refused|nothing listening: exit 1 at pre-flight, no run folder"
  "servers|case_silent_server_preflight_timeout|a server that never answers: said after 5 s, exit 1 at --preflight-timeout"
  "servers|case_garbage_server|a server answering garbage: exit 1 at pre-flight"
  "servers|case_wrong_model_said_once|an unknown model: exit 1, the cause said once"
  "servers|case_http_500_always|every answer HTTP 500: exit 1 at pre-flight"
  "servers|case_fault_http500_every_3|HTTP 500 every 3rd request: the run ends, errors recorded"
  "servers|case_fault_http429_every_3|HTTP 429 every 3rd request: the run ends, errors recorded"
  "servers|case_fault_reset_every_3|a reset every 3rd request: the run ends, errors recorded"
  "servers|case_fault_stall_every_3|a stall every 3rd request (--timeout 2s): the run ends, timeouts recorded"
  "servers|case_fault_malformed_every_3|a malformed event every 3rd request: the run ends, errors recorded"
  "servers|case_fault_in_stream_error_every_3|an in-stream error every 3rd request: the run ends, errors recorded"
  "servers|case_endpoint_dies_mid_run|the endpoint killed mid-run: the run ends, connect errors recorded"
  "workers|case_sigkill_controller_leaves_no_worker|SIGKILL the controller: no local worker after 2 s"
  "workers|case_sigkill_a_worker|SIGKILL a worker: exit 1, the level partial, the worker named"
  "workers|case_sigstop_a_worker|SIGSTOP a worker: exit 1, lost for silence, killed"
  "workers|case_sigint_controller|SIGINT the controller: 130, no worker left"
  "workers|case_sigterm_controller|SIGTERM the controller: 143, no worker left"
  "workers|case_external_workers_never_come|external workers that never come, then SIGTERM: 143, no load"
  "workers|case_worker_with_a_wrong_token|a worker with a wrong token: exit 1, told why"
  "workers|case_worker_without_a_controller|a worker with no controller: exit 1 at --connect-timeout"
  "workers|case_worker_without_a_token|a worker without a token: exit 2"
  "terminal|case_closed_terminal_keeps_the_run|tmux kill-session on a dashboard sweep: summary, level 2 partial, interrupted, gone"
  "terminal|case_dashboard_sighup|SIGHUP to a dashboard sweep: 129, level 2 partial, interrupted"
  "terminal|case_dashboard_sigterm|SIGTERM to a dashboard sweep: 143, level 2 partial, interrupted"
  "terminal|case_dashboard_sigint|SIGINT to a dashboard sweep: 130, level 2 partial, interrupted"
  "terminal|case_dashboard_failed_write|a disk that fills under the dashboard, then q: exit 1"
  "terminal|case_dashboard_failed_gate|a failed --require-concurrency gate in the dashboard, then q: exit 3"
  "all-failed|case_every_request_failed_sweep|every request failed (sweep): exit 1 with the error summary"
  "all-failed|case_every_request_failed_open_loop|every request failed (--rate): exit 1"
  "all-failed|case_every_request_failed_search|every request failed (search): exit 1"
  "all-failed|case_every_request_failed_dashboard|every request failed (dashboard, then q): exit 1"
  "k8s|case_k8s_url_password|k8s render: a URL password refused, not printed"
  "k8s|case_k8s_url_password_attached_short_flag|k8s render: -eURL with a password refused, not printed"
  "k8s|case_k8s_url_api_key_query|k8s render: ?api_key= in the URL refused"
  "k8s|case_k8s_authorization_header|k8s render: an Authorization header refused"
  "k8s|case_k8s_lowercase_authorization|k8s render: an authorization header (lower case) refused"
  "k8s|case_k8s_api_key_header|k8s render: an X-Api-Key header refused"
  "k8s|case_k8s_cookie_header|k8s render: a Cookie header refused"
  "k8s|case_k8s_search_url_password|k8s render: a search's URL password refused"
  "k8s|case_k8s_plain_header_goes_through|k8s render: a plain header goes through"
  "k8s|case_k8s_api_key_env_goes_through|k8s render: --api-key-env goes through without the value"
  "k8s|case_k8s_workers_100001|k8s render --workers 100001 refused"
)

held=0 failed=0 skipped=0 total=0
FAILED=()
start=$SECONDS
for entry in "${CASES[@]}"; do
  IFS='|' read -r group fn name <<<"$entry"
  if [[ -n $FILTER ]] && ! [[ "$group $fn $name" =~ $FILTER ]]; then
    continue
  fi
  total=$((total + 1))
  C=$WORK/cases/$total
  R=$C/runs
  mkdir -p "$C"
  V="" WHY="" RC="" RUN="" KEPT=""
  read -r -a call <<<"$fn"
  "${call[@]}"
  [[ -n $V ]] || fail "the case decided nothing (a defect in the probe)"
  kill_tracked
  case $V in
    PASS) held=$((held + 1)) ;;
    FAIL)
      failed=$((failed + 1))
      FAILED+=("[$group] $name")
      ;;
    SKIP) skipped=$((skipped + 1)) ;;
  esac
  printf '%-4s %-11s %s%s\n' "$V" "[$group]" "$name" "${WHY:+ -- $WHY}"
  rm -rf "$C"
done

echo
echo "held $held of $total, $skipped skipped ($((SECONDS - start)) s)"
if ((failed > 0)); then
  echo "failed:"
  printf '  %s\n' "${FAILED[@]}"
  exit 1
fi
exit 0
