package io.nexuscore.bench;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Closed-loop HTTP/1.1 load: C keep-alive connections, each sending the nano request back to back
 * for a warm-up and then a measured period. Prints one line: target, concurrency, requests/s, P50,
 * P99 (µs), errors, and when given the server PIDs, the servers' CPU time (user + sys from /proc)
 * per request over the measured window: a figure a busy shared machine distorts far less than
 * throughput. Bounded by time, loopback only.
 *
 * Usage: LoadGenerator NAME PORT PATH CONCURRENCY SECONDS [WARMUP_SECONDS] [EVENT_LOOPS] [PID,PID...]
 */
public final class LoadGenerator {

    private final HttpClient client;
    private final RequestOptions request;
    private final Recorder recorder = new Recorder(3);
    private final AtomicLong errors = new AtomicLong();
    private volatile boolean measuring;
    private volatile boolean stopped;

    private LoadGenerator(Vertx vertx, int port, String path, int concurrency) {
        this.client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setTcpNoDelay(true),
                new PoolOptions().setHttp1MaxSize(concurrency));
        this.request = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port).setURI(path)
                .putHeader("Content-Type", "application/json");
    }

    private void loop(CountDownLatch done) {
        if (stopped) {
            done.countDown();
            return;
        }
        long start = System.nanoTime();
        client.request(request)
                .compose(req -> req.send(BenchBodies.NANO_REQUEST))
                .compose(resp -> resp.body().map(b -> resp.statusCode()))
                .onComplete(ar -> {
                    if (measuring) {
                        if (ar.succeeded() && ar.result() == 200) {
                            recorder.recordValue((System.nanoTime() - start) / 1_000);
                        } else {
                            errors.incrementAndGet();
                        }
                    }
                    loop(done);
                });
    }

    public static void main(String[] args) throws Exception {
        String name = args[0];
        int port = Integer.parseInt(args[1]);
        String path = args[2];
        int concurrency = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        int warmup = args.length > 5 ? Integer.parseInt(args[5]) : 3;
        int loops = args.length > 6 ? Integer.parseInt(args[6]) : 1;
        long[] servers = args.length > 7
                ? java.util.Arrays.stream(args[7].split(",")).mapToLong(Long::parseLong).toArray() : new long[0];
        Vertx vertx = Vertx.builder().with(new VertxOptions().setPreferNativeTransport(true)
                .setEventLoopPoolSize(loops)).build();
        LoadGenerator generator = new LoadGenerator(vertx, port, path, concurrency);
        CountDownLatch done = new CountDownLatch(concurrency);
        for (int i = 0; i < concurrency; i++) {
            vertx.runOnContext(v -> generator.loop(done));
        }
        Thread.sleep(warmup * 1000L);
        generator.recorder.reset();
        generator.measuring = true;
        long cpuBefore = cpuTicks(servers);
        long start = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        Histogram histogram = generator.recorder.getIntervalHistogram();
        long cpuTicks = cpuTicks(servers) - cpuBefore;
        double elapsed = (System.nanoTime() - start) / 1e9;
        generator.measuring = false;
        generator.stopped = true;
        done.await(10, TimeUnit.SECONDS);
        vertx.close().await();
        System.out.printf("%-7s c=%-3d requests=%-8d rps=%-9.0f p50_us=%-6d p99_us=%-6d errors=%-3d cpu_us_per_req=%s%n",
                name, concurrency, histogram.getTotalCount(), histogram.getTotalCount() / elapsed,
                histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(99), generator.errors.get(),
                servers.length == 0 ? "-" : String.format("%.1f",
                        cpuTicks * (1e6 / CLOCK_TICKS_PER_SECOND) / Math.max(1, histogram.getTotalCount())));
    }

    /** USER_HZ: the unit of /proc/PID/stat times; 100 on every mainstream Linux build. */
    private static final double CLOCK_TICKS_PER_SECOND = 100;

    private static long cpuTicks(long[] pids) throws java.io.IOException {
        long total = 0;
        for (long pid : pids) {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + pid + "/stat"));
            // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            total += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        }
        return total;
    }
}
