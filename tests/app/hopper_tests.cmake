# The Hopper page (issue 17): its model, the page with simulated traces (hopper_trace_support.h),
# trace files, recording through a stand-in, the window's tab and command line. Set
# FLASHVIZ_HOPPER_SHOTS=<folder> to also write the page at the lecture sizes for every variant.
flashviz_add_test(tst_hopper_page SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_hopper_page.cpp
                  ${CMAKE_CURRENT_LIST_DIR}/hopper_trace_support.h LIBS flashviz_gui_shell)
