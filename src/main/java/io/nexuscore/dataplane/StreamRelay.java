package io.nexuscore.dataplane;

import io.nexuscore.classify.Tier;
import io.nexuscore.dataplane.apis.StreamTranslator;
import io.nexuscore.http.ProblemType;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.UpstreamStream;
import io.vertx.core.Handler;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.streams.ReadStream;
import java.lang.System.Logger.Level;
import java.util.Map;

/**
 * The last step of a streamed request that a streaming backend opened: the upstream's events
 * relayed to the client as they come, paused while the client reads slower than the upstream
 * writes, and the request accounted once, however it ends (done, broken off, or left by its client).
 */
final class StreamRelay {

    private static final System.Logger LOG = System.getLogger(StreamRelay.class.getName());

    /** Each tier's model, as answers name it. */
    private final Map<Tier, String> tierModels;
    private final double misrouteBand;
    private final DataPlaneMetrics metrics;
    private final RequestAccounting accounting;

    StreamRelay(Map<Tier, String> tierModels, double misrouteBand, DataPlaneMetrics metrics,
                RequestAccounting accounting) {
        this.tierModels = tierModels;
        this.misrouteBand = misrouteBand;
        this.metrics = metrics;
        this.accounting = accounting;
    }

    /**
     * Streams the upstream's events as they come, behind the head that already names the assigned
     * tier, score and route source. The tier's own assessment arrives (if at all) with the usage in
     * the last events, after the head went out: it goes into the summary chunk before
     * {@code [DONE]} ({@link StreamSummary}), the misroute accounting and the request event, never
     * into X-NX-Tier.
     */
    void passThrough(Served served, Resolution resolution, Tier tier, UpstreamStream stream) {
        // Another API's client gets the chat chunks as its own events; the summary still reads them
        // (its own output unused) for the misroute accounting and the request event.
        // An upstream that speaks the client's API streams its events: passed through as they are.
        boolean asIs = stream.nativeShape();
        StreamTranslator translator = served.parsed.translated() == null || asIs ? null
                : served.parsed.translated().streamTranslator(tierModels.get(tier));
        HttpServerResponse response = served.request.response()
                .setChunked(true)
                .putHeader("Content-Type", translator != null ? "text/event-stream" : stream.clientContentType());
        StreamSummary summary = new StreamSummary(resolution, served.parsed.streamUsage());
        ReadStream<Buffer> body = stream.body();
        boolean[] done = {false};
        Handler<Integer> finish = status -> {
            if (done[0]) {
                return;
            }
            done[0] = true;
            TierReply reply = summary.reply().orElse(null);
            Misroute misroute = null;
            if (reply != null) {
                misroute = Misroute.judge(resolution.tier(), reply.observedTier(), reply.observedScore(),
                        resolution.thresholds(), misrouteBand);
                if (status == 200) {
                    metrics.assessed(resolution.tier(), reply.observedTier(), misroute);
                }
            }
            accounting.completed(served, resolution, reply, misroute, status);
        };
        response.closeHandler(v -> {
            if (!done[0]) {
                stream.cancel().run();
                finish.handle(DataPlaneHandler.CLIENT_CLOSED);
            }
        });
        body.exceptionHandler(e -> {
            if (done[0]) {
                return;
            }
            LOG.log(Level.DEBUG, "stream from tier {0} broke off: {1}", resolution.tier().label(), e);
            stream.cancel().run();
            metrics.httpError(ProblemType.UPSTREAM.slug());
            finish.handle(ProblemType.UPSTREAM.status());
            served.request.connection().close();
        });
        body.handler(chunk -> {
            Buffer passed = asIs ? chunk : summary.feed(chunk);
            Buffer out = translator == null ? passed : translator.feed(chunk);
            if (out.length() > 0 && !response.closed()) {
                response.write(out);
                if (response.writeQueueFull()) {
                    body.pause();
                    served.pausedAt = System.nanoTime();
                    response.drainHandler(v -> {
                        response.drainHandler(null); // Vert.x keeps it: one drain per pause counted
                        served.clientWaitNanos += System.nanoTime() - served.pausedAt;
                        body.resume();
                    });
                }
            }
        });
        body.endHandler(v -> {
            if (done[0] || response.closed()) {
                return;
            }
            long upstreamEnded = System.nanoTime();
            Buffer last = asIs ? Buffer.buffer() : summary.finish();
            response.end(translator == null ? last : translator.finish()).onComplete(ar -> {
                // The last bytes wait in the socket for the client as the paused ones did.
                served.clientWaitNanos += System.nanoTime() - upstreamEnded;
                finish.handle(ar.succeeded() ? 200 : DataPlaneHandler.CLIENT_CLOSED);
            });
        });
        body.resume();
    }
}
