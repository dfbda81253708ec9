package io.nexuscore.dataplane;

import io.nexuscore.config.DataPlaneConfig;
import io.nexuscore.http.ByteBudget;
import io.nexuscore.http.ProblemType;
import io.nexuscore.http.Problems;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;

/**
 * The second step: an admitted request's body, read within its limits (size, the bytes all bodies
 * in arrival may hold, time), then handed to {@link TierDispatch}. One instance serves every
 * connection of every acceptor; each body gets its own {@link BodyReader}.
 */
final class BodyReading {

    private final long maxBodyBytes;
    /** Body bytes held while bodies arrive, over every connection of every acceptor (one handler serves them all). */
    private final ByteBudget heldBodies;
    private final long bodyTimeoutMs;
    private final Refusals refusals;
    private final TierDispatch dispatch;

    BodyReading(DataPlaneConfig config, DataPlaneMetrics metrics, Refusals refusals, TierDispatch dispatch) {
        this.maxBodyBytes = config.maxBodyBytes();
        this.heldBodies = new ByteBudget(config.maxHeldBodyBytes());
        metrics.heldBodyBytes(heldBodies);
        this.bodyTimeoutMs = config.bodyTimeoutMs();
        this.refusals = refusals;
        this.dispatch = dispatch;
    }

    void read(HttpServerRequest request, Endpoint endpoint, String tenant, long start) {
        new BodyReader(request, endpoint, tenant, start).start();
    }

    /**
     * Collects a body up to the limit; past it, answers 413 and stops reading. What it holds grows
     * with the bytes that actually arrived, never with what Content-Length announced (a client announcing
     * 1 MB and sending nothing holds a few bytes, not a megabyte). A body not complete within
     * {@code bodyTimeoutMs} gets 408 and the connection is closed. The chunks are joined once, at
     * the end ({@link BodyChunks}).
     */
    private final class BodyReader implements Handler<Buffer> {
        private final HttpServerRequest request;
        private final Endpoint endpoint;
        private final String tenant;
        private final long start;
        private final BodyChunks body = new BodyChunks();
        private final Vertx vertx;
        private long timer = -1;
        private boolean stopped;
        private boolean ended; // the body ended or broke off: no timer to arm
        /** Bytes of this body counted in {@link #heldBodies}; given back once, when the body ends or stops. */
        private long reserved;

        BodyReader(HttpServerRequest request, Endpoint endpoint, String tenant, long start) {
            this.request = request;
            this.endpoint = endpoint;
            this.tenant = tenant;
            this.start = start;
            this.vertx = Vertx.currentContext().owner();
        }

        void start() {
            MalformedBodyGuard guard = MalformedBodyGuard.of(ConnectionInspector.channelOf(request.connection()));
            if (guard != null) {
                guard.watch(this::undecodable);
            }
            request.handler(this);
            request.endHandler(v -> {
                ended = true;
                releaseHeld(); // past arrival: the body is the request's now, bounded by the tiers' queues
                if (guard != null) {
                    guard.unwatch();
                }
                vertx.cancelTimer(timer);
                if (!stopped) {
                    stopped = true;
                    dispatch.onBody(request, endpoint, tenant, body.whole(), start);
                }
            });
            request.exceptionHandler(e -> {
                ended = true;
                releaseHeld(); // broken off (the connection closed): nothing more arrives
                if (guard != null) {
                    guard.unwatch();
                }
                vertx.cancelTimer(timer);
            });
            // A body that came in the head's read ends within this turn of the event loop; the timer
            // is armed after it, only for a body still on its way. Most requests so schedule and
            // cancel no timer (two priority-queue and map operations each, ~3 % of the loop's time).
            Vertx.currentContext().runOnContext(v -> {
                if (!ended && !stopped) {
                    timer = vertx.setTimer(bodyTimeoutMs, id -> timedOut());
                }
            });
        }

        /** The chunked body could not be decoded: 400, and the connection closed (its framing is lost). */
        private void undecodable(Throwable cause) {
            ended = true;
            releaseHeld();
            vertx.cancelTimer(timer);
            if (stopped) {
                return;
            }
            stopped = true;
            refusals.refuse(request, endpoint, start, Problems.malformedHttp(400, "the request body could not be "
                    + "decoded: " + (cause == null || cause.getMessage() == null ? "bad chunked framing"
                    : cause.getMessage())), true);
        }

        private void timedOut() {
            releaseHeld();
            if (stopped) {
                return;
            }
            stopped = true;
            refusals.refuse(request, endpoint, start, ProblemType.REQUEST_TIMEOUT.problem("the request body did not "
                    + "arrive within " + bodyTimeoutMs + " ms (" + body.length() + " bytes received)"), true);
        }

        @Override
        public void handle(Buffer chunk) {
            if (stopped) {
                return;
            }
            if (body.length() + chunk.length() > maxBodyBytes) {
                stopped = true;
                vertx.cancelTimer(timer);
                releaseHeld();
                refusals.refuse(request, endpoint, start, Problems.bodyTooLarge(maxBodyBytes), true);
                return;
            }
            if (!heldBodies.tryReserve(chunk.length())) {
                stopped = true;
                vertx.cancelTimer(timer);
                long had = reserved;
                releaseHeld();
                refusals.refuse(request, endpoint, start, ProblemType.BODY_BUDGET.problem("request bodies arriving on "
                        + "all connections hold " + heldBodies.limit() + " bytes (dataPlane.maxHeldBodyBytes); this "
                        + "one had " + had + " of them: retry shortly").withHeader("Retry-After", "1"), true);
                return;
            }
            reserved += chunk.length();
            body.add(chunk);
        }

        private void releaseHeld() {
            heldBodies.release(reserved);
            reserved = 0;
        }
    }
}
