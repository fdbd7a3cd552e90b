#!/bin/sh
# An OpenSHMEM program that uses vcx/annotate_shmem.h builds with oshcc and
# the header alone (no vcx library is linked), as a position-independent
# executable and as one that is not; each runs natively, and the same
# binaries report their annotations under vcx-run, whose interceptor defines
# the weak function the header calls. A program built for another layout
# version is stopped with a vcx: line.
#   annotate_shmem_native.sh OSHCC OSHRUN VCX_RUN VCX_TRACE SOURCE INCLUDE_DIR
set -eu
oshcc="$1" oshrun="$2" vcx_run="$3" vcx_trace="$4" src="$5" inc="$6"
work="$(mktemp -d "${TMPDIR:-/tmp}/vcx-annotate-shmem-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "annotate_shmem_native: $*" >&2; exit 1; }

# What this platform needs to run Open MPI's OpenSHMEM natively (as
# tests/integration/run_case.py does).
native="$oshrun --oversubscribe --mca osc ucx"
[ "$(id -u)" = 0 ] && native="$native --allow-run-as-root"

for pie in pie no-pie; do
  prog="$work/prog-$pie"
  "$oshcc" -Wall -Werror "-$pie" -I "$inc" -o "$prog" "$src" || fail "$pie: build failed"
  if readelf -d "$prog" | grep NEEDED | grep -i vcx; then
    fail "$pie: the program links a vcx library"
  fi

  $native -n 2 "$prog" >"$work/native.out" || fail "$pie: native run failed"
  [ "$(grep -c ' ok$' "$work/native.out")" = 2 ] || fail "$pie: native run: $(cat "$work/native.out")"

  rm -rf "$work/trace"
  "$vcx_run" -n 2 --trace "$work/trace" -- "$prog" >"$work/vcx.out" || fail "$pie: vcx-run failed"
  [ "$(sort "$work/native.out")" = "$(sort "$work/vcx.out")" ] ||
    fail "$pie: output differs under vcx-run"
  "$vcx_trace" export "$work/trace" >"$work/trace.jsonl"
  # Per PE: 1 tick, 1 signal, 1 wait, 1 or 2 resource signals, 1 or 2
  # resource waits.
  for call in tick:2 process_signal:2 process_wait:2 resource_signal:3 resource_wait:3; do
    name="vcx_annotate_shmem_${call%%:*}" want="${call##*:}"
    got="$(grep -c "\"call\":\"$name\"" "$work/trace.jsonl" || true)"
    [ "$got" = "$want" ] || fail "$pie: $name: $got event(s) in the trace, expected $want"
  done
done

# Natively the carrier is absent and nothing happens; under vcx the wrong
# version stops the job with one line saying what to do.
$native -n 2 "$work/prog-pie" bad-version >"$work/native.out" || fail "bad-version: native run failed"
[ "$(grep -c 'no vcx$' "$work/native.out")" = 2 ] || fail "bad-version: native run: $(cat "$work/native.out")"
if "$vcx_run" -n 2 -- "$work/prog-pie" bad-version >"$work/vcx.out" 2>"$work/vcx.err"; then
  fail "bad-version: vcx-run succeeded"
fi
grep -q "^vcx: PE [01]: an annotation from vcx/annotate_shmem.h version 2, but this vcx reads version 1; rebuild" "$work/vcx.err" ||
  fail "bad-version: no vcx: line saying to rebuild: $(cat "$work/vcx.err")"
echo "header-only build runs natively and under vcx"
