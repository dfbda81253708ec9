package io.nexuscore.tiers.upstream;
import io.nexuscore.tiers.StreamingBackend;
import io.nexuscore.tiers.UpstreamStream;

import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.config.TierConfig;
import io.nexuscore.config.UpstreamConfig;
import io.nexuscore.tiers.TierBackend;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.TierFailure.Kind;
import io.nexuscore.tiers.TierReply;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * A tier served by an OpenAI-compatible server: every request becomes a POST to
 * {@code baseUrl + /chat/completions} over a keep-alive connection pool.
 *
 * Concurrency: the tier's {@code instances} are the upstream connections (requests in flight) and its
 * {@code queueCapacity} the requests waiting for one, both shared out between the event loops'
 * pools ({@link LoopLocalClients}); past that, {@link Kind#QUEUE_FULL}.
 * The tier's upstream {@code timeoutMs} bounds the whole exchange (queue wait included) and expiry
 * is {@link Kind#DEADLINE} (504: the upstream is reachable but too slow); a refused, reset or
 * garbled exchange is {@link Kind#UPSTREAM} (502).
 *
 * The observed tier is the band the answer's total tokens fall in under the live thresholds: the
 * same scale as the scorer's token pass (about four bytes a token), measured after the fact.
 */
public final class UpstreamTierBackend implements TierBackend, StreamingBackend {

    private final Vertx vertx;
    private final Tier tier;
    private final UpstreamConfig upstream;
    private final String model;
    private final Supplier<Thresholds> thresholds;
    private final LoopLocalClients clients;
    private final ChatRequestBody requestBody;
    private final URI endpoint;
    /** The endpoint parsed once: a string URI would be parsed again for every request. */
    private final URL endpointUrl;

    /**
     * @param thresholds the live thresholds; called on an event loop, so it must not block
     *                   (in kernel mode: a snapshot or an mmap-ed map, not a syscall)
     */
    public UpstreamTierBackend(Vertx vertx, TierConfig config, Supplier<Thresholds> thresholds) {
        this.vertx = vertx;
        this.tier = config.tier();
        this.upstream = config.upstream().orElseThrow(() -> new IllegalArgumentException(
                "tiers." + config.tier().label() + " has no upstream configured"));
        this.model = config.model();
        this.thresholds = thresholds;
        String base = upstream.baseUrl().toString();
        this.endpoint = URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
                + "/chat/completions");
        try {
            this.endpointUrl = endpoint.toURL();
        } catch (MalformedURLException e) {
            throw new IllegalArgumentException("tiers." + tier.label() + ".upstream.baseUrl: " + e.getMessage(), e);
        }
        this.requestBody = new ChatRequestBody(upstream.model());
        HttpClientOptions options = new HttpClientOptions()
                .setKeepAlive(true)
                .setTcpNoDelay(true)
                .setConnectTimeout((int) Math.min(upstream.timeoutMs(), Integer.MAX_VALUE));
        this.clients = new LoopLocalClients(vertx, config.instances(), config.queueCapacity(),
                (connections, queue) -> vertx.createHttpClient(options,
                        new PoolOptions().setHttp1MaxSize(connections).setMaxWaitQueueSize(queue)));
    }

    @Override
    public Tier tier() {
        return tier;
    }

    @Override
    public CompletableFuture<TierReply> submit(TierRequest request) {
        CompletableFuture<TierReply> result = new CompletableFuture<>();
        exchange(request, false)
                .compose(HttpClientResponse::body)
                .map(this::reply)
                .onComplete(ar -> {
                    if (ar.succeeded()) {
                        result.complete(ar.result());
                    } else {
                        result.completeExceptionally(ar.cause());
                    }
                });
        return result;
    }

    @Override
    public Optional<StreamingBackend> streaming() {
        return Optional.of(this);
    }

    @Override
    public CompletableFuture<UpstreamStream> openStream(TierRequest request) {
        return exchange(request, true).map(response -> {
            response.pause();
            return new UpstreamStream(response.getHeader("Content-Type"), response, () -> response.request().reset());
        }).toCompletionStage().toCompletableFuture();
    }

    /**
     * Sends the request and delivers a 2xx response head; anything else fails with a TierFailure.
     * The deadline covers the time until the head arrives; a streamed body then runs as long as the
     * upstream keeps it open.
     */
    private Future<HttpClientResponse> exchange(TierRequest request, boolean stream) {
        Promise<HttpClientResponse> head = Promise.promise();
        AtomicReference<HttpClientRequest> sent = new AtomicReference<>();
        long timer = vertx.setTimer(upstream.timeoutMs(), id -> {
            if (head.tryFail(new TierFailure(Kind.DEADLINE, "upstream " + endpoint + " did not answer within "
                    + upstream.timeoutMs() + " ms"))) {
                HttpClientRequest inFlight = sent.get();
                if (inFlight != null) {
                    inFlight.reset();
                }
            }
        });
        Buffer body = requestBody.encode(request, stream);
        clients.current().request(requestOptions())
                .compose(req -> {
                    sent.set(req);
                    return req.send(body);
                })
                .compose(this::requireSuccess)
                .onComplete(ar -> {
                    vertx.cancelTimer(timer);
                    if (ar.succeeded()) {
                        if (!head.tryComplete(ar.result())) {
                            ar.result().request().reset();
                        }
                    } else {
                        head.tryFail(failure(ar.cause()));
                    }
                });
        return head.future();
    }

    private RequestOptions requestOptions() {
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setAbsoluteURI(endpointUrl)
                .putHeader("Content-Type", "application/json")
                .putHeader("Accept", "application/json, text/event-stream");
        upstream.apiKey().ifPresent(key -> options.putHeader("Authorization", "Bearer " + key));
        return options;
    }

    private Future<HttpClientResponse> requireSuccess(HttpClientResponse response) {
        if (response.statusCode() / 100 == 2) {
            return Future.succeededFuture(response);
        }
        return response.body().transform(ar -> Future.failedFuture(new TierFailure(Kind.UPSTREAM,
                "upstream " + endpoint + " answered " + response.statusCode()
                        + (ar.succeeded() ? ": " + truncate(ar.result().toString()) : ""))));
    }

    private TierReply reply(Buffer body) {
        try {
            JsonObject json = new JsonObject(body);
            JsonArray choices = json.getJsonArray("choices");
            if (choices == null || choices.isEmpty()) {
                throw new TierFailure(Kind.UPSTREAM, "upstream " + endpoint + " answered without choices");
            }
            JsonObject choice = choices.getJsonObject(0);
            JsonObject message = choice.getJsonObject("message");
            String text = message != null ? message.getString("content", "") : choice.getString("text", "");
            JsonObject usage = json.getJsonObject("usage");
            if (usage == null) {
                // No usage, no assessment: report the tier itself rather than invent a misroute.
                return new TierReply(text, tier, 0, 0, model);
            }
            int prompt = usage.getInteger("prompt_tokens", 0);
            int completion = usage.getInteger("completion_tokens", 0);
            int score = (int) Math.min(Scorer.MAX_SCORE, (long) prompt + completion);
            return new TierReply(text, thresholds.get().tierFor(score), score, prompt, completion, model);
        } catch (DecodeException | ClassCastException e) {
            throw new TierFailure(Kind.UPSTREAM, "upstream " + endpoint + " answered malformed JSON: " + e.getMessage(), e);
        }
    }

    private TierFailure failure(Throwable cause) {
        if (cause instanceof TierFailure failure) {
            return failure;
        }
        if (cause instanceof ConnectionPoolTooBusyException) {
            return new TierFailure(Kind.QUEUE_FULL, "tier " + tier.label() + ": all upstream connections busy and "
                    + "the wait queue is full", cause);
        }
        String reason = cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
        return new TierFailure(Kind.UPSTREAM, "upstream " + endpoint + " failed: " + reason, cause);
    }

    private static String truncate(String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    @Override
    public void close() {
        clients.close();
    }
}
