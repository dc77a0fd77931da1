/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The region runtime's cost models (perch_region_begin_n()): each sized region's reservoir of
 * (size, time) points and its log2 buckets, per thread, sampled without a lock or a system call.
 *
 * runtime/perch.c includes it where it stands (one compilation unit, so the hot path inlines as
 * before): it uses the definitions before it there.
 */

/* xorshift64: the reservoir's randomness, per thread (no lock, no system call). */
static inline uint64_t model_rand(struct perch_abi_models *m)
{
	uint64_t x = m->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	m->rng = x;
	return x;
}

/* A uniform integer in [0, bound) without a division (Lemire's multiply-shift). */
static inline uint64_t model_below(struct perch_abi_models *m, uint64_t bound)
{
	return (uint64_t)(((unsigned __int128)model_rand(m) * bound) >> 64);
}

/* Natural logarithm for 0 < x < 2^1023 without libm (the runtime links only libc): x = m 2^e,
 * m in [1, 2), ln m = 2 atanh((m - 1) / (m + 1)) by its series (error < 1e-7: enough to draw a
 * gap between sampled calls). */
static double model_ln(double x)
{
	uint64_t bits;
	double m, s, s2;
	int e;

	memcpy(&bits, &x, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ((1ull << 52) - 1)) | (1023ull << 52);
	memcpy(&m, &bits, sizeof(m));
	s = (m - 1) / (m + 1);
	s2 = s * s;
	return e * 0.6931471805599453 +
	       2 * s * (1 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9)))));
}

/* e^y for y <= 0 without libm: 2^(y / ln 2) split into 2^k (the exponent bits) and 2^f by its
 * Taylor series (f in [0, 1), error < 1e-7); 0 below 2^-1000. */
static double model_exp(double y)
{
	double z = y * 1.4426950408889634, f, p;
	int64_t k;
	uint64_t bits;

	if (z < -1000)
		return 0;
	k = (int64_t)z - (z < (int64_t)z);
	f = (z - (double)k) * 0.6931471805599453;
	p = 1 + f * (1 + f * (0.5 + f * (1.0 / 6 + f * (1.0 / 24 + f * (1.0 / 120 + f / 720)))));
	bits = (uint64_t)(k + 1023) << 52;
	memcpy(&z, &bits, sizeof(z));
	return p * z;
}

/* A uniform double in (0, 1). */
static double model_uniform(struct perch_abi_models *m)
{
	return ((double)(model_rand(m) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Algorithm L (Li, 1994): W shrinks as a uniform sample of the calls so far would, and the gap
 * to the next call that enters the reservoir is geometric in 1 - W; after call `at`. */
static void model_next(struct perch_abi_models *m, struct perch_abi_model *md, uint64_t at)
{
	double l1w, gap;

	md->w *= model_exp(model_ln(model_uniform(m)) / PERCH_MODEL_POINTS);
	l1w = md->w < 1e-9 ? -md->w : model_ln(1 - md->w);
	gap = l1w < 0 ? model_ln(model_uniform(m)) / l1w : 4e18;
	md->next = at + 1 + (gap < 4e18 ? (uint64_t)gap : (uint64_t)4e18);
}

/* The call that Algorithm L picked: into a random place of the full reservoir. */
static __attribute__((noinline)) void model_sample(struct perch_abi_thread *th,
						   struct perch_abi_model *md, uint64_t seen,
						   uint64_t n, uint64_t t)
{
	if (seen < PERCH_MODEL_POINTS) {
		md->points[seen] = (struct perch_abi_point){n, t};
		if (seen + 1 < PERCH_MODEL_POINTS) {
			md->next = seen + 1;
			return;
		}
		md->w = 1;
	} else {
		md->points[model_below(&th->models, PERCH_MODEL_POINTS)] =
			(struct perch_abi_point){n, t};
	}
	model_next(&th->models, md, seen);
}

/* A free slot for node, or NULL when the table is full (the call is only counted). */
static __attribute__((noinline)) struct perch_abi_model *model_take(struct perch_abi_thread *th,
								    uint32_t node)
{
	struct perch_abi_models *m = &th->models;
	struct perch_abi_model *md;

	if (m->nslots >= PERCH_MODEL_SLOTS)
		return NULL;
	md = &m->slots[m->nslots];
	memset(md, 0, offsetof(struct perch_abi_model, points));
	for (uint32_t b = 0; b < PERCH_MODEL_BUCKETS; b++)
		md->buckets[b].min_t = UINT64_MAX;
	md->node = node;
	md->name = th->nodes[node].name;
	m->slot_of[node] = (uint16_t)(m->nslots + 1);
	/* The slot before the count that shows it to the profiler. */
	__atomic_store_n(&m->nslots, m->nslots + 1, __ATOMIC_RELEASE);
	return md;
}

static inline struct perch_abi_model *model_slot(struct perch_abi_thread *th, uint32_t node)
{
	uint32_t s = th->models.slot_of[node];

	return __builtin_expect(s != 0, 1) ? &th->models.slots[s - 1] : model_take(th, node);
}

/* One sized call of node: its log2(n) bucket and, when its turn comes, the reservoir. */
static inline void model_add(struct perch_abi_thread *th, uint32_t node, uint64_t n, uint64_t t)
{
	struct perch_abi_model *md = model_slot(th, node);
	struct perch_abi_bucket *b;
	double dt = (double)(int64_t)t; /* t, n < 2^63: the one-instruction conversion */
	uint64_t seen;

	if (!md) {
		th->models.over++;
		return;
	}
	b = &md->buckets[64 - __builtin_clzll(n)];
	b->count++;
	b->sum_n += n;
	b->sum_t += t;
	b->sum_t2 += dt * dt;
	b->sum_nt += (double)(int64_t)n * dt;
	if (t < b->min_t)
		b->min_t = t;
	if (t > b->max_t)
		b->max_t = t;
	seen = md->seen++;
	if (__builtin_expect(seen == md->next, 0))
		model_sample(th, md, seen, n, t);
}

static void model_reset(struct perch_abi_thread *th)
{
	struct perch_abi_models *m = &th->models;

	memset(m->slot_of, 0, th->nnodes * sizeof(m->slot_of[0]));
	m->slot_of[PERCH_NODE_OTHER] = 0;
	m->nslots = 0;
	m->over = 0;
	if (!m->rng)
		m->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)th->tid << 17) ^ (uintptr_t)th;
}
