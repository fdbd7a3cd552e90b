# The deadlock analysis (vcx-run --analysis deadlock) on the programs of
# tests/programs/deadlock: each deadlocking program must be reported with
# exactly the ranks and lines marked in its source, and end with status 65;
# each program that never deadlocks must run to its end unreported
# (deadlock_case.py describes the marks and the steps).
#
#   deadlock.<name>.n<N>          default mode (--stall never), at each of
#                                 the program's rank counts
#   deadlock.<name>.n<N>.stall    vcx-run --stall waits (the first count)
#   deadlock.<name>.n<N>.chaos    tool-to-tool messages delayed (the first
#                                 count; VCX_CHAOS_DELAY_US, VCX_CHAOS_SEED)
get_property(VCX_DEADLOCK_PROGRAMS GLOBAL PROPERTY VCX_DEADLOCK_PROGRAMS)
if(NOT VCX_DEADLOCK_PROGRAMS)
  message(FATAL_ERROR "tests/programs/deadlock must be added before tests/integration")
endif()

set(VCX_DEADLOCK_CASE ${CMAKE_CURRENT_SOURCE_DIR}/deadlock_case.py)
set(VCX_DEADLOCK_STEP_TIMEOUT 40)

foreach(name IN LISTS VCX_DEADLOCK_PROGRAMS)
  get_property(source GLOBAL PROPERTY VCX_DEADLOCK_PROGRAM_SOURCE_${name})
  get_property(program GLOBAL PROPERTY VCX_DEADLOCK_PROGRAM_FILE_${name})
  get_property(counts GLOBAL PROPERTY VCX_DEADLOCK_RANKS_${name})
  get_property(native GLOBAL PROPERTY VCX_DEADLOCK_PROGRAM_NATIVE_${name})
  list(GET counts 0 first)
  set(common
    ${Python3_EXECUTABLE} ${VCX_DEADLOCK_CASE}
    --vcx-run $<TARGET_FILE:vcx-run> --mpiexec ${VCX_MPIEXEC} ${native}
    --program ${program} --source ${source}
    --timeout ${VCX_DEADLOCK_STEP_TIMEOUT})
  set(cases)
  foreach(n IN LISTS counts)
    list(APPEND cases n${n})
  endforeach()
  list(APPEND cases n${first}.stall n${first}.chaos)
  foreach(case IN LISTS cases)
    string(REGEX MATCH "^n([0-9]+)" _ ${case})
    set(n ${CMAKE_MATCH_1})
    set(extra)
    if(case MATCHES "stall")
      set(extra --stall waits)
    elseif(case MATCHES "chaos")
      set(extra --chaos-delay-us 2000 --chaos-seed 1)
    endif()
    math(EXPR procs "${n} * 2")
    add_test(NAME deadlock.${name}.${case} COMMAND ${common} -n ${n} ${extra})
    set_tests_properties(deadlock.${name}.${case} PROPERTIES
      LABELS "deadlock" TIMEOUT 100 PROCESSORS ${procs})
  endforeach()
endforeach()

# --leave-stopped: the deadlocked processes are left for a debugger, with
# their pids, until Ctrl-C ends the run (deadlock_leave_stopped.py).
get_property(ring GLOBAL PROPERTY VCX_DEADLOCK_PROGRAM_FILE_deadlock_recv_ring)
add_test(NAME deadlock.leave_stopped.n2
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/deadlock_leave_stopped.py
                 --vcx-run $<TARGET_FILE:vcx-run> --program ${ring} -n 2 --timeout 40)
set_tests_properties(deadlock.leave_stopped.n2 PROPERTIES
  LABELS "deadlock" TIMEOUT 100 PROCESSORS 4)

# The shipped example of a ring that relies on buffering: its potential
# deadlock, as the demo shows it (examples/halo_ring.c).
add_test(NAME deadlock.example_halo_ring.n3
         COMMAND ${Python3_EXECUTABLE} ${VCX_DEADLOCK_CASE}
                 --vcx-run $<TARGET_FILE:vcx-run> --mpiexec ${VCX_MPIEXEC}
                 --program $<TARGET_FILE:vcx-example-halo-ring>
                 --source ${PROJECT_SOURCE_DIR}/examples/halo_ring.c
                 --timeout ${VCX_DEADLOCK_STEP_TIMEOUT} -n 3)
set_tests_properties(deadlock.example_halo_ring.n3 PROPERTIES
  LABELS "deadlock" TIMEOUT 100 PROCESSORS 6)
