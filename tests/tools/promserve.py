#!/usr/bin/env python3
"""promserve: a tiny HTTP server on 127.0.0.1 for the app_metrics tests
(tests/system/test_app_metrics.sh). Paths:

  /good       a Prometheus text page: a counter that grows by 1000 at each
              request, a gauge, labels with escapes, a histogram with its
              +Inf bucket, a summary, a NaN gauge, a timestamp
  /slow       answers after SLOW seconds (default 20): beyond any bound
  /huge       a 64 MiB page of valid lines
  /bad        a malformed page (a label value without its closing quote)
  /redirect   a 302 to /good (redirects are not followed)
  /series/N   N series of one counter family (the bench's page)

Usage: promserve.py PORTFILE [SLOW]: binds an ephemeral port and writes it
to PORTFILE, then serves until killed."""
import http.server
import socketserver
import sys
import time

SLOW = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
count = 0


def good():
    global count
    count += 1
    return (
        "# HELP flare_engram_disk_wait_nanoseconds_total Time the engine waited on its disk.\n"
        "# TYPE flare_engram_disk_wait_nanoseconds_total counter\n"
        "flare_engram_disk_wait_nanoseconds_total %d\n"
        "# TYPE flare_prefill_tokens_total counter\n"
        'flare_prefill_tokens_total{rank="dgx4",path="C:\\\\DIR",note="say \\"hi\\"\\n"} %d 1395066363000\n'
        "# TYPE flare_row_cache_fill gauge\n"
        "flare_row_cache_fill 0.75\n"
        "flare_broken_gauge NaN\n"
        "# A plain comment\n"
        "# TYPE rpc_seconds histogram\n"
        'rpc_seconds_bucket{le="0.1"} 10\n'
        'rpc_seconds_bucket{le="+Inf"} 12\n'
        "rpc_seconds_sum 1.5\n"
        "rpc_seconds_count 12\n"
        "# TYPE lat summary\n"
        'lat{quantile="0.5"} 3\n'
        "lat_sum 17\n"
        "lat_count 4\n"
    ) % (count * 1000, count)


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, body, code=200, ctype="text/plain; version=0.0.4"):
        b = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        p = self.path
        if p == "/good":
            self.send(good())
        elif p == "/slow":
            time.sleep(SLOW)
            self.send(good())
        elif p == "/huge":
            line = b"huge_series_total{i=\"%09d\"} 1\n"
            n = (64 << 20) // len(line % 0)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(n * len(line % 0)))
            self.end_headers()
            try:
                chunk = b"".join(line % i for i in range(4096))
                for _ in range(n // 4096):
                    self.wfile.write(chunk)
            except OSError:
                pass
        elif p == "/bad":
            self.send('# TYPE x counter\nx{a="1} 3\n')
        elif p == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/good")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif p == "/churn":
            # a hostile page: every scrape names 100 new series (a label
            # that is a request id), and one steady counter
            global CHURN
            CHURN += 1
            self.send("# TYPE churn_total counter\n" + "".join(
                'churn_total{req="%d-%d"} 1\n' % (CHURN, i) for i in range(100)) +
                "# TYPE steady_total counter\nsteady_total %d\n" % CHURN)
        elif p.startswith("/series/"):
            n = int(p[8:])
            self.send("# TYPE bench_ops_total counter\n" + "".join(
                'bench_ops_total{shard="%d",op="read"} %d\n' % (i, i * 7 + count)
                for i in range(n)))
        else:
            self.send("no such page\n", 404)


CHURN = 0


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


srv = S(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % srv.server_address[1])
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
srv.serve_forever()
