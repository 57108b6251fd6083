# `reflex events` end to end on tests/ingest/data/bundle-tiny (interfaces.md §7).
# Run by ctest: cmake -DREFLEX=<binary> -DDATA=<dir> -P events_e2e.cmake
cmake_minimum_required(VERSION 3.25)

function(run_events out_var rc_var err_var)
  execute_process(COMMAND ${REFLEX} events ${ARGN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

# expect("<if() condition>" "message"): the condition is evaluated in the
# caller's scope.
macro(expect cond msg)
  cmake_language(EVAL CODE "if(NOT (${cond}))\n message(FATAL_ERROR \"FAILED: ${msg}\")\nendif()")
endmacro()

# --- the happy path ---
run_events(out rc err --kb ${DATA}/kb --stats ${DATA}/bundle-tiny)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exit ${rc}\nstderr:\n${err}")
endif()
string(STRIP "${out}" out)
string(REPLACE "\n" ";" lines "${out}")
list(LENGTH lines n)
message(STATUS "stdout:\n${out}\nstderr:\n${err}")
if(NOT n EQUAL 5)
  message(FATAL_ERROR "expected 5 events, got ${n}")
endif()

set(prev_ts "")
set(seen "")
foreach(line IN LISTS lines)
  string(JSON ev GET "${line}" event)
  string(JSON dev GET "${line}" device)
  string(JSON ts ERROR_VARIABLE ts_err GET "${line}" ts)
  string(JSON evidence GET "${line}" evidence)
  string(JSON raw GET "${line}" line)
  string(JSON fc ERROR_VARIABLE fc_err GET "${line}" fault_class)
  # Every documented key is present.
  foreach(key event fault_class device host ts fields evidence line)
    string(JSON t ERROR_VARIABLE key_err TYPE "${line}" ${key})
    if(key_err)
      message(FATAL_ERROR "missing key ${key} in ${line}")
    endif()
  endforeach()
  if(NOT "${prev_ts}" STREQUAL "" AND "${ts}" STRLESS "${prev_ts}")
    message(FATAL_ERROR "not sorted by time: ${ts} after ${prev_ts}")
  endif()
  set(prev_ts "${ts}")
  list(APPEND seen "${ev}@${dev}")
  if(ev STREQUAL "xid119_gsp_rpc_timeout")
    expect("fc STREQUAL \"gpu_hw\"" "standard class of gsp_firmware is gpu_hw (${fc})")
    string(JSON sub GET "${line}" subclass)
    expect("sub STREQUAL \"gsp_firmware\"" "subclass")
    expect("evidence STREQUAL \"hosts/node-0017/kern.log:1\"" "evidence ${evidence}")
  elseif(ev STREQUAL "xid95_uncontained_ecc")
    string(JSON count GET "${line}" count)
    expect("count EQUAL 3" "three Xid 95 lines fold into one event (count ${count})")
    string(JSON first GET "${line}" first)
    string(JSON last GET "${line}" last)
    expect("first STREQUAL \"2026-03-05T10:11:20.000000Z\"" "first ${first}")
    expect("last STREQUAL \"2026-03-05T10:11:22.000000Z\"" "last ${last}")
    string(JSON fct TYPE "${line}" fault_class)
    expect("fct STREQUAL \"NULL\"" "an event without class has null fault_class (${fct})")
  elseif(ev STREQUAL "xid79_fallen_off_bus" AND dev MATCHES "@")
    string(JSON ph GET "${line}" placeholder)
    expect("ph STREQUAL ON OR ph" "placeholder flag")
  elseif(ev STREQUAL "nccl_watchdog_timeout")
    string(JSON host GET "${line}" host)
    expect("evidence STREQUAL \"hosts/node-0018/train.log:1\"" "evidence ${evidence}")
  endif()
endforeach()
foreach(want
    "xid119_gsp_rpc_timeout@node-0017/gpu3"
    "xid95_uncontained_ecc@node-0017/gpu0"
    "xid79_fallen_off_bus@node-0017/gpu@0000:aa:00.0"
    "xid79_fallen_off_bus@node-0018/gpu0"
    "nccl_watchdog_timeout@job/job-42/rank2")
  list(FIND seen "${want}" i)
  expect("i GREATER -1" "expected ${want} in ${seen}")
endforeach()
string(FIND "${err}" "\"per_signature_hits\"" has_stats)
expect("has_stats GREATER -1" "--stats prints counters on stderr")

# --- --strict-transport: the `kernel:`-tagged syslog line no longer counts ---
run_events(out rc err --kb ${DATA}/kb --strict-transport ${DATA}/bundle-tiny)
expect("rc EQUAL 0" "strict exit ${rc}")
string(FIND "${out}" "node-0018/gpu0" strict_hit)
expect("strict_hit EQUAL -1" "strict transport refuses syslog text tagged kernel:")

# --- bad input exits 2 ---
run_events(out rc err --kb ${DATA}/kb ${DATA}/no-such-bundle)
expect("rc EQUAL 2" "missing bundle exits 2 (got ${rc})")
expect("out STREQUAL \"\"" "nothing on stdout for bad input")
run_events(out rc err --kb ${DATA}/kb --topology ${DATA}/kb/test.rfx ${DATA}/bundle-tiny)
expect("rc EQUAL 2" "bad topology exits 2 (got ${rc})")
run_events(out rc err --kb ${DATA}/no-such-kb ${DATA}/bundle-tiny)
expect("rc EQUAL 2" "bad KB exits 2 (got ${rc})")
run_events(out rc err --bogus-flag)
expect("rc EQUAL 2" "usage error exits 2 (got ${rc})")
run_events(out rc err --help)
expect("rc EQUAL 0" "--help exits 0 (got ${rc})")
