# The analysis views: each chart holds the engine's numbers, settings recompute, refusals keep
# the charts. Set FLASHVIZ_ANALYSIS_SHOTS=<folder> to also write every chart as a PNG there.
# (tests/core already has a tst_analysis for the engine's side, hence the gui_ prefix.)
flashviz_add_test(tst_gui_analysis SOURCES ${CMAKE_CURRENT_LIST_DIR}/tst_analysis.cpp LIBS flashviz_gui_analysis)
