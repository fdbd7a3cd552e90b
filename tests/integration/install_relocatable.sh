#!/bin/sh
# `cmake --install` yields a relocatable tree: install, move it elsewhere,
# and run a traced program with the moved copy.
set -eu
build="$1"
work="$(mktemp -d "${TMPDIR:-/tmp}/vcx-install-XXXXXX")"
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/first" >/dev/null
mv "$work/first" "$work/moved"
p="$work/moved"
for f in bin/vcx-run bin/vcx-trace bin/vcx-toolproc lib/libvcxcore.so \
         lib/vcx/libvcx-mpi-intercept.so lib/vcx/vcx-engine-vclock.so \
         lib/vcx/vcx-translator-mpi.so lib/vcx/vcx-module-trace.so \
         share/vcx/config/split-node.ini share/vcx/config/shared-node.ini \
         share/vcx/config/template.ini include/vcx/annotate.h \
         lib/libvcx-tsan.so lib/vcx/tsan/libtsan.so bin/vcx-mpicc bin/vcx-mpicxx \
         bin/vcx-mpifort bin/vcx-oshcc bin/vcx-oshcxx bin/vcx-oshfort; do
  [ -e "$p/$f" ] || { echo "missing from the installation: $f" >&2; exit 1; }
done

# The shared placement comes from the moved tree's share/vcx/config.
"$p/bin/vcx-run" -n 2 --placement shared --trace "$work/trace" -- \
  "$build/examples/vcx-example-ring" >"$work/out"
grep -q "checksum" "$work/out" || { echo "the example printed nothing" >&2; cat "$work/out" >&2; exit 1; }
"$p/bin/vcx-trace" export "$work/trace" >"$work/trace.jsonl"
grep -q '"rank":1,.*"call":"MPI_Allreduce"' "$work/trace.jsonl" ||
  { echo "the trace lacks rank 1's MPI_Allreduce" >&2; cat "$work/trace.jsonl" >&2; exit 1; }
# The moved compiler wrapper builds a program against the moved runtime,
# which runs natively and under the moved vcx-run with its loads and stores
# checked.
src="$(dirname "$0")/../../examples/rma_race.c"
"$p/bin/vcx-mpicc" -g -o "$work/rma_race" "$src"
readelf -d "$work/rma_race" | grep -q "moved/lib" ||
  { echo "the wrapper-built program does not find the moved runtime" >&2; exit 1; }
mpiexec.mpich -n 3 "$work/rma_race" >"$work/native.out"
"$p/bin/vcx-run" --analysis race -n 3 -- "$work/rma_race" >"$work/race.out" 2>"$work/race.err"
grep -q "Local loads and stores checked on every rank" "$work/race.err" &&
  grep -q "load at .*rma_race.c" "$work/race.err" ||
  { echo "the moved tree does not check loads and stores" >&2; cat "$work/race.err" >&2; exit 1; }
echo "installed tree works after moving it"
