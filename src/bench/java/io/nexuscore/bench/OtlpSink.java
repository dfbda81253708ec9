package io.nexuscore.bench;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stand-in OTLP/HTTP collector for the tracing benchmark: accepts POST /v1/traces, answers an
 * empty protobuf (a successful ExportTraceServiceResponse), counts exports and bytes and prints the
 * totals when it is stopped (SIGTERM). Loopback only.
 *
 * Usage: OtlpSink PORT
 */
public final class OtlpSink {

    private OtlpSink() {
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        AtomicLong exports = new AtomicLong();
        AtomicLong bytes = new AtomicLong();
        Vertx vertx = Vertx.vertx();
        vertx.createHttpServer().requestHandler(request -> request.body().onSuccess(body -> {
            boolean traces = request.path().equals("/v1/traces");
            if (traces) {
                exports.incrementAndGet();
                bytes.addAndGet(body.length());
            }
            request.response().setStatusCode(traces ? 200 : 404)
                    .putHeader("Content-Type", "application/x-protobuf").end(Buffer.buffer());
        })).listen(port, "127.0.0.1").await();
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
                System.out.println("otlp sink: " + exports.get() + " exports, " + bytes.get() + " bytes")));
        System.out.println("otlp sink on 127.0.0.1:" + port);
    }
}
