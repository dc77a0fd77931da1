// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch top`: a live view of the hottest functions. The same run as `perch record` (sampler,
 * unwinder, symbolizer: record/) writing to /dev/null, with a hook at every drain that reads the
 * drain's counts from the writer into report/top.c's table and redraws it every refresh
 * interval with plain ANSI escapes. The terminal is raw (no echo, keys read one at a time) while
 * it runs, and restored when it ends, however it ends.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "lib/escape.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "record/record.h"
#include "report/top.h"

#define DEFAULT_FREQ	  997
#define DEFAULT_REFRESH_S 2.0
#define HEADER_LINES	  6 /* the lines above the rows */

struct top {
	struct top_table *table;
	const struct record_opts *o;
	double refresh_s;
	unsigned int rows; /* -n; 0: as many as the terminal has room for */
	uint64_t start_ns, next_ns;
	unsigned int refreshes;
	bool tty_out;
	bool quit; /* q pressed */
};

/* The terminal as it was, for every way out (normal, atexit, a fatal signal). */
static struct termios saved_tty;
static volatile sig_atomic_t tty_raw;

static void tty_restore(void)
{
	if (tty_raw) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
		tty_raw = 0;
	}
}

static void on_fatal(int sig)
{
	tty_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Keys one at a time, no echo; Ctrl-C is a key too (it quits, as q does). */
static void tty_enter(void)
{
	static const int fatal[] = {SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE};
	struct termios raw;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_tty))
		return;
	raw = saved_tty;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], on_fatal);
	atexit(tty_restore);
	if (!tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw))
		tty_raw = 1;
}

/* Whether a key that quits is waiting: q, Q, Ctrl-C. */
static bool quit_key(void)
{
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
	char buf[64];
	ssize_t n;

	if (!tty_raw)
		return false;
	while (poll(&p, 1, 0) == 1 && (n = read(STDIN_FILENO, buf, sizeof(buf))) > 0) {
		if (memchr(buf, 'q', n) || memchr(buf, 'Q', n) || memchr(buf, 3, n))
			return true;
	}
	return false;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The rows the terminal has room for (20 when it is not one). */
static void screen_size(const struct top *t, unsigned int *rows, unsigned int *cols)
{
	struct winsize ws;

	*rows = 20;
	*cols = 0;
	if (t->tty_out && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row) {
		*rows = ws.ws_row > HEADER_LINES + 1 ? ws.ws_row - HEADER_LINES - 1 : 1;
		*cols = ws.ws_col;
	}
	if (t->rows)
		*rows = t->rows;
}

static void print_header(const struct top *t, double up_s, FILE *out)
{
	uint64_t last, all;
	const struct record_opts *o = t->o;

	top_table__samples(t->table, &last, &all);
	fprintf(out, "perch top: ");
	if (o->argv)
		esc_term(out, o->argv[0]);
	for (size_t i = 0; !o->argv && i < o->npids; i++)
		fprintf(out, "%spid %d", i ? ", " : "", (int)o->pids[i]);
	fprintf(out, "  %u Hz  refresh %.1f s  up %.1f s  (q quits)\n", o->freq, t->refresh_s,
		up_s);
	fprintf(out, "samples: %llu in the last %.1f s, %llu since start\n",
		(unsigned long long)last, t->refresh_s, (unsigned long long)all);
	fprintf(out, "self: samples whose leaf is the function; total: samples whose stack holds "
		     "it (%%; the last column: self samples since start)\n\n");
}

/* One screen, written at once: cleared and redrawn on a terminal, appended elsewhere. */
static void draw(struct top *t, uint64_t now)
{
	struct top_view v = {.interval_s = t->refresh_s};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return;
	screen_size(t, &v.rows, &v.width);
	fputs(t->tty_out ? "\033[H\033[2J" : "\n", m);
	print_header(t, (double)(now - t->start_ns) / 1e9, m);
	top_table__print(t->table, &v, m);
	if (!fclose(m))
		fwrite(buf, 1, len, stdout);
	fflush(stdout);
	free(buf);
	t->refreshes++;
}

/* record/'s hook, every drain (100 ms): the drain's counts; a screen when the interval is up;
 * q stops the run (a launched command gets SIGTERM, as -d gives it in perch record). */
static int on_drain(void *ctx, const struct rec_writer *w, uint64_t start_ns, uint64_t end_ns)
{
	struct top *t = ctx;
	uint64_t now = now_ns();

	(void)start_ns;
	(void)end_ns;
	if (t->quit)
		return 0;
	if (!t->start_ns) {
		t->start_ns = now;
		t->next_ns = now + (uint64_t)(t->refresh_s * 1e9);
		tty_enter(); /* now: record/'s SIGINT and SIGTERM handlers are in place */
	}
	if (top_table__add(t->table, w))
		log_warn("top: out of memory: some samples are not shown");
	if (now >= t->next_ns) {
		draw(t, now);
		t->next_ns += (uint64_t)(t->refresh_s * 1e9);
		if (t->next_ns <= now)
			t->next_ns = now + (uint64_t)(t->refresh_s * 1e9);
	}
	t->quit = quit_key();
	return t->quit ? SIGTERM : 0;
}

/* What the options set. */
struct top_cli {
	struct cli_watch w;
	struct top *t;
};

static int set_refresh(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct top *t = ((struct top_cli *)ctx)->t;
	char *end;

	(void)opt;
	t->refresh_s = strtod(arg, &end);
	if (*end || end == arg || !(t->refresh_s >= 0.1 && t->refresh_s <= 3600))
		return log_usage(NULL, "bad refresh '%s' (seconds, 0.1 to 3600)", arg);
	return 0;
}

static int set_rows(void *ctx, const struct cli_opt *opt, const char *arg)
{
	unsigned long v;

	(void)opt;
	if (cli_parse_uint(arg, 100000, &v))
		return log_usage(NULL, "bad row count '%s'", arg);
	((struct top_cli *)ctx)->t->rows = v;
	return 0;
}

extern const struct cli_command cli_top;

static int parse_top(int argc, char **argv, struct top_cli *c)
{
	int ret = cli_opts__parse(&cli_top, argc, argv, c);

	return ret ? ret : cli_watch_targets(&c->w, argc, argv);
}

static int run_top(int argc, char **argv)
{
	struct top t = {.refresh_s = DEFAULT_REFRESH_S, .tty_out = isatty(STDOUT_FILENO)};
	struct top_cli c = {.w.o = {.freq = DEFAULT_FREQ,
				    .output = "/dev/null",
				    .quiet = true,
				    .no_lines = true,
				    .on_drain = on_drain,
				    .drain_ctx = &t},
			    .t = &t};
	struct record_result res;
	int ret = parse_top(argc, argv, &c);

	if (ret) {
		free(c.w.pids);
		return ret == CLI_HELP_DONE ? 0 : ret;
	}
	t.o = &c.w.o;
	t.table = top_table__new();
	if (!t.table) {
		free(c.w.pids);
		log_err("top: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	ret = record__run(&c.w.o, &res);
	tty_restore();
	if (!t.quit && t.start_ns)
		draw(&t, now_ns()); /* the targets ended: what the last interval got */
	top_table__free(t.table);
	free(c.w.pids);
	return t.quit ? 0 : ret;
}

#define CLI_CTX struct top_cli

enum { L = 1, P = 2, A = 4 }; /* the synopsis lines: launch, attach, system-wide */

static const struct cli_opt top_rows[] = {
	{'F', "freq", "HZ", "samples per second per CPU (default 997)", OPT_FN(cli_watch_freq),
	 .field = OPT_FIELD(w), .in = L | P | A},
	{'a', "all-cpus", NULL,
	 "every process on every CPU, as record -a (until q, or CMD ends when one is given)",
	 OPT_TRUE(w.o.all_cpus), .needs = A},
	{'p', "pid", "PID,...", "attach to running processes (and children they fork)",
	 OPT_FN(cli_watch_pids), .field = OPT_FIELD(w), .needs = P},
	{'d', "delay-secs", "SEC",
	 "refresh every SEC seconds (default 2); the columns show the last interval and the whole "
	 "run since start",
	 OPT_FN(set_refresh), .in = L | P | A},
	{'r', NULL, "SEC", NULL, OPT_FN(set_refresh)},
	{'n', "rows", "N", "function rows (default: as many as the terminal holds, or 20)",
	 OPT_FN(set_rows), .in = L | P | A},
	{0, "unwind", "MODE", "user stacks: auto (default), dwarf, fp (as record's)",
	 OPT_FN(cli_set_unwind), .field = OPT_FIELD(w.o), .in = L | P | A},
};

const struct cli_command cli_top = {
	.name = "top",
	.run = run_top,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(top_rows),
			.flags = "+",
			.lines = (const char *const[]){"-- CMD [ARGS...]", "", "[-- CMD [ARGS...]]",
						       NULL},
			.summary =
				"a live view of the hottest functions of CMD, of processes or of the system",
			.about =
				"q or Ctrl-C quits (exit 0; a launched CMD gets SIGTERM); top ends when the "
				"targets exit, with CMD's exit status.",
		},
};
