#!/bin/sh
# shellcheck disable=SC2016,SC2034
# (the reasons and conditions given to `check` are single-quoted on purpose: eval expands
# them when the check runs, so variables they name look unused to shellcheck)
# Fault injection for `scavenger run` (the loop), on a small job:
#   1. SIGKILL of the coordinator during the warm-up, then (resumed) the search, then the
#      training: no process of the run survives it, the store is intact (PRAGMA
#      integrity_check), `run --resume` goes on and reaches the target, and the store lists
#      a step of each killed phase;
#   2. the same with SIGTERM (exit 130, "interrupted"), and SIGKILL of worker rank 1 during
#      a K=2 training segment (the run retries and still reaches the target); SIGTERM of
#      rank 1 during the training, SIGKILL of rank 1 during the warm-up and during a K=2
#      search segment: the run retries and reaches the target or fails with a message;
#   3. a full disk (a small tmpfs) as the --db directory, as the --report directory, as the
#      store's own disk alone (its end still stored, with the reason), and as the run's
#      state directory (PATH.runs/: metrics, checkpoint) filled during the training: the run
#      stops at once, no retry, and resumes once there is space;
#   4. a read-only --report directory (a read-only tmpfs: root ignores file modes): both report
#      directories refused before any training (issue 38, 8);
#   5. three concurrent runs on one store.
# Every failure must be a non-zero exit with a message naming the file, never a silent 0.
# Every scenario has its own mktemp -d directory and --db, and finds its processes only by
# that unique path. The mounts need root (those checks are skipped otherwise).
# Uses $SCV_BIN (default build/scavenger); SCV_FAULTS_KEEP=1 keeps the temp directory;
# SCV_FAULTS_DRIVER=NAME starts every run with --driver NAME (default: run's own default);
# SCV_FAULTS_ONLY=WORDS runs only the scenarios whose call holds WORDS (e.g. "probe").
# 2b. SIGTERM of the coordinator during the relaunch/elastic probe, and its job paused before
#     its first metrics line (the watchdog): never a run left `running`.
# 2c. an external trainer (--exec) that leaves processes running (a background child, a
#     double-forked one, one in a session of its own ignoring SIGTERM): SIGKILL and SIGTERM
#     of the coordinator during its training leave none of them.
# Prints "ok N - name" / "not ok N - name: why" and "N passed, N failed" last; exits
# non-zero on a failure. About 115 s on 2 busy cores.
set -u
SCV=${SCV_BIN:-build/scavenger}
case "$SCV" in /*) ;; *) SCV=$(pwd)/$SCV ;; esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# a run takes a few seconds; the slow one (about 12 s) evaluates the whole test set about
# every iteration so that every phase lasts long enough to be interrupted in (a training
# iteration alone takes 0.1 ms): warm-up 0.4 s, search segments 0.2-0.4 s, training 2 s
DRV=${SCV_FAULTS_DRIVER:+--driver $SCV_FAULTS_DRIVER}
JOB="$DRV --model mlp --hidden 32 --dataset synthetic:4000 --lr 0.003 --target-accuracy 0.96 --workers 1,2 --batch 32,128"
SLOW="$DRV --model mlp --hidden 32 --dataset synthetic:20000 --lr 0.003 --target-accuracy 0.99 --workers 1,2 --batch 32,128
      --search-budget 0 --eval-subset 0 --search-eval-every-epochs 0.001 --eval-every-epochs 0.002"

n=0 passed=0 failed=0
ok()     { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1: $2"; }
# check NAME WHY CONDITION...: runs the condition (a command); WHY is expanded (eval) only
# after a failure, so it can name what the condition found
check() {
    c_name=$1 c_why=$2; shift 2
    if "$@"; then ok "$c_name"; else eval "c_why=\"$c_why\""; not_ok "$c_name" "$c_why"; fi
}

TOP=$(mktemp -d /tmp/scv-faults.XXXXXX) || exit 1
MOUNTS=""
cleanup() {
    # this script's processes only: those whose command line names its directory
    for p in $(pgrep -f -- "$TOP/" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    for m in $MOUNTS; do umount -l "$m" 2>/dev/null; done
    if [ -n "${SCV_FAULTS_KEEP:-}" ]; then echo "# kept $TOP"; else rm -rf "$TOP"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- helpers ----
# live (not zombie) process
alive() { [ -r "/proc/$1/stat" ] && ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z'; }
# pids of live processes whose command line names $1 (a unique directory)
procs_of() {
    for p in $(pgrep -f -- "$1" 2>/dev/null); do alive "$p" && echo "$p"; done
}
# "pid:starttime" of every descendant of $1 (to tell a survivor from a reused pid)
descendants() {
    ps -e -o pid=,ppid= | awk -v root="$1" '{ par[$1] = $2 } END {
        for (p in par) { q = p; while (q in par && q != root && q > 1) q = par[q]; if (q == root && p != root) print p }
    }' | while read -r p; do
        st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $20 }')
        [ -n "$st" ] && echo "$p:$st"
    done
}
# the descendants recorded by `descendants` that are still alive
survivors() {
    for e in $1; do
        p=${e%%:*} st=${e#*:}
        now=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{ print $20 }')
        [ "$now" = "$st" ] && alive "$p" && echo "$p"
    done
}
# no_orphans DIR SNAPSHOT: within 15 s neither a process naming DIR nor a recorded
# descendant is alive
no_orphans() {
    no_i=0
    while [ $no_i -lt 150 ]; do
        left="$(procs_of "$1") $(survivors "$2")"
        # shellcheck disable=SC2086,SC2116
        [ -z "$(echo $left)" ] && return 0
        sleep 0.1; no_i=$((no_i + 1))
    done
    # each with its parent and age (which segment left it)
    orphans=$(for p in $left; do printf '%s ' "$p:$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-60)" \
        "(parent $(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' '), $(ps -o etimes= -p "$p" 2>/dev/null | tr -d ' ') s old)"; done)
    for p in $left; do kill -9 "$p" 2>/dev/null; done   # ours: they name our directory
    return 1
}
# wait_exit PID SECONDS: waits for a background child, kills it after SECONDS; sets rc, and
# hung=1 when it had to be killed
wait_exit() {
    we_i=0 hung=0
    while alive "$1"; do
        sleep 0.1; we_i=$((we_i + 1))
        if [ $we_i -ge $(($2 * 10)) ]; then kill -9 "$1" 2>/dev/null; hung=1; break; fi
    done
    wait "$1"; rc=$?
}
# wait_phase RUNDIR PHASE ITERS SECONDS: until a seg-*-PHASE-* metrics file has ITERS iterations
# (the built-in trainer's lines, or an external one's as json.dumps writes them)
wait_phase() {
    wp_i=0
    while [ $wp_i -lt $(($4 * 20)) ]; do
        for f in "$1"/seg-*-"$2"-*.jsonl; do
            [ -f "$f" ] && [ "$(grep -c '"type": *"iter"' "$f" 2>/dev/null)" -ge "$3" ] && return 0
        done
        sleep 0.05; wp_i=$((wp_i + 1))
    done
    return 1
}
# integrity DB: PRAGMA integrity_check says ok and `scavenger runs` reads the store
integrity() {
    "$SCV" runs --db "$1" >/dev/null 2>&1 || { why="scavenger runs --db failed"; return 1; }
    command -v sqlite3 >/dev/null 2>&1 || return 0
    r=$(sqlite3 "$1" 'PRAGMA integrity_check;' 2>&1)
    [ "$r" = ok ] || { why="integrity_check: $r"; return 1; }
}
has() { grep -q -- "$2" "$1" 2>/dev/null; }
tailof() { tail -n 3 "$1" 2>/dev/null | tr '\n' ' ' | cut -c1-300; }
# ---- 1, 2: signals to the coordinator at each phase ----
# One run per signal, interrupted in each phase in turn: the warm-up of the first start,
# the search of its first --resume, the training of the second, then a last --resume must
# reach the target (one run's time instead of three). After each signal: the exit status, no
# process of the run left, the store intact.
# coordinator SIG: $d is the scenario's directory
coordinator() {
    sig=$1
    d=$(mktemp -d "$TOP/c-$1.XXXXXX")
    k=0
    for phase in warmup search train; do
        k=$((k + 1))
        name="SIG$sig of the coordinator during the $phase"
        if [ $k -eq 1 ]; then
            # shellcheck disable=SC2086
            "$SCV" run --db "$d/r.db" $SLOW >"$d/run$k.log" 2>&1 &
        else
            "$SCV" run --resume 1 --db "$d/r.db" >"$d/run$k.log" 2>&1 &
        fi
        pid=$!
        iters=10; [ "$phase" = train ] && iters=20
        if ! wait_phase "$d/r.db.runs/1" "$phase" "$iters" 60; then
            wait_exit "$pid" 60
            not_ok "$name" "no $phase segment with $iters iterations (exit $rc: $(tailof "$d/run$k.log"))"
            return
        fi
        snap=$(descendants "$pid")
        kill -s "$sig" "$pid"
        wait_exit "$pid" 30
        if [ "$sig" = KILL ]; then
            check "$name: killed" 'exit $rc' [ "$rc" -eq 137 ]
        else
            check "$name: exit 130, interrupted" 'exit $rc: $(tailof "$d/run$k.log")' \
                eval '[ $rc -eq 130 ] && has "$d/run$k.log" "interrupted"'
        fi
        orphans=""
        check "$name: no orphan process" 'left alive: $orphans' no_orphans "$d/" "$snap"
        why=""
        check "$name: store intact" '$why' integrity "$d/r.db"
    done
    name="SIG$sig of the coordinator in each phase"
    "$SCV" run --resume 1 --db "$d/r.db" >"$d/resume.log" 2>&1; rc=$?
    check "$name: --resume reaches the target" 'exit $rc: $(tailof "$d/resume.log")' \
        eval '[ $rc -eq 0 ] && has "$d/resume.log" "target reached"'
    why=""
    check "$name: store intact" '$why' integrity "$d/r.db"
    "$SCV" runs show 1 --db "$d/r.db" --json >"$d/show.json" 2>&1; rc=$?
    for phase in warmup search train; do
        check "$name: runs show lists a $phase step" 'exit $rc: $(cut -c1-200 "$d/show.json")' \
            eval '[ $rc -eq 0 ] && has "$d/show.json" "\"phase\":\"$phase\""'
    done
}

# ---- 2: signals to worker rank 1 of a K=2 segment ----
# WJOB: warm-up and training at K=2 B=32, the training a few seconds long (the whole test
# set evaluated about every 3 iterations; the warm-up's period kept as given: widened to the
# evaluations' 10% share, its wait for 5 evaluations ran the warm-up to the target's
# doorstep, leaving the training 2 iterations). SJOB: warm-up and search at K=2 too, about
# 1 s and 0.3 s (an evaluation every iteration), then a short training.
WJOB="$DRV --model mlp --hidden 32 --dataset synthetic:20000 --lr 0.003 --target-accuracy 0.98 --workers 2 --batch 32
      --eval-subset 0 --eval-every-epochs 0.002 --search-eval-share 0"
SJOB="$DRV --model mlp --hidden 32 --dataset synthetic:20000 --lr 0.003 --target-accuracy 0.96 --workers 2 --batch 32,128
      --search-budget 0 --eval-subset 0 --search-eval-every-epochs 0.001 --eval-every-epochs 0.01"
# PJOB: WJOB with a 5 s watchdog (issue 24, 7): a rank paused with SIGSTOP ends its segment
# (every process of it killed) and the segment is retried like a dead worker's
PJOB="$WJOB --stall-timeout 5"
# rank1_of D PHASE: pid of worker rank 1 (an mpirun rank: K=2) of run 1 in D while a K=2
# PHASE segment runs: the run's newest metrics file is that segment's and holds 3
# iterations. The ranks name the run's directory on their command line; a rank started for
# one segment (the relaunch driver) names its metrics file too, and must name this one.
rank1_of() {
    # shellcheck disable=SC2012
    f=$(ls -t "$1"/r.db.runs/1/seg-*.jsonl 2>/dev/null | head -n 1)
    case "$f" in *-"$2"-k2-*) ;; *) return 1 ;; esac
    [ "$(grep -c '"type":"iter"' "$f" 2>/dev/null)" -ge 3 ] || return 1
    for p in $(pgrep -f -- "scavenger train .*$1/r[.]db[.]runs/" 2>/dev/null); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' || continue
        args=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)
        case "$args" in *" --metrics $f "*) ;; *" --metrics "*) continue ;; esac
        echo "$p"
        return 0
    done
    return 1
}
# worker STRICT JOB SIG:PHASE...: one run of $JOB (the name of the variable that holds its
# options); SIG goes to worker rank 1 during a K=2 PHASE segment, for each SIG:PHASE in
# turn (at most policy.max_retries = 2). STRICT=1: the run must retry and reach the target
# (exit 0); STRICT=0: that, or a non-zero exit with a message (never exit 0 without the
# target). Then no process left and the store intact.
worker() {
    strict=$1
    job="" && eval "job=\$$2"
    shift 2
    name="" tag=""
    for sp in "$@"; do
        name="${name:-SIG${sp%%:*} of worker rank 1 during the ${sp#*:}}${name:+, then SIG${sp%%:*} during the ${sp#*:}}"
        tag="$tag-${sp%%:*}-${sp#*:}"
    done
    d=$(mktemp -d "$TOP/w$tag.XXXXXX")
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/r.db" $job >"$d/run.log" 2>&1 &
    pid=$!
    first=1
    for sp in "$@"; do
        killed="" i=0
        while [ -z "$killed" ] && [ $i -lt 1500 ] && alive "$pid"; do
            if p=$(rank1_of "$d" "${sp#*:}") && kill -s "${sp%%:*}" "$p" 2>/dev/null; then
                killed=$p
            else
                sleep 0.04
            fi
            i=$((i + 1))
        done
        if [ -z "$killed" ] && { [ $first -eq 1 ] || alive "$pid"; }; then
            wait_exit "$pid" 90
            not_ok "$name" "no rank 1 of a K=2 ${sp#*:} segment found (run exit $rc: $(tailof "$d/run.log"))"
            return
        fi
        if [ -z "$killed" ]; then # the run ended after an earlier signal: judged below
            n=$((n + 1)) passed=$((passed + 1))
            echo "ok $n - $name: SIG${sp%%:*} during the ${sp#*:} # skip: the run ended before it"
            break
        fi
        first=0
    done
    wait_exit "$pid" 90
    if [ $hung -eq 1 ]; then
        not_ok "$name: the run ends" "it hung: killed after 90 s ($(tailof "$d/run.log"))"
    elif [ "$strict" = 1 ]; then
        check "$name: the run retries" '$(tailof "$d/run.log")' has "$d/run.log" "a worker died"
        check "$name: the run still reaches the target (exit 0)" 'exit $rc: $(tailof "$d/run.log")' \
            eval '[ $rc -eq 0 ] && has "$d/run.log" "target reached"'
    elif [ $rc -eq 0 ]; then
        check "$name: the run retries and reaches the target (exit 0)" '$(tailof "$d/run.log")' \
            eval 'has "$d/run.log" "a worker died" && has "$d/run.log" "^target reached"'
    else
        check "$name: the run fails with a message (exit $rc)" '$(tailof "$d/run.log")' \
            eval '{ [ $rc -lt 128 ] || [ $rc -eq 130 ]; } && has "$d/run.log" "^scavenger run: .*\(failed\|interrupted\)"'
    fi
    why=""
    check "$name: store intact" '$why' integrity "$d/r.db"
    orphans=""
    check "$name: no orphan process" 'left alive: $orphans' no_orphans "$d/" ""
}

# ---- 2b: the probe (relaunch and elastic: a one-iteration `scavenger train` that proves
# the job starts, writing the run's job.jsonl) ----
# probe TERM: SIGTERM to the coordinator while the probe runs (issue 24, 9; test_cli
# probe_interrupt covers the exec driver's probe): exit 130, "interrupted", the run stored
# interrupted, never `running`. probe STOP: the probe's trainer paused (SIGSTOP) before its
# first metrics line (issue 24, 7; test_cli_run stall_watchdog covers an exec trainer): the
# watchdog (--stall-timeout 3) ends it, the run fails saying the job does not start. Both:
# no process left, the store intact. The data set is large so that the probe lasts seconds.
PROBEJOB="$DRV --model mlp --hidden 32 --dataset synthetic:400000 --lr 0.003 --target-accuracy 0.96 --workers 1,2
          --batch 32,128"
probe() {
    sig=$1
    d=$(mktemp -d "$TOP/p-$1.XXXXXX")
    name="SIG$sig of the probe's job before its first line"
    [ "$sig" = TERM ] && name="SIGTERM of the coordinator during the probe"
    extra=""
    [ "$sig" = STOP ] && extra="--stall-timeout 3"
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/r.db" $PROBEJOB $extra >"$d/run.log" 2>&1 &
    pid=$!
    pp="" i=0
    while [ -z "$pp" ] && [ $i -lt 600 ] && alive "$pid"; do
        pp=$(pgrep -f -- "scavenger train .*--metrics $d/r[.]db[.]runs/1/job[.]jsonl" 2>/dev/null | head -n 1)
        [ -n "$pp" ] || sleep 0.05
        i=$((i + 1))
    done
    if [ -z "$pp" ]; then
        wait_exit "$pid" 60
        not_ok "$name" "no probe seen (run exit $rc: $(tailof "$d/run.log"))"
        return
    fi
    sleep 0.5
    snap=$(descendants "$pid")
    if [ "$sig" = TERM ]; then kill -TERM "$pid"; else kill -STOP "$pp"; fi
    wait_exit "$pid" 60
    "$SCV" runs --db "$d/r.db" >"$d/runs.txt" 2>&1
    if [ $hung -eq 1 ]; then
        not_ok "$name: the run ends" "it hung: killed after 60 s ($(tailof "$d/run.log"))"
    elif [ "$sig" = TERM ]; then
        check "$name: exit 130, interrupted" 'exit $rc: $(tailof "$d/run.log")' \
            eval '[ $rc -eq 130 ] && has "$d/run.log" "interrupted"'
        check "$name: the run is stored interrupted, not running" '$(cut -c1-300 "$d/runs.txt")' \
            eval 'has "$d/runs.txt" "interrupted" && ! has "$d/runs.txt" "running"'
    else
        check "$name: the watchdog ends it, the run fails saying so" 'exit $rc: $(tailof "$d/run.log")' \
            eval '[ $rc -eq 1 ] && has "$d/run.log" "does not start: no metrics line in 3 s"'
        check "$name: the run is not shown running" '$(cut -c1-300 "$d/runs.txt")' \
            eval '! has "$d/runs.txt" "running"'
    fi
    orphans=""
    check "$name: no orphan process" 'left alive: $orphans' no_orphans "$d/" "$snap"
    why=""
    check "$name: store intact" '$why' integrity "$d/r.db"
}

# ---- 2c: an external trainer that leaves processes running (issue 38, 4) ----
# leftovers SIG: the exec driver on the fake trainer (tests/fake_trainer.py) behind a command
# that starts a background child, a double-forked one and one in a session of its own that
# ignores SIGTERM and SIGUSR1 (a logging daemon's pattern; copies of sleep under the
# scenario's directory, so that they name it); SIG (KILL, TERM) to the coordinator during
# the training. Neither the segments' ends nor the signal leave one of them running.
LEFTJOB="--workers 1,2 --batch 64,128 --target-accuracy 0.949 --max-epochs 50"
leftovers() {
    sig=$1
    d=$(mktemp -d "$TOP/l-$1.XXXXXX")
    cp /bin/sleep "$d/lingers"
    name="exec trainer with leftover children: SIG$sig of the run during the training"
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/r.db" --exec "$d/lingers 1001 & ($d/lingers 1003 &); setsid sh -c 'trap \"\" TERM USR1; \
exec $d/lingers 1002' & exec /usr/bin/python3 $(pwd)/tests/fake_trainer.py" $LEFTJOB >"$d/run.log" 2>&1 &
    pid=$!
    if ! wait_phase "$d/r.db.runs/1" train 20 60; then
        wait_exit "$pid" 60
        not_ok "$name" "no train segment with 20 iterations (exit $rc: $(tailof "$d/run.log"))"
        return
    fi
    snap=$(descendants "$pid")
    kill -s "$sig" "$pid"
    wait_exit "$pid" 30
    if [ "$sig" = KILL ]; then
        check "$name: killed" 'exit $rc' [ "$rc" -eq 137 ]
    else
        check "$name: exit 130, interrupted" 'exit $rc: $(tailof "$d/run.log")' \
            eval '[ $rc -eq 130 ] && has "$d/run.log" "interrupted"'
    fi
    check "$name: the earlier segments named what they ended" '$(tailof "$d/run.log")' \
        has "$d/run.log" "the trainer left processes running: worker 0: .*lingers 1002. (SIGKILL)"
    orphans=""
    check "$name: no process of the trainer left" 'left alive: $orphans' no_orphans "$d/" "$snap"
}

# ---- 3, 4: a full disk and a read-only report directory ----
# small_fs DIR SIZE: mounts a tmpfs of SIZE at DIR
small_fs() {
    mkdir -p "$1" && mount -t tmpfs -o "size=$2" tmpfs "$1" 2>/dev/null || return 1
    MOUNTS="$1 $MOUNTS"
}
fill() { dd if=/dev/zero of="$1/filler" bs=4k 2>/dev/null; sync; }   # until ENOSPC
# failed_cleanly NAME LOG RC NEEDLE: a non-zero exit that is no crash, and a message naming NEEDLE
failed_cleanly() {
    fc_log=$2 fc_rc=$3
    check "$1: exits non-zero" 'exit $fc_rc: $(tailof "$fc_log")' \
        eval '[ $fc_rc -ne 0 ] && [ $fc_rc -lt 128 ] && ! has "$fc_log" "target reached.*report in"'
    check "$1: the message names $4" '$(tailof "$fc_log")' has "$fc_log" "$4"
}

disk_full_report() {
    name="full disk: --report on a full tmpfs"
    d=$(mktemp -d "$TOP/fr.XXXXXX")
    small_fs "$d/rep" 512k || { not_ok "$name" "cannot mount a tmpfs"; return; }
    fill "$d/rep"
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/r.db" $JOB --report "$d/rep" >"$d/run.log" 2>&1; rc=$?
    failed_cleanly "$name" "$d/run.log" "$rc" "$d/rep: cannot write the report there: No space left"
    check "$name: found before training (issue 38, 8)" '$(tailof "$d/run.log")' \
        eval 'has "$d/run.log" "nothing was trained" && ! has "$d/run.log" "warmup"'
    check "$name: no partial report left" '$(ls "$d/rep")' \
        eval '! ls "$d/rep" | grep -q "^report\|tradeoff\|scv-report"'
    why=""
    check "$name: store intact" '$why' integrity "$d/r.db"
}

disk_full_db() {
    name="full disk: --db on a 256 KiB tmpfs"
    d=$(mktemp -d "$TOP/fd.XXXXXX")
    small_fs "$d/db" 256k || { not_ok "$name" "cannot mount a tmpfs"; return; }
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/db/r.db" $JOB >"$d/run.log" 2>&1; rc=$?
    failed_cleanly "$name" "$d/run.log" "$rc" "$d/db/"
    check "$name: the message says the disk is full" '$(tailof "$d/run.log")' \
        eval 'grep -qi "no space\|disk.*full" "$d/run.log"'
    why=""
    check "$name: store intact" '$why' integrity "$d/db/r.db"
    orphans=""
    check "$name: no orphan process" 'left alive: $orphans' no_orphans "$d/" ""
    # full before the run starts: the store itself cannot be written
    name="full disk: --db on a full tmpfs"
    small_fs "$d/db0" 512k || { not_ok "$name" "cannot mount a tmpfs"; return; }
    fill "$d/db0"
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/db0/r.db" $JOB >"$d/run0.log" 2>&1; rc=$?
    failed_cleanly "$name" "$d/run0.log" "$rc" "$d/db0/r.db"
}

# The store's own disk fills during a run (its state directory, PATH.runs/, elsewhere): the run
# fails naming the store and the full disk, and its end is still stored with its reason (the
# reserve beside the store, PATH.reserve, given up for that one write): `runs` shows it failed
# and why, never running nor "interrupted (process gone)" (issue 38, item 10)
disk_full_store() {
    name="full disk: the store's disk fills during the run"
    d=$(mktemp -d "$TOP/fs.XXXXXX")
    small_fs "$d/db" 160k || { not_ok "$name" "cannot mount a tmpfs"; return; }
    mkdir "$d/state" && ln -s "$d/state" "$d/db/r.db.runs"
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/db/r.db" $JOB >"$d/run.log" 2>&1; rc=$?
    failed_cleanly "$name" "$d/run.log" "$rc" "$d/db/r.db: writing: database or disk is full"
    "$SCV" runs --db "$d/db/r.db" >"$d/runs.log" 2>&1
    check "$name: runs shows it failed, the full disk its reason" '$(tailof "$d/runs.log")' \
        eval 'has "$d/runs.log" " failed " && has "$d/runs.log" "reason: .*disk is full" && \
              ! has "$d/runs.log" "running" && ! has "$d/runs.log" "process gone"'
    why=""
    check "$name: store intact" '$why' integrity "$d/db/r.db"
}

# The run's state directory (PATH.runs/: the segments' metrics and the checkpoint) fills up
# during the training: a write failure, not a dead worker: no retry, a message naming the
# file and the full disk, the store intact, and --resume reaches the target once there is space
disk_full_train() {
    name="full disk: the state directory fills during the training"
    d=$(mktemp -d "$TOP/ft.XXXXXX")
    small_fs "$d/r.db.runs" 4m || { not_ok "$name" "cannot mount a tmpfs"; return; }
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/r.db" $WJOB >"$d/run.log" 2>&1 &
    pid=$!
    if ! wait_phase "$d/r.db.runs/1" train 5 60; then
        wait_exit "$pid" 60
        not_ok "$name" "no train segment with 5 iterations (exit $rc: $(tailof "$d/run.log"))"
        return
    fi
    fill "$d/r.db.runs"
    wait_exit "$pid" 60
    failed_cleanly "$name" "$d/run.log" "$rc" "$d/r.db.runs/1/"
    check "$name: the run's error names the file and the full disk" '$(tailof "$d/run.log")' \
        grep -q "^scavenger run: .*$d/r[.]db[.]runs/1/[^ ]*: .*No space left on device" "$d/run.log"
    check "$name: no retry spent on it" '$(grep "retry" "$d/run.log" | cut -c1-200)' \
        eval '! has "$d/run.log" "retry [0-9]* of"'
    why=""
    check "$name: store intact" '$why' integrity "$d/r.db"
    orphans=""
    check "$name: no orphan process" 'left alive: $orphans' no_orphans "$d/" ""
    rm -f "$d/r.db.runs/filler"
    "$SCV" run --resume 1 --db "$d/r.db" >"$d/resume.log" 2>&1; rc=$?
    check "$name: --resume reaches the target once there is space" 'exit $rc: $(tailof "$d/resume.log")' \
        eval '[ $rc -eq 0 ] && has "$d/resume.log" "target reached"'
}

readonly_report() {
    name="read-only --report directory"
    d=$(mktemp -d "$TOP/ro.XXXXXX")
    if ! small_fs "$d/rep" 512k || ! mount -o remount,ro "$d/rep" 2>/dev/null; then
        not_ok "$name" "cannot mount a read-only tmpfs"; return
    fi
    # shellcheck disable=SC2086
    "$SCV" run --db "$d/r.db" $JOB --report "$d/rep" >"$d/run.log" 2>&1; rc=$?
    failed_cleanly "$name" "$d/run.log" "$rc" "$d/rep: cannot write the report there: Read-only file system"
    check "$name: found before training (issue 38, 8)" '$(tailof "$d/run.log")' \
        eval 'has "$d/run.log" "nothing was trained" && ! has "$d/run.log" "warmup"'
}

# ---- 5: concurrent runs on one store ----
concurrent() {
    name="3 concurrent runs on one store"
    d=$(mktemp -d "$TOP/cc.XXXXXX")
    pids=""
    for i in 1 2 3; do
        # shellcheck disable=SC2086
        "$SCV" run --db "$d/r.db" $JOB --report "$d/rep$i" >"$d/run$i.log" 2>&1 &
        pids="$pids $!"
    done
    bad=""
    i=0
    for p in $pids; do
        i=$((i + 1))
        wait_exit "$p" 120
        [ $rc -eq 0 ] && has "$d/run$i.log" "target reached" && has "$d/rep$i/report.json" '"reached":true' ||
            bad="$bad run $i: exit $rc: $(tailof "$d/run$i.log");"
    done
    check "$name: all exit 0 with a report" '$bad' [ -z "$bad" ]
    why=""
    check "$name: store intact" '$why' integrity "$d/r.db"
    "$SCV" runs --db "$d/r.db" --json >"$d/runs.json" 2>/dev/null
    done_runs=$(grep -o '"status":"done"' "$d/runs.json" | wc -l)
    ids=$(grep -o '"id":[0-9]*' "$d/runs.json" | sort -u | wc -l)
    check "$name: the store lists 3 done runs" '$done_runs done, $ids ids: $(cut -c1-200 "$d/runs.json")' \
        eval '[ "$done_runs" -eq 3 ] && [ "$ids" -eq 3 ]'
}

[ -x "$SCV" ] || { echo "not ok 1 - $SCV is not built"; echo "0 passed, 1 failed"; exit 1; }
start=$(date +%s)
# SCV_FAULTS_ONLY=WORDS: only the scenarios whose line below holds WORDS ("probe", "worker 1")
timed() {
    case "$*" in *"${SCV_FAULTS_ONLY:-}"*) ;; *) return 0 ;; esac
    t0=$(date +%s); "$@"; echo "# $*: $(($(date +%s) - t0)) s"
}
timed coordinator KILL
timed coordinator TERM
timed worker 1 WJOB KILL:train
timed worker 0 WJOB TERM:train
timed worker 0 SJOB KILL:warmup KILL:search
timed worker 1 PJOB STOP:train
timed probe TERM
timed probe STOP
timed leftovers KILL
timed leftovers TERM
if [ "$(id -u)" -eq 0 ]; then
    timed disk_full_report
    timed disk_full_db
    timed disk_full_store
    timed disk_full_train
    timed readonly_report
else
    n=$((n + 1)); passed=$((passed + 1))
    echo "ok $n - full disk and read-only directories # skip: mounting a tmpfs needs root"
fi
timed concurrent
echo "# $(($(date +%s) - start)) s in all"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
