# vcx-run's placement and multi-node paths, on this one machine.
#
#   launcher.placement.<split|shared>.n<N>    the jobs run on the cores the
#                                             placement names (affinity read back)
#   integration.<placement>.<channel>.<transport>.<program>.n3.stall
#                                             exact clocks in every combination
#   integration.multinode.<channel>.<program>.n4.<mode>
#                                             a host file of two host names for
#                                             this machine; clocks exact
#   integration.multinode.shm-transport.<program>.n4.<mode>
#                                             the same with --transport shm (one
#                                             machine: every pair shares memory)
#   integration.multinode.hosts-list.<program>.n4
#                                             the same two hosts given as
#                                             mpiexec's -hosts list

foreach(placement split shared)
  foreach(n 2 3)
    add_test(NAME launcher.placement.${placement}.n${n}
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/placement_check.py
              --vcx-run $<TARGET_FILE:vcx-run> --toolproc $<TARGET_FILE:vcx-toolproc>
              --placement ${placement} -n ${n} --timeout ${VCX_CASE_STEP_TIMEOUT})
    set_tests_properties(launcher.placement.${placement}.n${n} PROPERTIES
      LABELS "integration" TIMEOUT ${VCX_SELFCHECK_TEST_TIMEOUT} SKIP_RETURN_CODE 77)
  endforeach()
endforeach()

# Every placement x channel x transport combination on the exactness
# programs; and runs "across nodes" over a host file, also with the TCP
# channel (the paths a cluster takes).
set(VCX_LAUNCHER_CASE_PROGRAMS p2p_basic collectives rma_locks sync)
foreach(prog IN LISTS VCX_LAUNCHER_CASE_PROGRAMS)
  if(NOT prog IN_LIST VCX_TEST_PROGRAMS)
    continue()
  endif()
  set(case_command ${Python3_EXECUTABLE} ${VCX_RUN_CASE}
      --vcx-run $<TARGET_FILE:vcx-run> --vcx-trace $<TARGET_FILE:vcx-trace>
      --mpiexec ${VCX_MPIEXEC} --program $<TARGET_FILE:vcx-test-${prog}>
      --timeout ${VCX_CASE_STEP_TIMEOUT})
  foreach(placement split shared)
    foreach(channel shm tcp)
      foreach(transport tcp shm mpi)
        set(name integration.${placement}.${channel}.${transport}.${prog}.n3.stall)
        add_test(NAME ${name}
          COMMAND ${case_command} -n 3 --channel ${channel} --transport ${transport}
                  --vcx-arg=--placement --vcx-arg=${placement})
        set_tests_properties(${name} PROPERTIES
          LABELS "integration" TIMEOUT ${VCX_CASE_TEST_TIMEOUT} PROCESSORS 6)
      endforeach()
    endforeach()
  endforeach()
  foreach(channel shm tcp)
    foreach(mode stall nostall)
      set(extra --stall waits)
      if(mode STREQUAL "nostall")
        set(extra --stall never)
      endif()
      set(name integration.multinode.${channel}.${prog}.n4.${mode})
      add_test(NAME ${name}
        COMMAND ${case_command} -n 4 ${extra} --channel ${channel}
                --vcx-arg=-f --vcx-arg=${CMAKE_CURRENT_SOURCE_DIR}/hosts-two-local.txt)
      set_tests_properties(${name} PROPERTIES
        LABELS "integration" TIMEOUT ${VCX_CASE_TEST_TIMEOUT} PROCESSORS 8)
    endforeach()
  endforeach()
  foreach(mode stall nostall)
    set(extra --stall waits)
    if(mode STREQUAL "nostall")
      set(extra --stall never)
    endif()
    set(name integration.multinode.shm-transport.${prog}.n4.${mode})
    add_test(NAME ${name}
      COMMAND ${case_command} -n 4 ${extra} --transport shm
              --vcx-arg=-f --vcx-arg=${CMAKE_CURRENT_SOURCE_DIR}/hosts-two-local.txt)
    set_tests_properties(${name} PROPERTIES
      LABELS "integration" TIMEOUT ${VCX_CASE_TEST_TIMEOUT} PROCESSORS 8)
  endforeach()
  if(prog STREQUAL "p2p_basic")
    set(name integration.multinode.hosts-list.${prog}.n4)
    add_test(NAME ${name}
      COMMAND ${case_command} -n 4 --channel tcp
              --vcx-arg=-hosts --vcx-arg=localhost:2,127.0.0.1:2)
    set_tests_properties(${name} PROPERTIES
      LABELS "integration" TIMEOUT ${VCX_CASE_TEST_TIMEOUT} PROCESSORS 8)
  endif()
endforeach()

# The progress line: in a terminal only.
add_executable(vcx-test-timed-loop timed_loop.c)
target_link_libraries(vcx-test-timed-loop PRIVATE vcx::mpich)
set_target_properties(vcx-test-timed-loop PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME launcher.progress-line
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/progress_line.py
          --vcx-run $<TARGET_FILE:vcx-run> --program $<TARGET_FILE:vcx-test-timed-loop>)
set_tests_properties(launcher.progress-line PROPERTIES
  LABELS "integration" TIMEOUT 300 PROCESSORS 4)

# --app-yield: blocking MPI calls yield the core (counted by the program's own
# sched_yield) when on, and by default where tools share cores.
add_executable(vcx-test-yield-probe yield_probe.c)
target_link_libraries(vcx-test-yield-probe PRIVATE vcx::mpich)
target_link_options(vcx-test-yield-probe PRIVATE -Wl,--export-dynamic)
set_target_properties(vcx-test-yield-probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                      ${CMAKE_CURRENT_BINARY_DIR})
add_test(NAME launcher.app-yield
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/app_yield.py
          --vcx-run $<TARGET_FILE:vcx-run> --program $<TARGET_FILE:vcx-test-yield-probe>)
set_tests_properties(launcher.app-yield PROPERTIES
  LABELS "integration" TIMEOUT 600 PROCESSORS 4)
