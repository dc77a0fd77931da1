/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The symbolizer's queries in one call each (symbolizer__module(), then the sym_module__ query),
 * for tests that ask one thing of a module by its id: the query's result, or the module's
 * failure (-ENOENT, -ENOEXEC) with the outputs cleared as the query would clear them.
 */
#ifndef PERCH_TESTS_SYMCALL_H
#define PERCH_TESTS_SYMCALL_H

#include <string.h>

#include "symbolize/symbolizer.h"

static inline int sym_resolve(struct symbolizer *s, const struct sym_module_id *id,
			      const char *open_path, uint64_t off, struct sym_result *r)
{
	struct sym_module *m;
	int err = symbolizer__module(s, id, open_path, &m);

	memset(r, 0, sizeof(*r));
	return err ? err : sym_module__resolve(m, off, r);
}

static inline int sym_read(struct symbolizer *s, const struct sym_module_id *id,
			   const char *open_path, uint64_t off, void *buf, size_t len)
{
	struct sym_module *m;
	int err = symbolizer__module(s, id, open_path, &m);

	return err ? err : sym_module__read(m, off, buf, len);
}

static inline int sym_resolve_inline(struct symbolizer *s, const struct sym_module_id *id,
				     const char *open_path, uint64_t off, struct sym_frame *frames,
				     size_t max, size_t *n)
{
	struct sym_module *m;
	int err = symbolizer__module(s, id, open_path, &m);

	if (n)
		*n = 0;
	return err ? err : sym_module__resolve_inline(m, off, frames, max, n);
}

static inline int sym_build_id(struct symbolizer *s, const struct sym_module_id *id,
			       const char *open_path, const char **hex)
{
	struct sym_module *m;
	int err = symbolizer__module(s, id, open_path, &m);

	*hex = NULL;
	return err ? err : sym_module__build_id(m, hex);
}

static inline int sym_debug_path(struct symbolizer *s, const struct sym_module_id *id,
				 const char *open_path, const char **path)
{
	struct sym_module *m;
	int err = symbolizer__module(s, id, open_path, &m);

	*path = NULL;
	return err ? err : sym_module__debug_path(m, path);
}

static inline int sym_vaddr_to_offset(struct symbolizer *s, const struct sym_module_id *id,
				      const char *open_path, uint64_t vaddr, uint64_t *off)
{
	struct sym_module *m;
	int err = symbolizer__module(s, id, open_path, &m);

	*off = 0;
	return err ? err : sym_module__vaddr_to_offset(m, vaddr, off);
}

static inline int sym_symbol_file(struct symbolizer *s, const struct sym_module_id *id,
				  const char *open_path, uint64_t off, const char **file)
{
	struct sym_module *m;
	int err = symbolizer__module(s, id, open_path, &m);

	*file = NULL;
	return err ? err : sym_module__symbol_file(m, off, file);
}

static inline int sym_discriminator(struct symbolizer *s, const struct sym_module_id *id,
				    const char *open_path, uint64_t off, unsigned int *disc)
{
	struct sym_module *m;
	int err = symbolizer__module(s, id, open_path, &m);

	*disc = 0;
	return err ? err : sym_module__discriminator(m, off, disc);
}

#endif /* PERCH_TESTS_SYMCALL_H */
