# The RMA data-race analysis (vcx-run --analysis race) on the programs of
# tests/programs/race: each program's reported races must be exactly those
# marked in its source (race_case.py describes the marks and the steps).
#
#   race.<name>.n2, race.<name>.n3     default mode (--stall never)
#   race.<name>.n3.stall               vcx-run --stall waits
#   race.<name>.n3.chaos               racy programs, with tool-to-tool
#                                      messages delayed (VCX_CHAOS_DELAY_US,
#                                      VCX_CHAOS_SEED, as chaos.cmake)
#   race.<name>.n2.exit_code           vcx-run --race-exit-code 66: exit 66
#                                      for a racy program, 0 for its twin
#
# <name> is that of tests/programs/race/race_<name>.c (the race-free twins
# are free_<family>), or of tests/programs/race_local/race_<name>.c
# (local_<family>, free_local_<family>: built with vcx-mpicc, their loads
# and stores are checked too).
get_property(VCX_RACE_PROGRAMS GLOBAL PROPERTY VCX_RACE_PROGRAMS)
if(NOT VCX_RACE_PROGRAMS)
  message(FATAL_ERROR "tests/programs/race must be added before tests/integration")
endif()

set(VCX_RACE_CASE ${CMAKE_CURRENT_SOURCE_DIR}/race_case.py)
# Seconds per step of race_case.py (at most three steps) and for the test.
set(VCX_RACE_STEP_TIMEOUT 35)
set(VCX_RACE_TEST_TIMEOUT 120)
set(VCX_RACE_CHAOS_DELAY_US 2000)
set(VCX_RACE_CHAOS_SEED 1)
set(VCX_RACE_EXIT_CODE_PROGRAMS fence free_fence)

foreach(name IN LISTS VCX_RACE_PROGRAMS)
  get_property(source GLOBAL PROPERTY VCX_RACE_PROGRAM_SOURCE_${name})
  get_property(program GLOBAL PROPERTY VCX_RACE_PROGRAM_FILE_${name})
  # Racy: the source carries race marks (read again when the source changes).
  file(STRINGS ${source} marks REGEX "/\\*[ \t]*race:")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
  set(common
    ${Python3_EXECUTABLE} ${VCX_RACE_CASE}
    --vcx-run $<TARGET_FILE:vcx-run> --mpiexec ${VCX_MPIEXEC}
    --program ${program} --source ${source}
    --timeout ${VCX_RACE_STEP_TIMEOUT})
  if(name MATCHES "^(free_)?local_")
    list(APPEND common --local-accesses)
  endif()

  set(cases n2 n3 n3.stall)
  if(marks)
    list(APPEND cases n3.chaos)
  endif()
  if(name IN_LIST VCX_RACE_EXIT_CODE_PROGRAMS)
    list(APPEND cases n2.exit_code)
  endif()
  foreach(case IN LISTS cases)
    string(REGEX MATCH "^n([0-9]+)" _ ${case})
    set(n ${CMAKE_MATCH_1})
    set(extra)
    if(case MATCHES "stall")
      set(extra --stall waits)
    elseif(case MATCHES "chaos")
      set(extra --chaos-delay-us ${VCX_RACE_CHAOS_DELAY_US}
                --chaos-seed ${VCX_RACE_CHAOS_SEED})
    elseif(case MATCHES "exit_code")
      set(extra --expect-exit-code-with 66)
    endif()
    math(EXPR procs "${n} * 2")
    add_test(NAME race.${name}.${case}
      COMMAND ${common} -n ${n} ${extra})
    set_tests_properties(race.${name}.${case} PROPERTIES
      LABELS "race" TIMEOUT ${VCX_RACE_TEST_TIMEOUT} PROCESSORS ${procs})
  endforeach()
endforeach()

# The same for the OpenSHMEM programs of tests/programs/race_shmem (with
# Open MPI's OpenSHMEM only): natively under oshrun (race_case.py
# --oshrun), under vcx-run as the MPI programs.
#
#   race.shmem_<name>.n2, race.shmem_<name>.n3     default mode (--stall never)
#   race.shmem_<name>.n3.stall                     vcx-run --stall waits
#   race.shmem_<name>.n3.chaos                     racy programs, chaos delays
#
# <name> is <family> for race_shmem_<family>.c and free_<family> for its
# race-free twin race_free_shmem_<family>.c; local_<family> and
# free_local_<family> for those of tests/programs/race_shmem_local (built
# with vcx-oshcc).
if(VCX_HAVE_SHMEM)
  get_property(VCX_RACE_SHMEM_PROGRAMS GLOBAL PROPERTY VCX_RACE_SHMEM_PROGRAMS)
  if(NOT VCX_RACE_SHMEM_PROGRAMS)
    message(FATAL_ERROR "tests/programs/race_shmem must be added before tests/integration")
  endif()
  foreach(name IN LISTS VCX_RACE_SHMEM_PROGRAMS)
    get_property(source GLOBAL PROPERTY VCX_RACE_SHMEM_PROGRAM_SOURCE_${name})
    get_property(program GLOBAL PROPERTY VCX_RACE_SHMEM_PROGRAM_FILE_${name})
    file(STRINGS ${source} marks REGEX "/\\*[ \t]*race:")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
    set(common
      ${Python3_EXECUTABLE} ${VCX_RACE_CASE}
      --vcx-run $<TARGET_FILE:vcx-run> --oshrun ${VCX_OSHRUN}
      --program ${program} --source ${source}
      --timeout ${VCX_RACE_STEP_TIMEOUT})
    if(name MATCHES "^(free_)?local_")
      list(APPEND common --local-accesses)
    endif()

    set(cases n2 n3 n3.stall)
    if(marks)
      list(APPEND cases n3.chaos)
    endif()
    foreach(case IN LISTS cases)
      string(REGEX MATCH "^n([0-9]+)" _ ${case})
      set(n ${CMAKE_MATCH_1})
      set(extra)
      if(case MATCHES "stall")
        set(extra --stall waits)
      elseif(case MATCHES "chaos")
        set(extra --chaos-delay-us ${VCX_RACE_CHAOS_DELAY_US}
                  --chaos-seed ${VCX_RACE_CHAOS_SEED})
      endif()
      math(EXPR procs "${n} * 2")
      add_test(NAME race.shmem_${name}.${case}
        COMMAND ${common} -n ${n} ${extra})
      set_tests_properties(race.shmem_${name}.${case} PROPERTIES
        LABELS "race" TIMEOUT ${VCX_RACE_TEST_TIMEOUT} PROCESSORS ${procs})
    endforeach()
  endforeach()
endif()
