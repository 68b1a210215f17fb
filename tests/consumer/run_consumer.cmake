# Installs the built library into a scratch prefix, then configures, builds and runs the
# consumer project against it.
file(REMOVE_RECURSE ${LT_WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${LT_BUILD_DIR} --prefix ${LT_WORK_DIR}/prefix
  RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "install failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${LT_CONSUMER_SRC} -B ${LT_WORK_DIR}/build
  -G ${LT_GENERATOR} -DCMAKE_PREFIX_PATH=${LT_WORK_DIR}/prefix RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer configure failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${LT_WORK_DIR}/build RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer build failed: ${rc}")
endif()
execute_process(COMMAND ${LT_WORK_DIR}/build/consumer RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "consumer run failed: ${rc}")
endif()
