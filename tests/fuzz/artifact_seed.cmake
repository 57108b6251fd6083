# Builds a real artifact (the seed of the artifact fuzz target) and writes
# truncated copies of it: a damaged artifact must be refused, not crash.
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${REFLEXC} build ${KB} -o ${OUT}/bench.rfxkb RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "reflexc build failed (${rc}): ${err}")
endif()
file(SIZE ${OUT}/bench.rfxkb n)
foreach(keep 9 64 512 2048)
  math(EXPR bytes "${n} * ${keep} / 4096")
  execute_process(COMMAND head -c ${bytes} ${OUT}/bench.rfxkb OUTPUT_FILE ${OUT}/truncated_${keep})
endforeach()
