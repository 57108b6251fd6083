# Runs CMD with ^-separated ARGS; checks the exit code and that stdout+stderr
# match EXPECT_OUT (a regex) and, when given, do not match EXPECT_NO.
string(REPLACE "^" ";" args "${ARGS}")
execute_process(COMMAND ${CMD} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 60)
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_OUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUT}")
  message(FATAL_ERROR "output does not match '${EXPECT_OUT}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_NO AND "${out}${err}" MATCHES "${EXPECT_NO}")
  message(FATAL_ERROR "output matches '${EXPECT_NO}', which it must not\nstdout:\n${out}\nstderr:\n${err}")
endif()
