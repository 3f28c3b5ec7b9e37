# Packaging tests: the man pages lint clean and match the programs.
TESTS += selftests/packaging/man_pages.sh
# Nothing here runs the userspace under test in a way sanitizers would add to.
SAN_SKIP += selftests/packaging/%
