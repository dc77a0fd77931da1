// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The writer's blocks (struct wr_block): one row each, beside the reader's block parsers
 * (reader.c), in the order a compacted file holds them. A flush writes what each block has new,
 * in this order (the definitions before what names them); a compaction writes every block again
 * into a new file: each restarts its watermark from the file's start and writes all it keeps
 * (rewrite), or what it has pending (flush); a failed compaction puts every watermark back to
 * "all written". A new block is its own file (with its parser) and a row here.
 */
#include "writer_impl.h"

extern const struct wr_block wr_meta_block, wr_strings_block, wr_frames_block, wr_lines_block,
	wr_threads_block, wr_regions_block, wr_stats_block, wr_end_block; /* writer.c */
extern const struct wr_block wr_stacks_block, wr_keys_block, wr_modules_block, wr_windows_block,
	wr_timeline_block, wr_spans_block, wr_gpu_block; /* writer_time.c */
extern const struct wr_block wr_origins_block;		 /* origins.c */
extern const struct wr_block wr_cgroups_block;		 /* cgroups.c */
extern const struct wr_block wr_offspans_block;		 /* offspans.c */
extern const struct wr_block wr_offcpu_block;		 /* offcpu.c */
extern const struct wr_block wr_sizes_block;		 /* sizes.c */
extern const struct wr_block wr_metrics_block;		 /* metrics.c */
extern const struct wr_block wr_steps_block;		 /* steps.c */

static const struct wr_block *const blocks[] = {
	&wr_meta_block,	   &wr_strings_block,  &wr_frames_block,   &wr_lines_block,
	&wr_threads_block, &wr_stacks_block,   &wr_keys_block,	   &wr_modules_block,
	&wr_origins_block, &wr_cgroups_block,  &wr_timeline_block, &wr_spans_block,
	&wr_gpu_block,	   &wr_offspans_block, &wr_windows_block,  &wr_offcpu_block,
	&wr_regions_block, &wr_sizes_block,    &wr_metrics_block,  &wr_steps_block,
	&wr_stats_block,   &wr_end_block,
};

#define NBLOCKS (sizeof(blocks) / sizeof(blocks[0]))

int wr_blocks_flush(struct rec_writer *w)
{
	int err = 0;

	for (size_t i = 0; !err && i < NBLOCKS; i++)
		if (blocks[i]->flush)
			err = blocks[i]->flush(w);
	return err;
}

int wr_blocks_rewrite(struct rec_writer *w, const struct wr_rewrite *rw)
{
	int err = 0;

	for (size_t i = 0; !err && i < NBLOCKS; i++) {
		const struct wr_block *b = blocks[i];

		if (b->restart)
			b->restart(w, false);
		if (b->rewrite)
			err = b->rewrite(w, rw);
		else if (b->flush)
			err = b->flush(w);
	}
	return err;
}

void wr_blocks_restart(struct rec_writer *w, bool in_file)
{
	for (size_t i = 0; i < NBLOCKS; i++)
		if (blocks[i]->restart)
			blocks[i]->restart(w, in_file);
}

void wr_blocks_free(struct rec_writer *w)
{
	for (size_t i = 0; i < NBLOCKS; i++)
		if (blocks[i]->free)
			blocks[i]->free(w);
}
