// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address sets for bench/symbolize.sh: `symbolize_addrs FILE N SEED` prints N addresses (0x hex,
 * one per line) of the function symbols of FILE (.symtab, else .dynsym): even lines a function's
 * first byte, odd lines a byte inside it, each function drawn uniformly from the distinct
 * (address, size) pairs with a fixed-seed generator, so every run and every tool gets the same
 * addresses. For a library whose .symtab is in a separate debug file, pass that file: its
 * addresses are the library's.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fn {
	uint64_t start;
	uint64_t size;
};

static uint64_t rng_state;

/* xorshift64*: the same sequence everywhere for the same seed. */
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static int fn_cmp(const void *pa, const void *pb)
{
	const struct fn *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->size < b->size ? -1 : a->size > b->size;
}

/* Defined function symbols with a size, from the table of type `type`; appended to *v. */
static int collect(Elf *elf, Elf64_Word type, struct fn **v, size_t *n, size_t *cap)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !data || !sh.sh_entsize)
			continue;
		for (i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			int t;

			if (!gelf_getsym(data, (int)i, &sym))
				return -EINVAL;
			t = GELF_ST_TYPE(sym.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || !sym.st_size ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
				continue;
			if (*n == *cap) {
				size_t ncap = *cap ? *cap * 2 : 4096;
				struct fn *p = realloc(*v, ncap * sizeof(*p));

				if (!p)
					return -ENOMEM;
				*v = p;
				*cap = ncap;
			}
			(*v)[(*n)++] = (struct fn){sym.st_value, sym.st_size};
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fn *v = NULL;
	size_t n = 0, cap = 0, i, k, want;
	int fd, ret = 1;
	Elf *elf;

	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE N SEED\n", argv[0]);
		return 2;
	}
	want = strtoull(argv[2], NULL, 0);
	rng_state = strtoull(argv[3], NULL, 0) | 1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 1;
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "symbolize_addrs: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || collect(elf, SHT_SYMTAB, &v, &n, &cap) ||
	    (!n && collect(elf, SHT_DYNSYM, &v, &n, &cap)) || !n) {
		fprintf(stderr, "symbolize_addrs: %s: no function symbols\n", argv[1]);
		goto cleanup;
	}
	qsort(v, n, sizeof(*v), fn_cmp);
	for (i = 1, k = 1; i < n; i++) {
		if (v[i].start != v[k - 1].start)
			v[k++] = v[i];
	}
	n = k;
	for (i = 0; i < want; i++) {
		const struct fn *f = &v[rng_next() % n];
		uint64_t off = i % 2 ? rng_next() % f->size : 0;

		printf("0x%" PRIx64 "\n", f->start + off);
	}
	ret = fflush(stdout) ? 1 : 0;
cleanup:
	elf_end(elf);
	close(fd);
	free(v);
	return ret;
}
