# Delay injection: the tool-to-tool messages of every tool held back a
# random 0..VCX_CHAOS_TEST_DELAY_US microseconds (VCX_CHAOS_DELAY_US), so
# that messages from different tools arrive in any order; the clocks must
# stay exactly the oracle's.
#
#   integration.chaos.<program>.n<N>.<stall|nostall>
#   integration.chaos.<program>.n3.<stall|nostall>.shm-transport
#                                  the same over --transport shm (the delays
#                                  wrap whichever transport the tools use)
#
# The seed is VCX_CHAOS_TEST_SEED; configure with another one to try other
# delays (docs/testing.md, "Delay injection").
set(VCX_CHAOS_TEST_SEED 1 CACHE STRING "VCX_CHAOS_SEED of the integration.chaos tests")
set(VCX_CHAOS_TEST_DELAY_US 2000 CACHE STRING
    "VCX_CHAOS_DELAY_US of the integration.chaos tests (microseconds)")

set(VCX_CHAOS_PROGRAMS rma_locks sync collectives nbc p2p_basic cancel crooked_barrier
    annotate_polling annotate_queue shmem_locks shmem_collectives shmem_legacy shmem_annotate
    shmem_flags shmem_shmemx)
foreach(prog IN LISTS VCX_CHAOS_PROGRAMS)
  if(NOT prog IN_LIST VCX_TEST_PROGRAMS)
    continue()
  endif()
  get_property(program GLOBAL PROPERTY VCX_TEST_PROGRAM_FILE_${prog})
  if(NOT program)
    set(program $<TARGET_FILE:vcx-test-${prog}>)
  endif()
  get_property(native GLOBAL PROPERTY VCX_TEST_PROGRAM_NATIVE_${prog})
  foreach(n 3 4)
    foreach(mode stall nostall)
      set(extra --stall waits)
      if(mode STREQUAL "nostall")
        set(extra --stall never)
      endif()
      math(EXPR procs "${n} * 2")
      set(name integration.chaos.${prog}.n${n}.${mode})
      # The notice of tool rank 0 shows that the setting reached the tools.
      add_test(NAME ${name}
        COMMAND ${Python3_EXECUTABLE} ${VCX_RUN_CASE}
                --vcx-run $<TARGET_FILE:vcx-run> --vcx-trace $<TARGET_FILE:vcx-trace>
                --mpiexec ${VCX_MPIEXEC} ${native} --program ${program} -n ${n}
                --timeout ${VCX_CASE_STEP_TIMEOUT} ${extra}
                "--expect-stderr=random 0..${VCX_CHAOS_TEST_DELAY_US} us (VCX_CHAOS_DELAY_US), seed ${VCX_CHAOS_TEST_SEED};")
      set_tests_properties(${name} PROPERTIES
        LABELS "integration;chaos" TIMEOUT ${VCX_CASE_TEST_TIMEOUT} PROCESSORS ${procs}
        ENVIRONMENT "VCX_CHAOS_DELAY_US=${VCX_CHAOS_TEST_DELAY_US};VCX_CHAOS_SEED=${VCX_CHAOS_TEST_SEED}")
    endforeach()
  endforeach()
endforeach()

set(VCX_CHAOS_SHM_PROGRAMS rma_locks sync collectives nbc p2p_basic)
foreach(prog IN LISTS VCX_CHAOS_SHM_PROGRAMS)
  if(NOT prog IN_LIST VCX_TEST_PROGRAMS)
    continue()
  endif()
  foreach(mode stall nostall)
    set(extra --stall waits)
    if(mode STREQUAL "nostall")
      set(extra --stall never)
    endif()
    set(name integration.chaos.${prog}.n3.${mode}.shm-transport)
    add_test(NAME ${name}
      COMMAND ${Python3_EXECUTABLE} ${VCX_RUN_CASE}
              --vcx-run $<TARGET_FILE:vcx-run> --vcx-trace $<TARGET_FILE:vcx-trace>
              --mpiexec ${VCX_MPIEXEC} --program $<TARGET_FILE:vcx-test-${prog}> -n 3
              --timeout ${VCX_CASE_STEP_TIMEOUT} --transport shm ${extra}
              "--expect-stderr=random 0..${VCX_CHAOS_TEST_DELAY_US} us (VCX_CHAOS_DELAY_US), seed ${VCX_CHAOS_TEST_SEED};")
    set_tests_properties(${name} PROPERTIES
      LABELS "integration;chaos" TIMEOUT ${VCX_CASE_TEST_TIMEOUT} PROCESSORS 6
      ENVIRONMENT "VCX_CHAOS_DELAY_US=${VCX_CHAOS_TEST_DELAY_US};VCX_CHAOS_SEED=${VCX_CHAOS_TEST_SEED}")
  endforeach()
endforeach()

# A bad value stops the tool job before the program starts, with one line
# from the tools saying what is wrong.
add_test(NAME integration.chaos.bad_value
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/chaos_bad_value.py
          --vcx-run $<TARGET_FILE:vcx-run> --timeout ${VCX_CASE_STEP_TIMEOUT})
set_tests_properties(integration.chaos.bad_value PROPERTIES
  LABELS "integration;chaos" TIMEOUT ${VCX_SELFCHECK_TEST_TIMEOUT} PROCESSORS 2)
