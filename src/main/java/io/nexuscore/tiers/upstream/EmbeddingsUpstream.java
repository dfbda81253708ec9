package io.nexuscore.tiers.upstream;

import io.nexuscore.config.UpstreamConfig;
import io.nexuscore.tiers.TierFailure;
import io.nexuscore.tiers.TierFailure.Kind;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.lang.System.Logger.Level;
import java.net.URL;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The embeddings target: {@code POST baseUrl + /embeddings} on a pool of OpenAI-compatible servers,
 * with the pool's balancing and passive health ({@link EndpointPool}: least outstanding, ejected
 * after {@code ejectAfter} consecutive failures, re-admitted through a half-open probe), further
 * endpoints tried after a connect error or a 502/503/504 (at most {@code maxRetries}), and the
 * connect, idle and whole-request timeouts of a tier's upstream. The answer is the upstream's, bounded
 * to {@link UpstreamExchange#MAX_ANSWER_BYTES}: an embeddings answer is never rewritten, so its
 * {@code encoding_format} and {@code dimensions} are the upstream's to honour.
 */
public final class EmbeddingsUpstream implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(EmbeddingsUpstream.class.getName());

    /** What the upstream answered: its status, content type and body. */
    public record Answer(int status, String contentType, Buffer body) {
    }

    private final UpstreamConfig config;
    private final EndpointPool pool;
    private final Map<UpstreamEndpoint, URL> urls;
    private final HttpClientAgent client;
    private final String authorization;

    public EmbeddingsUpstream(Vertx vertx, UpstreamConfig config, int maxConnections) {
        this.config = config;
        this.pool = new EndpointPool(config.baseUrls());
        this.urls = pool.endpoints().stream().collect(Collectors.toMap(e -> e, e -> e.besideChat("/embeddings")));
        this.client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true),
                new PoolOptions().setHttp1MaxSize(maxConnections));
        this.authorization = config.apiKey().map(key -> "Bearer " + key).orElse(null);
    }

    /** Forwards {@code body} (the client's request, its model already the upstream's); fails with a {@link TierFailure}. */
    public Future<Answer> forward(Buffer body) {
        Promise<Answer> result = Promise.promise();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.timeoutMs());
        attempt(body, new HashSet<>(), deadline, null, result);
        return result.future();
    }

    private void attempt(Buffer body, Set<UpstreamEndpoint> tried, long deadline, TierFailure last, Promise<Answer> result) {
        long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (remainingMs <= 0) {
            result.fail(new TierFailure(Kind.DEADLINE, "embeddings: no answer within " + config.timeoutMs() + " ms"));
            return;
        }
        Optional<UpstreamEndpoint> next = pool.acquire(tried, System.nanoTime());
        if (next.isEmpty()) {
            result.fail(last != null ? last : new TierFailure(Kind.UNAVAILABLE,
                    "embeddings: every upstream endpoint is ejected after failing"));
            return;
        }
        UpstreamEndpoint endpoint = next.get();
        tried.add(endpoint);
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setAbsoluteURI(urls.get(endpoint))
                .putHeader("Content-Type", "application/json")
                .putHeader("Accept", "application/json")
                .setConnectTimeout(Math.min(config.connectTimeoutMs(), remainingMs))
                .setIdleTimeout(config.idleTimeoutMs());
        if (authorization != null) {
            options.putHeader("Authorization", authorization);
        }
        client.request(options)
                .compose(request -> request.send(body))
                .compose(response -> read(response).map(b -> new Answer(response.statusCode(),
                        response.getHeader("Content-Type"), b)))
                .timeout(remainingMs, TimeUnit.MILLISECONDS)
                .onComplete(ar -> {
                    long now = System.nanoTime();
                    if (ar.succeeded() && !retryable(ar.result().status())) {
                        endpoint.succeeded();
                        result.complete(ar.result());
                        return;
                    }
                    String why = ar.succeeded() ? "answered " + ar.result().status() : String.valueOf(ar.cause());
                    UpstreamEndpoint.Transition transition = endpoint.failed(config.ejectAfter(),
                            TimeUnit.MILLISECONDS.toNanos(config.ejectMs()), now);
                    if (transition == UpstreamEndpoint.Transition.EJECTED) {
                        LOG.log(Level.WARNING, "embeddings upstream {0} ejected: {1}", endpoint.display(), why);
                    }
                    TierFailure failure = new TierFailure(Kind.UPSTREAM, "embeddings: the upstream failed",
                            "embeddings upstream " + endpoint.display() + " " + why, ar.failed() ? ar.cause() : null);
                    if (ar.succeeded() && tried.size() > config.maxRetries()) {
                        result.complete(ar.result()); // the last word is the upstream's own 5xx
                    } else if (tried.size() <= config.maxRetries()) {
                        attempt(body, tried, deadline, failure, result);
                    } else {
                        result.fail(failure);
                    }
                });
    }

    /** A server that is down or overloaded: another endpoint may answer. */
    private static boolean retryable(int status) {
        return status == 502 || status == 503 || status == 504;
    }

    /** The whole answer, failing past {@link UpstreamExchange#MAX_ANSWER_BYTES} rather than holding more. */
    private static Future<Buffer> read(HttpClientResponse response) {
        Promise<Buffer> read = Promise.promise();
        Buffer body = Buffer.buffer();
        response.handler(chunk -> {
            if (body.length() + chunk.length() > UpstreamExchange.MAX_ANSWER_BYTES) {
                read.tryFail(new TierFailure(Kind.UPSTREAM, "embeddings: the upstream's answer is larger than "
                        + UpstreamExchange.MAX_ANSWER_BYTES + " bytes"));
                response.request().reset();
                return;
            }
            body.appendBuffer(chunk);
        });
        response.exceptionHandler(read::tryFail);
        response.endHandler(v -> read.tryComplete(body));
        return read.future();
    }

    @Override
    public void close() {
        client.close();
    }
}
