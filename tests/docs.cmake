# The user's documentation: README.md's length, width, contents and knob table; relative links
# in README.md, CONTRIBUTING.md and docs/ (issue 31).
burnmark_test(test_docs test_docs.cpp)
target_include_directories(test_docs PRIVATE ${PROJECT_SOURCE_DIR}/include)
