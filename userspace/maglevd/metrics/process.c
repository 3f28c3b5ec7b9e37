// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* process_* metrics from /proc/self; see process.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "metrics/process.h"

static void gauge(FILE *f, const char *name, const char *type, const char *help, double v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %.15g\n", name, help, name, type, name, v);
}

/* The boot time in seconds since the epoch, from /proc/stat's btime; 0 if unknown. */
static unsigned long long boot_time(void)
{
	unsigned long long bt = 0;
	char line[256];
	FILE *s = fopen("/proc/stat", "re");

	if (!s)
		return 0;
	while (fgets(line, sizeof(line), s))
		if (sscanf(line, "btime %llu", &bt) == 1)
			break;
	fclose(s);
	return bt;
}

static void from_stat(FILE *f)
{
	unsigned long long utime, stime, start, vsize;
	long long rss;
	char buf[1024], *p;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	unsigned long long bt;
	FILE *s = fopen("/proc/self/stat", "re");
	size_t n;

	if (!s)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, s);
	fclose(s);
	buf[n] = '\0';
	/* The command name may hold spaces and parentheses: fields follow the last ')'. */
	p = strrchr(buf, ')');
	if (!p || tck <= 0 || page <= 0)
		return;
	/* Fields 14, 15 (utime, stime), 22 (starttime), 23 (vsize), 24 (rss), from field 3. */
	if (sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d "
		   "%*d %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) != 5)
		return;
	gauge(f, "process_cpu_seconds_total", "counter",
	      "Total user and system CPU time spent in seconds.",
	      (double)(utime + stime) / (double)tck);
	gauge(f, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
	      (double)vsize);
	gauge(f, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
	      (double)rss * (double)page);
	bt = boot_time();
	if (bt)
		gauge(f, "process_start_time_seconds", "gauge",
		      "Start time of the process since unix epoch in seconds.",
		      (double)bt + (double)start / (double)tck);
}

static void fds(FILE *f)
{
	struct rlimit rl;
	struct dirent *e;
	DIR *dir = opendir("/proc/self/fd");
	long n = 0;

	if (dir) {
		while ((e = readdir(dir)))
			if (e->d_name[0] != '.')
				n++;
		closedir(dir);
		/* Less the one opendir() held while counting. */
		gauge(f, "process_open_fds", "gauge", "Number of open file descriptors.",
		      (double)(n - 1));
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl))
		gauge(f, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
		      rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur);
}

void process_metrics(FILE *f)
{
	from_stat(f);
	fds(f);
}
