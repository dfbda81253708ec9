package io.nexuscore.bench;

import io.nexuscore.config.OtlpConfig;
import io.nexuscore.config.TelemetryConfig;
import io.nexuscore.telemetry.RequestTracing;
import io.nexuscore.telemetry.SpanAttributes;
import io.vertx.core.MultiMap;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.util.List;
import java.util.Map;

/**
 * Request tracing's own CPU cost, apart from everything else a request costs: records spans with
 * the attributes the data plane sets on an answered chat request, through the real SDK, batch
 * processor and OTLP/HTTP exporter, to a sink at the given port (OtlpSink). Prints the process CPU
 * time (every thread: the caller building spans, the exporter encoding and sending them) per span.
 * CPU time, not wall time, so a busy machine distorts it less than a throughput figure.
 *
 * Usage: TracingCost SINK_PORT [SPANS] [ROUNDS]
 */
public final class TracingCost {

    private TracingCost() {
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        int spans = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        // A queue that holds a whole round: no span is dropped (a dropped span would cost less).
        OtlpConfig otlp = new OtlpConfig(true, URI.create("http://127.0.0.1:" + port), OtlpConfig.HTTP_PROTOBUF,
                "none", 10_000, 5_000, spans, 512, Map.of());
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("Host", "127.0.0.1:8080");
        try (RequestTracing tracing = RequestTracing.start(new TelemetryConfig("nexuscore-bench", 100, otlp))) {
            for (int round = 0; round <= rounds; round++) {
                long cpu = os.getProcessCpuTime();
                long wall = System.nanoTime();
                for (int i = 0; i < spans; i++) {
                    tracing.inference(SpanAttributes.CHAT, "gpt-bench", System.nanoTime() - 500_000, headers)
                            .set(SpanAttributes.TASK, "chat")
                            .set(SpanAttributes.SERVER_ADDRESS, "127.0.0.1")
                            .set(SpanAttributes.SERVER_PORT, 8080)
                            .set(SpanAttributes.CLIENT_ADDRESS, "127.0.0.1")
                            .set(SpanAttributes.STREAM, false)
                            .set(SpanAttributes.ASSIGNED_TIER, "nano")
                            .set(SpanAttributes.SCORE, 12)
                            .set(SpanAttributes.ROUTE_SOURCE, "user")
                            .set(SpanAttributes.TENANT, "anonymous")
                            .set(SpanAttributes.REQUEST_MAX_TOKENS, 64)
                            .set(SpanAttributes.RESPONSE_MODEL, "nexus-nano")
                            .set(SpanAttributes.USAGE_INPUT_TOKENS, 8)
                            .set(SpanAttributes.USAGE_OUTPUT_TOKENS, 5)
                            .set(SpanAttributes.RESPONSE_FINISH_REASONS, List.of("stop"))
                            .set(SpanAttributes.TIER, "nano")
                            .set(SpanAttributes.MISROUTE, "none")
                            .end(200, null);
                }
                tracing.flush(60_000);
                double cpuUs = (os.getProcessCpuTime() - cpu) / 1e3 / spans;
                double wallUs = (System.nanoTime() - wall) / 1e3 / spans;
                System.out.printf("%s spans=%d cpu_us_per_span=%.2f wall_us_per_span=%.2f%n",
                        round == 0 ? "warm-up" : "round " + round, spans, cpuUs, wallUs);
            }
        }
    }
}
