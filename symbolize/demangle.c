// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * C++ name demangling through the C++ runtime's __cxa_demangle. The reference is weak, so perch
 * links with or without -lstdc++; when the link did not bind it (no -lstdc++, or --as-needed,
 * the default of Debian's gcc, dropped the library because a weak reference does not count),
 * the runtime is looked up once in the process and then loaded from libstdc++.so.6. Without any,
 * names stay mangled.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

/* <cxxabi.h> is C++ only; this is its declaration, weak: see the file comment. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status)
	__attribute__((weak));

static cxa_demangle_fn demangler;

static void find_demangler(void)
{
	void *h;

	demangler = __cxa_demangle;
	if (demangler)
		return;
	demangler = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (demangler)
		return;
	/* Never closed: the function must stay valid for the life of the process. */
	h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		demangler = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
}

bool demangle__available(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, find_demangler);
	return demangler != NULL;
}

char *demangle__name(const char *raw)
{
	int status = 0;
	char *out;

	/* Itanium ABI names start with _Z; anything else (C names) is left alone without a call. */
	if (!raw || strncmp(raw, "_Z", 2) != 0 || !demangle__available())
		return NULL;
	out = demangler(raw, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
