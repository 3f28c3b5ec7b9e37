// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The health-check benchmark's backend (health_bench.sh): answers every
 * connection on 0.0.0.0:PORT with "200 ok" and closes it, over TLS when a
 * certificate and key are given. WORKERS processes share the listening
 * socket; each serves one connection at a time (the checks are local and
 * short), with a 1 s receive timeout so that no client stalls it; the
 * workers die with the first process.
 * Usage: hc_bench_server PORT WORKERS [CERT KEY]
 */
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

static void serve(int lfd, SSL_CTX *ctx)
{
	struct timeval tv = {.tv_sec = 1};
	char buf[2048];

	for (;;) {
		int fd = accept(lfd, NULL, NULL);
		SSL *ssl = NULL;

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (ctx) {
			ssl = SSL_new(ctx);
			SSL_set_fd(ssl, fd);
			if (SSL_accept(ssl) == 1 && SSL_read(ssl, buf, sizeof(buf)) > 0)
				SSL_write(ssl, answer, sizeof(answer) - 1);
			SSL_free(ssl);
		} else if (read(fd, buf, sizeof(buf)) > 0) {
			/* A check that stopped at the status may have gone: no matter. */
			ssize_t n = write(fd, answer, sizeof(answer) - 1);

			(void)n;
		}
		close(fd);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	SSL_CTX *ctx = NULL;
	int lfd, one = 1, i, workers;

	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: %s PORT WORKERS [CERT KEY]\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	workers = atoi(argv[2]);
	if (argc == 5) {
		ctx = SSL_CTX_new(TLS_server_method());
		if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, argv[3]) != 1 ||
		    SSL_CTX_use_PrivateKey_file(ctx, argv[4], SSL_FILETYPE_PEM) != 1) {
			ERR_print_errors_fp(stderr);
			return 1;
		}
		/* Full handshakes only, as the checks make them. */
		SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
		SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
	}
	a.sin_port = htons((uint16_t)atoi(argv[1]));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 4096)) {
		perror("listen");
		return 1;
	}
	for (i = 1; i < workers; i++)
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL); /* the bench kills the first only */
			break;
		}
	serve(lfd, ctx);
	return 0;
}
