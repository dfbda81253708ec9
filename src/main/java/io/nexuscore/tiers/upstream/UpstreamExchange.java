package io.nexuscore.tiers.upstream;

import io.nexuscore.http.ByteBudget;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.TierFailure.Kind;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.streams.ReadStream;
import java.net.ConnectException;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One request through an upstream tier, from the first connection attempt to the end of the
 * answer's body. Over 400 lines on purpose: one exchange's state machine (attempts and retries,
 * three deadlines, cancellation, the answer's body), whose transitions share its fields and are
 * checked against each other when read together; each endpoint's try is an {@link UpstreamAttempt}.
 *
 * <p>Timeouts: {@code connectTimeoutMs} per TCP connect, {@code maxQueueWaitMs} for a pooled
 * connection, {@code firstByteTimeoutMs} from sending to the response head, {@code idleTimeoutMs}
 * between two chunks of the answer, and {@code timeoutMs} over all of it, streamed body included
 * (a stall mid-body ends the exchange at that deadline). A connection obtained after the deadline
 * passed is given back unused: the request is never sent. The whole-request and first-byte deadlines
 * are watched by the tier's {@link DeadlineSweep}, so they act up to one sweep period late (a tenth
 * of the shorter timeout, at most 25 ms).
 *
 * <p>Retries: a connect error, any failure of the exchange before the response head (reset, closed
 * connection, no head within {@code firstByteTimeoutMs}) or a 502/503 answer moves the request to
 * another endpoint, at most {@code maxRetries} times and within {@code timeoutMs}. They all happen before the head is handed over, so before any byte
 * reaches the client; nothing is retried once it was sent and the answer began.
 *
 * <p>Every attempt settles its endpoint exactly once: success (answer read to the end), failure
 * (counts towards ejection), or void (the client went away: says nothing about the endpoint).
 * Callbacks run on the caller's event loop; {@link #cancel} may come from anywhere.
 */
final class UpstreamExchange implements DeadlineSweep.Deadline {

    private final UpstreamTierBackend backend;
    private final Buffer body;
    private final boolean stream;
    private final long deadlineNanos;
    private final Set<UpstreamEndpoint> tried = new HashSet<>();
    private final Promise<HttpClientResponse> head = Promise.promise();
    private volatile UpstreamAttempt current;
    private volatile boolean expired;
    private volatile boolean cancelled;
    private volatile boolean idledOut;
    private volatile IdleWatchdog watchdog;
    private volatile ReadStream<Buffer> answer;
    /** The whole request's deadline no longer matters (the exchange ended, or it passed already). */
    private volatile boolean wholeSettled;
    /** The caller's context: where the exchange's callbacks run, and where a passed deadline acts. */
    private Context context;
    private final String path;

    UpstreamExchange(UpstreamTierBackend backend, Buffer body, boolean stream) {
        this(backend, body, stream, null);
    }

    /** @param path where beside baseUrl the request goes ("/responses", "/messages"); null: /chat/completions */
    UpstreamExchange(UpstreamTierBackend backend, Buffer body, boolean stream, String path) {
        this.path = path;
        this.backend = backend;
        this.body = body;
        this.stream = stream;
        this.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backend.upstream.timeoutMs());
    }

    /** Starts the first attempt; the future carries a 2xx head whose body is not consumed yet. */
    Future<HttpClientResponse> start() {
        context = backend.vertx.getOrCreateContext();
        backend.deadlines.watch(this);
        attempt();
        return head.future();
    }

    /** The endpoint of the current attempt (null before the first). */
    UpstreamEndpoint endpoint() {
        UpstreamAttempt a = current;
        return a == null ? null : a.endpoint;
    }

    /**
     * The accepted answer's body, for its one consumer (after {@link #start}'s future succeeded):
     * the response itself, each chunk seen by the idle watchdog on the way.
     */
    ReadStream<Buffer> answer() {
        return answer;
    }

    /**
     * The most a non-streamed answer may hold: far above any chat completion, far below what would
     * hurt the heap. An upstream sending more (broken or hostile) fails the request with a 502 and
     * its connection is reset; streamed answers are not held, so they have no such bound.
     */
    static final int MAX_ANSWER_BYTES = 16 << 20;

    /**
     * The accepted answer's whole body (the non-streamed path), at most {@link #MAX_ANSWER_BYTES}, its
     * bytes counted in the tier's {@link UpstreamTierBackend#heldAnswers} until the read ends.
     */
    Future<Buffer> readBody() {
        Promise<Buffer> read = Promise.promise();
        Buffer whole = Buffer.buffer();
        ByteBudget held = backend.heldAnswers;
        // Given back once, however the read ends: the buffer is the caller's from then on.
        read.future().onComplete(ar -> held.release(whole.length()));
        answer.exceptionHandler(read::tryFail).endHandler(v -> read.tryComplete(whole)).handler(chunk -> {
            if (read.future().isComplete()) {
                return;
            }
            if (!held.tryReserve(chunk.length())) {
                String where = endpoint() == null ? "upstream" : endpoint().display();
                read.tryFail(backend.reported(new TierFailure(Kind.UPSTREAM, "tier " + backend.tier.label()
                        + ": upstream answers in flight hold " + held.limit() + " bytes",
                        where + ": the tier's answers arriving at once hold " + held.limit() + " bytes; this one had "
                                + whole.length(), null), endpoint()));
                UpstreamAttempt a = current;
                if (a != null) {
                    a.voided(); // says nothing about this endpoint alone: the tier's answers together are too large
                    a.reset();
                }
                return;
            }
            if ((long) whole.length() + chunk.length() > MAX_ANSWER_BYTES) {
                held.release(chunk.length());
                String where = endpoint() == null ? "upstream" : endpoint().display();
                read.tryFail(backend.reported(new TierFailure(Kind.UPSTREAM, "tier " + backend.tier.label()
                        + ": upstream answer larger than " + MAX_ANSWER_BYTES + " bytes",
                        where + " sent more than " + MAX_ANSWER_BYTES + " bytes of answer", null), endpoint()));
                UpstreamAttempt a = current;
                if (a != null) {
                    a.failed("answer larger than " + MAX_ANSWER_BYTES + " bytes");
                    a.reset();
                }
                return;
            }
            whole.appendBuffer(chunk);
        });
        answer.resume(); // paused since the head arrived (accepted)
        return read.future();
    }

    /** The client went away: stop waiting, interrupt the call, free its connection. */
    void cancel() {
        cancelled = true;
        stopWatchdog();
        wholeSettled = true;
        head.tryFail(new TierFailure(Kind.CLOSED, "tier " + backend.tier.label() + ": the client went away"));
        UpstreamAttempt a = current;
        if (a != null) {
            a.voided();
            a.reset();
        }
    }

    private void attempt() {
        Optional<UpstreamEndpoint> next = backend.pool.acquire(tried, System.nanoTime());
        if (next.isEmpty()) {
            // Nothing was sent that the client saw; when the pool is now all out, say so, so the
            // data plane may hand the request to the tier's fallback.
            boolean allOut = backend.pool.endpoints().stream().noneMatch(e -> e.health() == UpstreamEndpoint.Health.UP);
            finish(allOut || lastFailure == null
                    ? new TierFailure(Kind.UNAVAILABLE, "tier " + backend.tier.label()
                            + ": every upstream endpoint is ejected after failing", "every endpoint ejected"
                            + (lastFailure == null ? "" : "; last failure: " + lastFailure.getMessage()), null)
                    : lastFailure);
            return;
        }
        UpstreamAttempt attempt = new UpstreamAttempt(backend, context, next.get());
        tried.add(attempt.endpoint);
        current = attempt;
        long remainingMs = remainingMs();
        backend.clients.current().request(backend.requestOptions(attempt.endpoint, path)
                        .setConnectTimeout(Math.max(1, Math.min(backend.maxQueueWaitMs, remainingMs))))
                .onComplete(ar -> {
                    if (ar.failed()) {
                        connectFailed(attempt, ar.cause());
                    } else {
                        send(attempt, ar.result());
                    }
                });
    }

    private TierFailure lastFailure;

    private void connectFailed(UpstreamAttempt attempt, Throwable cause) {
        if (head.future().isComplete()) {
            attempt.voided();
            return;
        }
        String tier = backend.tier.label();
        if (cause instanceof ConnectionPoolTooBusyException) {
            attempt.voided();
            finish(new TierFailure(Kind.QUEUE_FULL, "tier " + tier + ": all upstream connections busy and the wait "
                    + "queue is full", "wait queue full at " + attempt.endpoint.display(), cause));
            return;
        }
        if (cause instanceof TimeoutException && !(cause instanceof io.netty.channel.ConnectTimeoutException)) {
            // Vert.x's own timeout for obtaining a pooled connection: our queue, not the endpoint.
            attempt.voided();
            finish(remainingMs() <= 0
                    ? deadline("the deadline passed while waiting for a connection; not sent")
                    : new TierFailure(Kind.QUEUE_TIMEOUT, "tier " + tier + ": no upstream connection free within "
                            + backend.maxQueueWaitMs + " ms (maxQueueWaitMs)",
                            "no connection to " + attempt.endpoint.display() + " within " + backend.maxQueueWaitMs + " ms",
                            cause));
            return;
        }
        String why = "connect to " + attempt.endpoint.display() + " failed: " + describe(cause);
        attempt.failed(why);
        retryOrFinish(attempt, new TierFailure(Kind.UPSTREAM, "tier " + tier + ": upstream unreachable", why, cause));
    }

    private void send(UpstreamAttempt attempt, HttpClientRequest request) {
        attempt.request = request;
        if (head.future().isComplete()) {
            attempt.voided(); // cancelled or expired while the connection was on its way
            request.reset();
            return;
        }
        if (remainingMs() <= 0) {
            attempt.voided();
            request.reset();
            finish(deadline("the deadline passed while waiting for a connection; not sent"));
            return;
        }
        attempt.watchFirstByte();
        request.send(body).onComplete(ar -> {
            if (ar.failed()) {
                sendFailed(attempt, ar.cause());
                return;
            }
            HttpClientResponse response = ar.result();
            attempt.headReceived = true;
            if (response.statusCode() / 100 == 2) {
                accepted(attempt, request, response);
            } else {
                refused(attempt, response);
            }
        });
    }

    private void accepted(UpstreamAttempt attempt, HttpClientRequest request, HttpClientResponse response) {
        // The first-byte deadline settled with the head (headReceived); the body's idle timeout is
        // the IdleWatchdog's, so that it ends with the answer.
        long idleMs = backend.upstream.idleTimeoutMs();
        IdleWatchdog dog = new IdleWatchdog(backend.vertx, idleMs, () -> {
            idledOut = true;
            request.reset(0, new TimeoutException("no chunk of the answer within " + idleMs + " ms"));
        });
        watchdog = dog;
        answer = new WatchedBody(response, dog);
        // Held until its consumer's handlers are set: readBody resumes it, a stream's consumer by
        // piping it to the client. A caller off the event loop (submit from a worker or a test
        // thread) may reach readBody after the first chunks arrived, and an unpaused response
        // drops what comes before its handler: the answer would lose its front.
        response.pause();
        response.end().onComplete(end -> {
            dog.stop();
            wholeSettled = true;
            if (end.succeeded()) {
                attempt.succeeded();
            } else if (!cancelled) {
                attempt.failed(expired ? "answer not finished within " + backend.upstream.timeoutMs() + " ms"
                        : idledOut ? "answer went silent for " + idleMs + " ms"
                        : "answer broke off: " + describe(end.cause()));
            }
        });
        dog.start();
        if (!head.tryComplete(response)) {
            attempt.voided();
            request.reset();
        }
    }

    /**
     * A non-2xx head: read at most {@link UpstreamRefusal#MAX_BODY_BYTES} of its body (past that the
     * connection is reset, the rest unread), then judge it. A 5xx counts against the endpoint's
     * health (502/503 are retried elsewhere); a 4xx is about the request, and those about the
     * client's own request are passed on with their status.
     */
    private void refused(UpstreamAttempt attempt, HttpClientResponse response) {
        int status = response.statusCode();
        String retryAfter = response.getHeader("Retry-After");
        Buffer excerpt = Buffer.buffer();
        boolean[] judged = {false};
        Runnable judge = () -> {
            if (!judged[0]) {
                judged[0] = true;
                judge(attempt, status, retryAfter, excerpt);
            }
        };
        response.exceptionHandler(e -> judge.run());
        response.endHandler(v -> judge.run());
        response.handler(chunk -> {
            if (judged[0]) {
                return;
            }
            int room = UpstreamRefusal.MAX_BODY_BYTES - excerpt.length();
            if (chunk.length() <= room) {
                excerpt.appendBuffer(chunk);
                return;
            }
            excerpt.appendBuffer(chunk, 0, room);
            judge.run();
            attempt.reset(); // the rest stays unread: this connection cannot carry another request
        });
    }

    private void judge(UpstreamAttempt attempt, int status, String retryAfter, Buffer body) {
        String why = attempt.endpoint.display() + " answered " + status + ": " + UpstreamRefusal.excerpt(body);
        if (status >= 500) {
            attempt.failed(why);
        } else {
            attempt.succeeded(); // a 4xx is about the request, not the endpoint's health
        }
        String tier = backend.tier.label();
        if (UpstreamRefusal.passedOn(status)) {
            String message = UpstreamRefusal.clientMessage(body);
            finish(TierFailure.refusedUpstream(status, UpstreamRefusal.retryAfter(retryAfter),
                    "tier " + tier + ": the upstream refused the request (" + status + ")"
                            + (message == null ? "" : ": " + message), why));
            return;
        }
        TierFailure failure = new TierFailure(Kind.UPSTREAM, "tier " + tier + ": upstream answered " + status, why,
                null);
        if (status == 502 || status == 503) {
            retryOrFinish(attempt, failure);
        } else {
            finish(failure);
        }
    }

    private void sendFailed(UpstreamAttempt attempt, Throwable cause) {
        if (head.future().isComplete()) {
            return; // expire or cancel settled the attempt already
        }
        if (attempt.firstByteTimedOut || cause instanceof TimeoutException) {
            String why = attempt.endpoint.display() + " sent no response head within "
                    + backend.upstream.firstByteTimeoutMs() + " ms";
            attempt.failed(why);
            // Nothing of the answer has reached the client: another endpoint may still answer within
            // the request's deadline (a completion has no side effect to repeat).
            retryOrFinish(attempt, new TierFailure(Kind.DEADLINE, "tier " + backend.tier.label()
                    + ": upstream sent no answer within " + backend.upstream.firstByteTimeoutMs()
                    + " ms (firstByteTimeoutMs)", why, cause));
            return;
        }
        String why = "exchange with " + attempt.endpoint.display() + " failed: " + describe(cause);
        attempt.failed(why);
        // Before the response head (a reset, a closed connection, an endpoint killed mid-request):
        // the client has seen nothing, so another endpoint may answer.
        retryOrFinish(attempt, new TierFailure(Kind.UPSTREAM, "tier " + backend.tier.label()
                + (cause instanceof ConnectException ? ": upstream unreachable" : ": upstream failed"), why, cause));
    }

    private void retryOrFinish(UpstreamAttempt attempt, TierFailure failure) {
        lastFailure = failure;
        if (tried.size() <= backend.upstream.maxRetries() && remainingMs() > 0 && !head.future().isComplete()) {
            backend.retried(attempt.endpoint, failure.getMessage());
            attempt();
            return;
        }
        finish(failure);
    }

    private void finish(TierFailure failure) {
        wholeSettled = true;
        if (!head.future().isComplete()) {
            backend.reported(failure, endpoint()); // before the client's answer, so the event is never later
            head.tryFail(failure);
        }
    }

    private void stopWatchdog() {
        IdleWatchdog dog = watchdog;
        if (dog != null) {
            dog.stop();
        }
    }

    @Override
    public long dueNanos() {
        return deadlineNanos;
    }

    @Override
    public boolean settled() {
        return wholeSettled;
    }

    /** The whole request's deadline passed: {@link #expire} on the exchange's own context. */
    @Override
    public void passed() {
        context.runOnContext(v -> expire());
    }

    /** The whole-request deadline: before the head, a 504; after it, the body is cut off. */
    private void expire() {
        if (wholeSettled) {
            return; // it ended between the sweep's look and this turn of its loop
        }
        wholeSettled = true;
        expired = true;
        stopWatchdog();
        UpstreamAttempt a = current;
        String why = (a == null ? "upstream" : a.endpoint.display()) + " did not finish within "
                + backend.upstream.timeoutMs() + " ms";
        if (a != null) {
            a.failed(why);
        }
        if (!head.future().isComplete()) {
            TierFailure failure = deadline(why);
            backend.reported(failure, endpoint());
            head.tryFail(failure);
        }
        if (a != null) {
            a.reset();
        }
    }

    private TierFailure deadline(String why) {
        return new TierFailure(Kind.DEADLINE, "tier " + backend.tier.label() + ": upstream did not answer within "
                + backend.upstream.timeoutMs() + " ms", why, null);
    }

    /**
     * What a failure after the head (reading the body) means for the client: the whole-request
     * deadline or the idle timeout (504), or an upstream that broke off (502).
     */
    TierFailure failure(Throwable cause) {
        if (cause instanceof TierFailure f) {
            return f;
        }
        String tier = backend.tier.label();
        UpstreamEndpoint endpoint = endpoint();
        String where = endpoint == null ? "upstream" : endpoint.display();
        TierFailure failure;
        if (expired) {
            failure = deadline(where + " stalled mid-answer past " + backend.upstream.timeoutMs() + " ms");
        } else if (idledOut || cause instanceof TimeoutException) {
            failure = new TierFailure(Kind.DEADLINE, "tier " + tier + ": upstream went silent mid-answer for "
                    + backend.upstream.idleTimeoutMs() + " ms (idleTimeoutMs)",
                    where + " sent nothing for " + backend.upstream.idleTimeoutMs() + " ms mid-answer", cause);
        } else {
            failure = new TierFailure(Kind.UPSTREAM, "tier " + tier + ": upstream broke off its answer",
                    where + " broke off: " + describe(cause), cause);
        }
        return cancelled ? failure : backend.reported(failure, endpoint);
    }

    private long remainingMs() {
        return TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
    }

    private static String describe(Throwable cause) {
        return cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
    }
}
