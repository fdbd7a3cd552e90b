#!/bin/sh
# A program that uses vcx/annotate.h builds with mpicc.mpich and the header
# alone (no vcx library is linked), runs natively, and the same binary
# reports its annotations under vcx-run.
#   annotate_native.sh MPICC MPIEXEC VCX_RUN VCX_TRACE SOURCE INCLUDE_DIR
set -eu
mpicc="$1" mpiexec="$2" vcx_run="$3" vcx_trace="$4" src="$5" inc="$6"
work="$(mktemp -d "${TMPDIR:-/tmp}/vcx-annotate-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "annotate_native: $*" >&2; exit 1; }

"$mpicc" -Wall -Werror -I "$inc" -o "$work/prog" "$src" || fail "build failed"
if readelf -d "$work/prog" | grep NEEDED | grep -i vcx; then
  fail "the program links a vcx library"
fi

"$mpiexec" -n 2 "$work/prog" >"$work/native.out" || fail "native run failed"
[ "$(grep -c ' ok$' "$work/native.out")" = 2 ] || fail "native run: $(cat "$work/native.out")"

"$vcx_run" -n 2 --trace "$work/trace" -- "$work/prog" >"$work/vcx.out" ||
  fail "vcx-run failed"
[ "$(sort "$work/native.out")" = "$(sort "$work/vcx.out")" ] || fail "output differs under vcx-run"
"$vcx_trace" export "$work/trace" >"$work/trace.jsonl"
# Per rank: 1 tick, 2 signals, 2 waits, 1 or 2 resource signals, 1 or 2
# resource waits.
for call in tick:2 process_signal:4 process_wait:4 resource_signal:3 resource_wait:3; do
  name="vcx_annotate_${call%%:*}" want="${call##*:}"
  got="$(grep -c "\"call\":\"$name\"" "$work/trace.jsonl" || true)"
  [ "$got" = "$want" ] || fail "$name: $got event(s) in the trace, expected $want"
done
echo "header-only build runs natively and under vcx"
