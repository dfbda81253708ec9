package io.nexuscore.bench;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;

/**
 * Many concurrent streamed answers through a router from an upstream that streams slowly
 * ({@code MockOpenAi --stream-chunks N --chunk-ms M}): what they cost the router in memory and CPU,
 * and whether other requests meanwhile still go through at their usual latency.
 *
 * <p>A full GC in the router and its RSS; a normal (non-streamed) request back to back on one
 * connection for {@code --probe-seconds}, alone; then {@code --streams} streamed chat requests at
 * once (one connection each), each read to its {@code [DONE]}, while the same probe runs again and
 * the router's RSS is sampled every 200 ms. Prints the router's peak RSS above the baseline per
 * stream, its CPU over the streams' window (per chunk relayed and as a share of one core), how many
 * streams ended complete, the longest silence between two chunks any stream saw (against the
 * upstream's interval), and the probe's latency alone and during. A probe request slower than
 * {@code --stall-ms} counts as stalled.
 *
 * <pre>StreamFanoutBench --port P --pid ROUTER_PID [--streams 1000] [--chunks 50] [--chunk-ms 200]
 *     [--ramp-ms 5000] [--probe-seconds 5] [--stall-ms 1000] [--nmt false]</pre>
 * The streams start evenly over {@code --ramp-ms}; make a stream ({@code chunks x chunk-ms}) last
 * well beyond it, so all of them are open at once.
 */
public final class StreamFanoutBench {

    private static final String PATH = "/v1/chat/completions";

    public static void main(String[] argv) throws Exception {
        Args args = Args.parse(argv);
        int port = args.intValue("port", 0);
        long pid = Long.parseLong(args.value("pid", "0"));
        int streams = args.intValue("streams", 1000);
        int chunks = args.intValue("chunks", 50);
        int chunkMs = args.intValue("chunk-ms", 200);
        int probeSeconds = args.intValue("probe-seconds", 5);
        int rampMs = args.intValue("ramp-ms", 5000);
        long stallMs = args.intValue("stall-ms", 1000);
        boolean nmt = Boolean.parseBoolean(args.value("nmt", "false"));
        if (port == 0 || pid == 0) {
            throw new IllegalArgumentException("--port and --pid are required");
        }
        ProcessMemory router = new ProcessMemory(pid);
        byte[] probeRequest = RawHttpConnection.post(PATH, BenchBodies.NANO_REQUEST.getBytes());

        router.collect();
        Thread.sleep(1000);
        long rssBefore = router.rssKb();
        var nmtBefore = nmt ? router.nativeMemory() : java.util.Map.<String, Long>of();
        IdleConnectionsBench.Probe alone = IdleConnectionsBench.probe(port, probeRequest, probeSeconds, stallMs);
        System.out.printf("baseline: router rss=%d KB threads=%d; probe alone: %s%n", rssBefore, router.threads(), alone);

        Vertx vertx = Vertx.builder().with(new VertxOptions().setPreferNativeTransport(true).setEventLoopPoolSize(1)).build();
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(false).setTcpNoDelay(true),
                new PoolOptions().setHttp1MaxSize(streams).setMaxWaitQueueSize(-1));
        Buffer body = new JsonObject().put("model", "bench").put("stream", true)
                .put("stream_options", new JsonObject().put("include_usage", true))
                .put("messages", new JsonArray().add(new JsonObject().put("role", "user")
                        .put("content", "Tell me a short story about a lighthouse.")))
                .toBuffer();
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST).setHost("127.0.0.1").setPort(port)
                .setURI(PATH).putHeader("Content-Type", "application/json").setIdleTimeout(0);

        CountDownLatch done = new CountDownLatch(streams);
        AtomicInteger complete = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger firstChunks = new AtomicInteger();
        AtomicLong events = new AtomicLong();
        Histogram maxGapMs = new Histogram(3);
        long cpuBefore = router.cpuTicks();
        long start = System.nanoTime();
        for (int i = 0; i < streams; i++) {
            // Spread over rampMs: many streams at once, not one connect storm (a thousand simultaneous
            // connects wait on accept queues, theirs and the upstream's, which is not what is measured).
            vertx.setTimer(1 + (long) i * rampMs / streams, v -> client.request(options)
                    .compose(req -> req.send(body))
                    .onFailure(e -> {
                        if (failed.incrementAndGet() <= 3) {
                            System.out.println("stream failed: " + e);
                        }
                        done.countDown();
                    })
                    .onSuccess(response -> {
                        if (response.statusCode() != 200) {
                            response.body().onComplete(ar -> {
                                if (failed.incrementAndGet() <= 3) {
                                    System.out.println("stream refused: " + response.statusCode() + " "
                                            + (ar.succeeded() ? ar.result().toString() : ar.cause().toString()));
                                }
                                done.countDown();
                            });
                            return;
                        }
                        long[] last = {System.nanoTime()};
                        long[] gap = {0};
                        int[] seen = {0};
                        StringBuilder tail = new StringBuilder();
                        response.handler(chunk -> {
                            long now = System.nanoTime();
                            if (seen[0] > 0) {
                                gap[0] = Math.max(gap[0], now - last[0]);
                            } else {
                                firstChunks.incrementAndGet();
                            }
                            last[0] = now;
                            String text = chunk.toString(StandardCharsets.UTF_8);
                            int n = count(text, "data: ");
                            seen[0] += Math.max(1, n);
                            events.addAndGet(n);
                            tail.append(text); // the end of the stream so far: [DONE] may come split over two chunks
                            if (tail.length() > 64) {
                                tail.delete(0, tail.length() - 64);
                            }
                        });
                        response.exceptionHandler(e -> failed.incrementAndGet());
                        response.endHandler(v2 -> {
                            synchronized (maxGapMs) {
                                maxGapMs.recordValue(gap[0] / 1_000_000);
                            }
                            if (response.statusCode() == 200 && tail.toString().contains("[DONE]")) {
                                complete.incrementAndGet();
                            } else if (failed.incrementAndGet() <= 3) {
                                System.out.println("stream ended without [DONE]: status " + response.statusCode());
                            }
                            done.countDown();
                        });
                    }));
        }

        // The probe runs while the streams are in flight; the RSS sampler beside it.
        long[] peakRss = {rssBefore};
        Thread sampler = new Thread(() -> {
            try {
                while (done.getCount() > 0) {
                    peakRss[0] = Math.max(peakRss[0], router.rssKb());
                    Thread.sleep(200);
                }
            } catch (IOException | InterruptedException ignored) {
                // the router went away or the run ended: the peak so far stands
            }
        });
        sampler.setDaemon(true);
        sampler.start();
        while (firstChunks.get() + failed.get() < streams && System.nanoTime() - start < rampMs * 1_000_000L + 30_000_000_000L) {
            Thread.sleep(50);
        }
        double allStreamingAfter = (System.nanoTime() - start) / 1e9;
        var nmtDuring = nmt ? router.nativeMemory() : java.util.Map.<String, Long>of();
        long rssAllOpen = router.rssKb();
        IdleConnectionsBench.Probe during = IdleConnectionsBench.probe(port, probeRequest, probeSeconds, stallMs);
        boolean finished = done.await((long) chunks * chunkMs + 120_000, TimeUnit.MILLISECONDS);
        double elapsed = (System.nanoTime() - start) / 1e9;
        long cpuTicks = router.cpuTicks() - cpuBefore;
        sampler.join(1000);
        vertx.close().await();

        System.out.printf("all %d streams had their first chunk %.1f s after the first was sent; rss then %d KB%n",
                firstChunks.get(), allStreamingAfter, rssAllOpen);
        if (nmt) {
            System.out.println("nmt committed, streams open minus baseline: " + ProcessMemory.difference(nmtBefore, nmtDuring));
        }
        System.out.println("probe with the streams open: " + during);
        double cpuSeconds = cpuTicks / 100.0;
        System.out.printf("stream-fanout streams=%d complete=%d failed=%d finished_in_time=%s chunks=%d chunk_ms=%d"
                        + " window_s=%.1f events=%d router_cpu_s=%.2f router_cpu_core_share=%.2f router_cpu_us_per_event=%.1f"
                        + " rss_before_kb=%d rss_peak_kb=%d rss_per_stream_kb=%.1f max_gap_ms_p50=%d max_gap_ms_p99=%d"
                        + " max_gap_ms=%d probe_alone_p50_us=%d probe_alone_p99_us=%d probe_streams_p50_us=%d"
                        + " probe_streams_p99_us=%d probe_streams_max_us=%d probe_failed=%d probe_stalled=%d%n",
                streams, complete.get(), failed.get(), finished, chunks, chunkMs, elapsed, events.get(), cpuSeconds,
                cpuSeconds / elapsed, events.get() == 0 ? 0 : cpuSeconds * 1e6 / events.get(),
                rssBefore, peakRss[0], (peakRss[0] - rssBefore) / (double) streams,
                maxGapMs.getValueAtPercentile(50), maxGapMs.getValueAtPercentile(99), maxGapMs.getMaxValue(),
                alone.p50(), alone.p99(), during.p50(), during.p99(), during.max(), during.failed() + alone.failed(),
                during.stalled() + alone.stalled());
    }

    private static int count(String text, String needle) {
        int n = 0;
        for (int i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length())) {
            n++;
        }
        return n;
    }
}
