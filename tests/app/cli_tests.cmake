find_package(nlohmann_json 3 REQUIRED)
flashviz_add_test(tst_cli SOURCES tst_cli.cpp LIBS flashviz_cli_lib nlohmann_json::nlohmann_json)
# hopper-trace: the shipped traces, a saved file, the refusals (no GPU needed).
flashviz_add_test(tst_cli_hopper SOURCES tst_cli_hopper.cpp LIBS flashviz_cli_lib)
# run and steps with Q, K, V and dO from .npy files written by xtensor's dump_npy.
flashviz_add_test(tst_cli_npy SOURCES tst_cli_npy.cpp LIBS flashviz_cli_lib nlohmann_json::nlohmann_json
                  xtensor)
# The bad-input matrix runs the real executables with bad arguments; its GUI rows need flashviz
# and are skipped (QSKIP, with the reason) where the GUI is not built.
flashviz_add_test(tst_bad_input SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/tst_bad_input.cpp LIBS Qt6::Core)
target_compile_definitions(tst_bad_input PRIVATE FLASHVIZ_CLI_EXECUTABLE="$<TARGET_FILE:flashviz-cli>")
add_dependencies(tst_bad_input flashviz-cli)
if(TARGET flashviz)
  target_compile_definitions(tst_bad_input PRIVATE FLASHVIZ_EXECUTABLE="$<TARGET_FILE:flashviz>")
  add_dependencies(tst_bad_input flashviz)
endif()
