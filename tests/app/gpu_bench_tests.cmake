# The GPU benchmark page: without a GPU it says why and keeps Run off; saved results are drawn
# as they were measured; malformed files and refused requests give messages, not crashes. Set
# FLASHVIZ_GPUBENCH_SHOT=<file.png> (and FLASHVIZ_GPUBENCH_SHOT_SIZE=WxH) to also render the page
# as it opens without results of the user's own: the H200 run it ships.
find_package(nlohmann_json 3 REQUIRED)
flashviz_add_test(tst_gpu_bench_view
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_gpu_bench_view.cpp
  LIBS flashviz_gui_gpubench nlohmann_json::nlohmann_json)
target_compile_definitions(tst_gpu_bench_view PRIVATE
  FLASHVIZ_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
