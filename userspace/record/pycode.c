// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython code objects read from a live process (see pycode.h): the code object's head in one
 * read, then its name, file and line table, each bounded. Strings are PEP 393 compact unicode
 * objects: the state word says the kind (1, 2 or 4 bytes a character) and whether the object is
 * compact and ASCII; an ASCII one's characters follow the PyASCIIObject, another compact one's
 * the PyCompactUnicodeObject. The bits are the same from 3.11 to 3.13: interned 2 bits, kind 3,
 * compact 1, ascii 1.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "pycode.h"
#include "symbolize/pyline.h"

#define HEAD_MAX 512 /* bytes of a code object's head read at once: every field used lies in it */

struct entry {
	uint64_t addr, tag;
	int err; /* 0: code holds the names; else the errno it failed with */
	struct py_code code;
};

struct pycode_cache {
	pid_t pid;
	struct py_layout l;
	struct u64map index; /* hash of (addr, tag) -> 1 + entry */
	struct entry *e;
	size_t n, cap;
	size_t bytes; /* of names and tables kept */
};

int py_layout_for(uint32_t version_hex, struct py_layout *out)
{
	unsigned int minor = (version_hex >> 16) & 0xff;

	if ((version_hex >> 24) != 3 || (minor != 11 && minor != 12))
		return -ENOTSUP;
	*out = (struct py_layout){
		.version_hex = version_hex,
		.code_filename = 112,
		.code_name = 120,
		.code_qualname = 128,
		.code_firstlineno = minor == 11 ? 72 : 68,
		.code_linetable = 136,
		.code_adaptive = minor == 11 ? 184 : 192,
		.unicode_length = 16,
		.unicode_state = 32,
		.ascii_size = minor == 11 ? 48 : 40,
		.compact_size = minor == 11 ? 72 : 56,
		.bytes_size = 16,
		.bytes_sval = 32,
	};
	return 0;
}

struct pycode_cache *pycode_cache__new(pid_t pid, const struct py_layout *l)
{
	struct pycode_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->pid = pid;
	c->l = *l;
	return c;
}

void pycode_cache__free(struct pycode_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->e[i].code.qualname);
		free(c->e[i].code.filename);
		free(c->e[i].code.linetable);
	}
	free(c->e);
	u64map__clear(&c->index);
	free(c);
}

static int peek(const struct pycode_cache *c, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
	ssize_t got = process_vm_readv(c->pid, &local, 1, &remote, 1, 0);

	if (got == (ssize_t)len)
		return 0;
	return got < 0 && errno == ESRCH ? -ESRCH : -EIO;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* One code point as UTF-8 into out (room for 4); a surrogate or one past Unicode as U+FFFD. */
static size_t utf8(uint32_t cp, char *out)
{
	if (cp >= 0xd800 && (cp < 0xe000 || cp > 0x10ffff))
		cp = 0xfffd;
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* n characters of kind bytes each (1, 2, 4) as UTF-8, NUL-terminated; an ASCII string's bytes
 * above 0x7f (it said it was ASCII: it is not) as U+FFFD. */
static char *to_utf8(const uint8_t *raw, size_t n, unsigned int kind, bool ascii)
{
	char *s = malloc(n * 4 + 1), *o = s;

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t cp = kind == 1 ? raw[i] : 0;

		if (kind == 2)
			cp = (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
		else if (kind == 4)
			memcpy(&cp, raw + 4 * i, 4);
		o += utf8(ascii && cp > 0x7f ? 0xfffd : cp, o);
	}
	*o = '\0';
	return s;
}

/* The compact unicode object at addr, at most max characters of it (longer: cut), as UTF-8. */
static char *read_str(const struct pycode_cache *c, uint64_t addr, size_t max, int *err)
{
	const struct py_layout *l = &c->l;
	uint8_t head[128], *raw;
	uint32_t state;
	uint64_t len;
	unsigned int kind;
	bool ascii;
	char *s;

	if (!addr || l->compact_size > sizeof(head) || l->unicode_state + 4 > sizeof(head) ||
	    l->unicode_length + 8 > sizeof(head) || (*err = peek(c, addr, head, l->compact_size)))
		return *err = *err ? *err : -EIO, NULL;
	memcpy(&state, head + l->unicode_state, sizeof(state));
	len = u64_at(head + l->unicode_length);
	kind = state >> 2 & 7;
	ascii = state >> 6 & 1;
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1) ||
	    len > (uint64_t)1 << 40)
		return *err = -EINVAL, NULL;
	len = len < max ? len : max;
	raw = malloc(len * kind + 1);
	if (!raw)
		return *err = -ENOMEM, NULL;
	*err = peek(c, addr + (ascii ? l->ascii_size : l->compact_size), raw, len * kind);
	s = *err ? NULL : to_utf8(raw, len, kind, ascii);
	free(raw);
	if (!s && !*err)
		*err = -ENOMEM;
	return s;
}

/* The bytes object at addr (its first PYCODE_TABLE_MAX bytes) into code's line table. */
static int read_table(const struct pycode_cache *c, uint64_t addr, struct py_code *code)
{
	uint8_t head[64];
	uint64_t len;
	int err;

	if (!addr || c->l.bytes_sval > sizeof(head) || c->l.bytes_size + 8 > sizeof(head))
		return -EIO;
	err = peek(c, addr, head, c->l.bytes_sval);
	if (err)
		return err;
	len = u64_at(head + c->l.bytes_size);
	if (len > (uint64_t)1 << 40)
		return -EINVAL;
	code->nlinetable = len < PYCODE_TABLE_MAX ? len : PYCODE_TABLE_MAX;
	code->linetable = malloc(code->nlinetable + 1);
	if (!code->linetable)
		return -ENOMEM;
	return peek(c, addr + c->l.bytes_sval, code->linetable, code->nlinetable);
}

static size_t head_len(const struct py_layout *l)
{
	uint32_t end = 16; /* ob_refcnt, ob_type */

	end = l->code_qualname + 8 > end ? l->code_qualname + 8 : end;
	end = l->code_filename + 8 > end ? l->code_filename + 8 : end;
	end = l->code_linetable + 8 > end ? l->code_linetable + 8 : end;
	end = l->code_firstlineno + 4 > end ? l->code_firstlineno + 4 : end;
	return end;
}

/* Read the code object at e->addr into e->code, or say why not. */
static int read_code(struct pycode_cache *c, struct entry *e)
{
	const struct py_layout *l = &c->l;
	uint8_t head[HEAD_MAX];
	int32_t first;
	int err;

	if (l->code_qualname + 8 > sizeof(head) || l->code_filename + 8 > sizeof(head) ||
	    l->code_linetable + 8 > sizeof(head) || l->code_firstlineno + 4 > sizeof(head))
		return -EINVAL;
	/* no further than the last field used: the object may end a mapping */
	err = peek(c, e->addr, head, head_len(l));
	if (err)
		return err;
	if ((l->code_type && u64_at(head + 8) != l->code_type) ||
	    u64_at(head + l->code_qualname) != e->tag)
		return -ESTALE;
	memcpy(&first, head + l->code_firstlineno, sizeof(first));
	e->code.firstlineno = first;
	e->code.qualname = read_str(c, e->tag, PYCODE_NAME_MAX, &err);
	if (!err)
		e->code.filename =
			read_str(c, u64_at(head + l->code_filename), PYCODE_PATH_MAX, &err);
	if (!err)
		err = read_table(c, u64_at(head + l->code_linetable), &e->code);
	return err;
}

static uint64_t key_of(uint64_t addr, uint64_t tag)
{
	return addr ^ (tag * 0x9e3779b97f4a7c15ull);
}

const struct py_code *pycode_cache__get(struct pycode_cache *c, uint64_t addr, uint64_t tag)
{
	uint64_t key = key_of(addr, tag), i;
	struct entry *e;

	if (u64map__get(&c->index, key, &i) && c->e[i - 1].addr == addr && c->e[i - 1].tag == tag) {
		e = &c->e[i - 1];
		errno = e->err;
		return e->err ? NULL : &e->code;
	}
	if (c->bytes >= PYCODE_PROC_BUDGET) {
		errno = ENOSPC;
		return NULL;
	}
	if (vec_grow(&c->e, &c->cap, c->n + 1, sizeof(*c->e), 64) ||
	    u64map__put(&c->index, key, c->n + 1)) {
		errno = ENOMEM;
		return NULL;
	}
	e = &c->e[c->n++];
	*e = (struct entry){.addr = addr, .tag = tag};
	e->err = -read_code(c, e);
	if (e->err) {
		free(e->code.qualname);
		free(e->code.filename);
		free(e->code.linetable);
		memset(&e->code, 0, sizeof(e->code));
		errno = e->err;
		return NULL;
	}
	c->bytes += strlen(e->code.qualname) + strlen(e->code.filename) + e->code.nlinetable +
		    sizeof(*e);
	return &e->code;
}

int pycode_line(const struct py_code *code, uint32_t unit)
{
	int line;

	if (pyline_find(code->linetable, code->nlinetable, code->firstlineno, unit, &line))
		return -1;
	return line;
}
