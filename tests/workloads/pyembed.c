// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Debian's CPython 3.11 from its shared library: the interpreter's whole main, linked against
 * libpython3.11.so (what an embedding program or a shared-libpython build runs), so
 * tests/integration/python.sh walks an interpreter whose _PyRuntime lives in a library, not
 * in the executable (/usr/bin/python3.11 links it in statically).
 *
 *   pyembed SCRIPT ARG...     as python3.11 SCRIPT ARG...
 */
#include <Python.h>

int main(int argc, char **argv)
{
	return Py_BytesMain(argc, argv);
}
