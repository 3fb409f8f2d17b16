#!/usr/bin/env bash
# A/B of two commits on the device machine: each built into its own venv by bench/device.sh from a
# carried `git archive` ($CARRY/a.tar.gz, $CARRY/b.tar.gz; commit lines in a.commit / b.commit),
# then sched_bench runs alternating A, B, A, B ... so both see the same machine and drift.
#
#   bash bench/device_ab.sh prepare A_REV B_REV     # here: write the two archives into $CARRY
#   bash bench/device_ab.sh install                 # there: build both (one call; ~5 min)
#   ROUNDS=3 REPS=1 SCALE=5 WORKERS="1 4 16" bash bench/device_ab.sh run   # there: alternate
#   python3 bench/rawsum.py OUT/a-*/raw.tsv; python3 bench/rawsum.py OUT/b-*/raw.tsv
# The device call carries $CARRY's ocl-root.tar.xz, whl, deps, a.*, b.* (docs/history/performance-log.md).
set -uo pipefail
cd "$(dirname "$0")/.."
CARRY=$(realpath "${CARRY:-.devbench}")
OUT=${OUT:-/tmp/pyplat-out}
mode=${1:-run}
side() {   # side NAME MODE: bench/device.sh MODE on archive NAME, venv /tmp/pyplat-venv-NAME
    cp "$CARRY/$1.tar.gz" "$CARRY/src.tar.gz" && cp "$CARRY/$1.commit" "$CARRY/src.commit" &&
        VENV=/tmp/pyplat-venv-$1 bash bench/device.sh "$2"
}
case "$mode" in
prepare)
    git archive --format=tar.gz -o "$CARRY/a.tar.gz" "$2" && git log -1 --format="%H %s" "$2" > "$CARRY/a.commit"
    git archive --format=tar.gz -o "$CARRY/b.tar.gz" "$3" && git log -1 --format="%H %s" "$3" > "$CARRY/b.commit"
    ;;
install)
    for s in a b; do OUT=$OUT/install-$s side $s check > /dev/null 2>&1; echo "$s: $(cat "$CARRY/$s.commit")";
        tail -3 "$OUT/install-$s/tiny.txt" 2>/dev/null || tail -20 "$OUT/install-$s/install.txt"; done
    ;;
run)
    for r in $(seq "${ROUNDS:-3}"); do
        for s in a b; do OUT=$OUT/$s-$r side $s raw > "$OUT/log-$s-$r.txt" 2>&1; echo "round $r $s: rc $?"; done
    done
    ;;
*) echo "usage: bash bench/device_ab.sh prepare A B | install | run" >&2; exit 2 ;;
esac
