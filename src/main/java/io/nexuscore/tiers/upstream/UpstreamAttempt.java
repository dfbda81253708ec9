package io.nexuscore.tiers.upstream;

import io.vertx.core.Context;
import io.vertx.core.http.HttpClientRequest;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One endpoint's try within an {@link UpstreamExchange}, settled once: succeeded, failed (counts
 * towards the endpoint's ejection) or voided (says nothing about the endpoint). Watched for its
 * response head ({@code firstByteTimeoutMs} from sending) by the tier's deadline sweep.
 */
final class UpstreamAttempt implements DeadlineSweep.Deadline {

    private final UpstreamTierBackend backend;
    private final Context context;
    final UpstreamEndpoint endpoint;
    final AtomicBoolean settled = new AtomicBoolean();
    volatile HttpClientRequest request;
    volatile boolean headReceived;
    volatile boolean firstByteTimedOut;
    private long firstByteDueNanos;

    /** @param context the exchange's context, where a passed first-byte deadline acts */
    UpstreamAttempt(UpstreamTierBackend backend, Context context, UpstreamEndpoint endpoint) {
        this.backend = backend;
        this.context = context;
        this.endpoint = endpoint;
    }

    void succeeded() {
        if (settled.compareAndSet(false, true)) {
            backend.transitioned(endpoint, endpoint.succeeded(), "probe answered");
        }
    }

    void failed(String why) {
        if (settled.compareAndSet(false, true)) {
            backend.transitioned(endpoint, endpoint.failed(backend.upstream.ejectAfter(),
                    TimeUnit.MILLISECONDS.toNanos(backend.upstream.ejectMs()), System.nanoTime()), why);
        }
    }

    void voided() {
        if (settled.compareAndSet(false, true)) {
            endpoint.released();
        }
    }

    void reset() {
        HttpClientRequest r = request;
        if (r != null) {
            r.reset();
        }
    }

    /** Sent now: the response head is due within {@code firstByteTimeoutMs}. */
    void watchFirstByte() {
        firstByteDueNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backend.upstream.firstByteTimeoutMs());
        backend.deadlines.watch(this);
    }

    @Override
    public long dueNanos() {
        return firstByteDueNanos;
    }

    @Override
    public boolean settled() {
        return headReceived || settled.get();
    }

    /** No head in time: reset the request; its send fails and {@code UpstreamExchange.sendFailed} retries or answers 504. */
    @Override
    public void passed() {
        context.runOnContext(v -> {
            HttpClientRequest r = request;
            if (r != null && !settled()) {
                firstByteTimedOut = true;
                r.reset(0, new TimeoutException("no response head within "
                        + backend.upstream.firstByteTimeoutMs() + " ms"));
            }
        });
    }
}
