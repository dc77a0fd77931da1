// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * When a recording samples (see control.h): --delay, SIGUSR1/SIGUSR2, the --control FIFO, the
 * caps, and the intervals that were sampled.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "control.h"
#include "control_lines.h"
#include "lib/exitcodes.h"
#include "lib/log.h"

struct control {
	const struct record_opts *o;
	struct sampler *sp; /* borrowed, from control__start() on */
	int ctl_fd, ack_fd; /* --control, else -1 */
	struct control_lines lines;
	/* complaints about the FIFO: this second's, from window on, and those held back */
	uint64_t window;
	unsigned int shown;
	unsigned long long held;
	uint64_t start_ns, delay_until, cap_at; /* 0: none */
	bool enabled;
	enum rec_stop stopped;
	uint64_t since;	     /* enabled: since when */
	uint64_t enabled_ns; /* the closed intervals, summed */
	uint32_t n;	     /* intervals closed */
	uint64_t starts[REC_END_ENABLED_MAX], ends[REC_END_ENABLED_MAX];
};

/* At most this many complaints about the FIFO a second (a writer can flood it): then one line
 * says how many more there were. */
#define CONTROL_COMPLAINTS_PER_S 5

/* The last of SIGUSR1 (pause) and SIGUSR2 (resume) not yet acted on, or 0. */
static volatile sig_atomic_t usr_signal;

static void on_usr(int sig)
{
	usr_signal = sig;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * One open, then the descriptor's own type: a stat() before the open left a window in which a
 * user who can write the FIFOs' folder swapped in a symlink to a root-only file, which perch then
 * wrote its acks into. Read and write: the FIFO never reads as closed when a writer goes, and
 * opening it does not wait for the other side; O_NONBLOCK also keeps a device from blocking the
 * open, and O_NOFOLLOW refuses a symlink as the last component.
 */
static int open_fifo(const char *path, int *fd)
{
	struct stat st = {0};

	*fd = open(path, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0 && errno == ENOENT) {
		log_err("--control: %s is not a FIFO (create it with mkfifo first)", path);
		return PERCH_EXIT_USAGE;
	}
	if (*fd < 0 && errno != ELOOP) {
		log_err("--control: cannot open %s: %s", path, strerror(errno));
		return PERCH_EXIT_USAGE;
	}
	if (*fd >= 0 && !fstat(*fd, &st) && S_ISFIFO(st.st_mode))
		return 0;
	log_err("--control: %s is %s, not a FIFO: refused", path,
		*fd < 0		      ? "a symbolic link"
		: S_ISREG(st.st_mode) ? "a regular file"
				      : "another kind of file");
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return PERCH_EXIT_UNSAFE;
}

/* fifo:CTL[,ACK] */
static int open_control(struct control *c, const char *spec)
{
	char *copy, *ack;
	int ret;

	if (strncmp(spec, "fifo:", 5) || !spec[5] || spec[5] == ',') {
		log_err("--control: bad value '%s' (fifo:CTL[,ACK])", spec);
		return PERCH_EXIT_USAGE;
	}
	copy = strdup(spec + 5);
	if (!copy)
		return PERCH_EXIT_INTERNAL;
	ack = strchr(copy, ',');
	if (ack)
		*ack++ = '\0';
	ret = open_fifo(copy, &c->ctl_fd);
	if (!ret && ack)
		ret = *ack ? open_fifo(ack, &c->ack_fd) : PERCH_EXIT_USAGE;
	if (ret == PERCH_EXIT_USAGE && ack && !*ack)
		log_err("--control: bad value '%s' (fifo:CTL[,ACK])", spec);
	free(copy);
	return ret;
}

int control__open(const struct record_opts *o, struct control **out)
{
	struct sigaction sa = {.sa_handler = on_usr}; /* no SA_RESTART: the loop's wait ends */
	struct control *c = calloc(1, sizeof(*c));
	int ret = 0;

	*out = c;
	if (!c)
		return PERCH_EXIT_INTERNAL;
	c->o = o;
	c->ctl_fd = c->ack_fd = -1;
	if (o->control)
		ret = open_control(c, o->control);
	if (ret)
		return ret;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	return 0;
}

/* A second past the window's start (or at the end, when end): the complaints held back, in
 * one line. */
static void held_back(struct control *c, uint64_t now, bool end)
{
	if (!end && now - c->window < 1000000000ull)
		return;
	if (c->held)
		log_warn("--control: %llu more complaints about the control FIFO not shown "
			 "(at most %d a second)",
			 c->held, CONTROL_COMPLAINTS_PER_S);
	c->window = now;
	c->shown = 0;
	c->held = 0;
}

static void complain(struct control *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void complain(struct control *c, const char *fmt, ...)
{
	char line[256];
	va_list ap;

	held_back(c, now_ns(), false);
	if (c->shown >= CONTROL_COMPLAINTS_PER_S) {
		c->held++;
		return;
	}
	c->shown++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_warn("%s", line);
}

void control__free(struct control *c)
{
	if (!c)
		return;
	held_back(c, 0, true);
	if (c->ctl_fd >= 0)
		close(c->ctl_fd);
	if (c->ack_fd >= 0)
		close(c->ack_fd);
	free(c);
}

static void close_interval(struct control *c, uint64_t t)
{
	t = t > c->since ? t : c->since;
	if (c->n < REC_END_ENABLED_MAX) {
		c->starts[c->n] = c->since;
		c->ends[c->n] = t;
	}
	c->n++;
	c->enabled_ns += t - c->since;
}

/* The pause flag and the intervals: a pause's end is taken after the flag is set, a resume's
 * start before it is cleared, so every sample of an interval falls inside it. */
static void set_enabled(struct control *c, bool on)
{
	uint64_t t;

	if (on == c->enabled || c->stopped != REC_STOP_NONE)
		return;
	c->enabled = on;
	if (on) {
		c->since = now_ns();
		sampler__pause(c->sp, false);
		log_debug("control: sampling resumed");
		return;
	}
	sampler__pause(c->sp, true);
	t = now_ns();
	close_interval(c, t);
	log_debug("control: sampling paused");
}

void control__start(struct control *c, struct sampler *sp, uint64_t start_ns)
{
	c->sp = sp;
	c->start_ns = start_ns;
	if (c->o->max_duration_s > 0)
		c->cap_at = start_ns + (uint64_t)(c->o->max_duration_s * 1e9);
	if (c->o->delay_s > 0) {
		c->delay_until = start_ns + (uint64_t)(c->o->delay_s * 1e9);
		sampler__pause(sp, true);
		return;
	}
	c->enabled = true;
	c->since = start_ns;
}

static void ack(struct control *c)
{
	if (c->ack_fd >= 0 && write(c->ack_fd, "ack\n", 4) != 4)
		complain(c, "--control: cannot write the ack: %s", strerror(errno));
}

/* One command line of the control FIFO (perf's words). */
static void command(void *ctx, enum control_cmd cmd, const char *text)
{
	struct control *c = ctx;

	if (cmd == CONTROL_ENABLE || cmd == CONTROL_DISABLE) {
		c->delay_until = 0; /* the user decides from now on */
		set_enabled(c, cmd == CONTROL_ENABLE);
	} else if (cmd != CONTROL_PING) {
		complain(c, "--control: unknown command '%s' (enable, disable, ping)", text);
		return;
	}
	ack(c);
}

static void read_commands(struct control *c)
{
	char buf[256];
	ssize_t got;

	while ((got = read(c->ctl_fd, buf, sizeof(buf))) > 0)
		control_lines__feed(&c->lines, buf, (size_t)got, command, c);
}

void control__poll(struct control *c, uint64_t now)
{
	int sig = usr_signal;

	if (sig) {
		usr_signal = 0;
		c->delay_until = 0;
		set_enabled(c, sig == SIGUSR2);
	}
	if (c->ctl_fd >= 0) {
		read_commands(c);
		held_back(c, now, false);
	}
	if (c->delay_until && now >= c->delay_until) {
		c->delay_until = 0;
		set_enabled(c, true);
	}
	if (c->cap_at && now >= c->cap_at)
		control__cap(c, REC_STOP_MAX_DURATION, now);
}

int control__wait_ms(const struct control *c, uint64_t now, int wait_ms)
{
	uint64_t next[2] = {c->delay_until, c->stopped ? 0 : c->cap_at};

	for (int i = 0; i < 2; i++) {
		if (!next[i])
			continue;
		if (next[i] <= now)
			return 0;
		if ((next[i] - now + 999999) / 1000000 < (uint64_t)wait_ms)
			wait_ms = (int)((next[i] - now + 999999) / 1000000);
	}
	return wait_ms;
}

static const char *const stop_names[] = {[REC_STOP_NONE] = "",
					 [REC_STOP_MAX_DURATION] = "--max-duration",
					 [REC_STOP_MAX_SIZE] = "--max-size",
					 [REC_STOP_STEPS] = "--steps"};

void control__cap(struct control *c, enum rec_stop why, uint64_t now)
{
	(void)now;
	if (c->stopped != REC_STOP_NONE)
		return;
	set_enabled(c, false);
	sampler__pause(c->sp, true); /* also when it was paused already: it stays so */
	c->delay_until = 0;
	c->stopped = why;
	log_debug("control: sampling stopped for good (%s)", stop_names[why]);
}

enum rec_stop control__stopped(const struct control *c)
{
	return c->stopped;
}

static struct rec_kv end_kv(const char *key, uint64_t value)
{
	return (struct rec_kv){.key = (char *)key, .value = value};
}

size_t control__end(struct control *c, uint64_t end_ns, struct rec_kv *kv, char names[][32])
{
	uint64_t paused;
	size_t k = 0;

	if (c->enabled) /* the last interval ends with the run */
		close_interval(c, end_ns);
	c->enabled = false;
	paused = end_ns > c->start_ns + c->enabled_ns ? end_ns - c->start_ns - c->enabled_ns : 0;
	if (!paused && c->stopped == REC_STOP_NONE)
		return 0;
	kv[k++] = end_kv(rec_end_keys[REC_END_start_ns], c->start_ns);
	kv[k++] = end_kv(rec_end_keys[REC_END_paused_ns], paused);
	kv[k++] = end_kv(rec_end_keys[REC_END_stopped_at], c->stopped);
	kv[k++] = end_kv(rec_end_keys[REC_END_enabled_intervals], c->n);
	for (uint32_t i = 0; i < c->n && i < REC_END_ENABLED_MAX; i++) {
		snprintf(names[2 * i], 32, REC_END_ENABLED_START, i);
		snprintf(names[2 * i + 1], 32, REC_END_ENABLED_END, i);
		kv[k++] = end_kv(names[2 * i], c->starts[i]);
		kv[k++] = end_kv(names[2 * i + 1], c->ends[i]);
	}
	return k;
}
