// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel symbols that come and go (kdyn.h). This part owns the table: an array of symbols in the
 * order the kernel reported them, their names, the bounds of everything it ever held (so that the
 * kernel's own text costs one comparison), and the window lookups prefer. A lookup scans: only
 * addresses inside the bounds (BPF code) get that far, and the table is small and bounded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kdyn.h"
#include "lib/vec.h"

struct kdyn {
	struct kdyn_sym *syms;
	size_t n, cap;
	uint64_t lo, hi; /* every symbol ever held lies in [lo, hi) */
	uint64_t from_ns, to_ns;
	uint64_t dropped;
};

struct kdyn *kdyn__new(void)
{
	struct kdyn *k = calloc(1, sizeof(*k));

	if (k) {
		k->lo = UINT64_MAX;
		k->to_ns = UINT64_MAX;
	}
	return k;
}

void kdyn__free(struct kdyn *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->syms[i].name);
	free(k->syms);
	free(k);
}

/* Room for one more: a full table forgets its oldest unregistered symbol, if it has one. */
static int make_room(struct kdyn *k)
{
	if (k->n < KDYN_MAX)
		return vec_grow(&k->syms, &k->cap, k->n + 1, sizeof(*k->syms), 64) ? -ENOMEM : 0;
	for (size_t i = 0; i < k->n; i++) {
		if (!k->syms[i].unreg_ns)
			continue;
		free(k->syms[i].name);
		memmove(&k->syms[i], &k->syms[i + 1], (k->n - i - 1) * sizeof(*k->syms));
		k->n--;
		return 0;
	}
	k->dropped++;
	return -ENOSPC;
}

static int add(struct kdyn *k, const struct kdyn_sym *s, const char *name, size_t name_len)
{
	size_t len = strnlen(name, name_len < KDYN_NAME_MAX ? name_len : KDYN_NAME_MAX);
	int err;

	if (!s->len || s->addr + s->len < s->addr)
		return -EINVAL;
	err = make_room(k);
	if (err)
		return err;
	k->syms[k->n] = *s;
	k->syms[k->n].name = strndup(name, len);
	if (!k->syms[k->n].name)
		return -ENOMEM;
	if (s->addr < k->lo)
		k->lo = s->addr;
	if (s->addr + s->len > k->hi)
		k->hi = s->addr + s->len;
	k->n++;
	return 0;
}

int kdyn__register(struct kdyn *k, uint64_t addr, uint64_t len, bool bpf, const char *name,
		   size_t name_len, uint64_t time_ns)
{
	const struct kdyn_sym s = {.addr = addr, .len = len, .reg_ns = time_ns, .bpf = bpf};

	return add(k, &s, name, name_len);
}

int kdyn__unregister(struct kdyn *k, uint64_t addr, uint64_t len, bool bpf, const char *name,
		     size_t name_len, uint64_t time_ns)
{
	const struct kdyn_sym s = {
		.addr = addr, .len = len, .unreg_ns = time_ns ? time_ns : 1, .bpf = bpf};

	for (size_t i = k->n; i-- > 0;) {
		if (k->syms[i].addr == addr && !k->syms[i].unreg_ns) {
			k->syms[i].unreg_ns = s.unreg_ns;
			return 0;
		}
	}
	return add(k, &s, name, name_len);
}

void kdyn__window(struct kdyn *k, uint64_t from_ns, uint64_t to_ns)
{
	k->from_ns = from_ns;
	k->to_ns = to_ns;
}

static bool in_window(const struct kdyn *k, const struct kdyn_sym *s)
{
	return s->reg_ns < k->to_ns && (!s->unreg_ns || s->unreg_ns >= k->from_ns);
}

const struct kdyn_sym *kdyn__find(const struct kdyn *k, uint64_t addr)
{
	const struct kdyn_sym *best = NULL, *newest = NULL;

	if (!k || addr < k->lo || addr >= k->hi)
		return NULL;
	/* In report order: a later symbol at the address is the newer one. */
	for (size_t i = 0; i < k->n; i++) {
		const struct kdyn_sym *s = &k->syms[i];

		if (addr < s->addr || addr - s->addr >= s->len)
			continue;
		newest = s;
		if (in_window(k, s))
			best = s;
	}
	return best ? best : newest;
}

size_t kdyn__count(const struct kdyn *k)
{
	return k ? k->n : 0;
}

uint64_t kdyn__dropped(const struct kdyn *k)
{
	return k ? k->dropped : 0;
}
