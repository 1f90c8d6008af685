find_package(nlohmann_json 3 REQUIRED)
flashviz_add_test(tst_cli SOURCES tst_cli.cpp LIBS flashviz_cli_lib nlohmann_json::nlohmann_json)
