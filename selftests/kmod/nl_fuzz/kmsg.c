// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reads /dev/kmsg from the end, so only records logged during a test count,
 * and prints each record that shows a kernel bug with its trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kmsg.h"

int fz_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Records since fd was last read that show a kernel bug; each is printed
 * with the records after it (the trace), at most 100000 records are read.
 */
int fz_kmsg_bad(int fd)
{
	static const char *const bad[] = {
		"BUG:",	 "WARNING:",   "Oops",	     "general protection",  "KASAN",
		"UBSAN", "kernel BUG", "refcount_t", "list_del corruption", "Call Trace"};
	int found = 0, records = 0, context = 0;
	char rec[4096];
	ssize_t n;
	size_t i;

	while (records++ < 100000 &&
	       ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE))) {
		if (n < 0)
			continue;
		rec[n] = '\0';
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (strstr(rec, bad[i])) {
				found++;
				context = 60;
				break;
			}
		}
		if (context && context--)
			fprintf(stderr, "# kernel: %s", rec);
	}
	return found;
}
