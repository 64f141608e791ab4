// lib_app_cxx.cpp - libt410trace from C++ (tests/test_lib.c): the header
// must compile as C++ and the symbols must link unmangled (extern "C").
#include <t410trace.h>

#include <cstdio>

int main()
{
	// Run without a recorder: every call is a no-op returning 0.
	int r = t410_available() | t410_bookmark("cxx") | t410_trigger();

	std::printf("%s\n", r == 0 ? "ok" : t410_errmsg());
	return r == 0 ? 0 : 1;
}
