package io.nexuscore.tiers.upstream;

import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;

/**
 * One OpenAI-compatible server of a tier's pool: where its requests go, how many are outstanding,
 * and its passive health. Health moves UP -> EJECTED after {@code ejectAfter} consecutive failures;
 * once {@code ejectMs} passed, one live request probes it (HALF_OPEN): success re-admits it, failure
 * ejects it again. All state changes run under the endpoint's lock; calls are short.
 */
final class UpstreamEndpoint {

    enum Health { UP, EJECTED, HALF_OPEN }

    /** What {@link #failed} or {@link #succeeded} changed, for events and metrics. */
    enum Transition { NONE, EJECTED, READMITTED }

    private final int index;
    private final URI chatCompletions;
    /** The same as a URL, parsed once: RequestOptions.setAbsoluteURI(String) parses its string per request. */
    private final URL chatCompletionsUrl;
    private final String display;
    private int outstanding;
    private int consecutiveFailures;
    private Health health = Health.UP;
    private long ejectedUntilNanos;

    UpstreamEndpoint(int index, URI baseUrl) {
        this.index = index;
        String base = baseUrl.toString();
        this.chatCompletions = URI.create((base.endsWith("/") ? base.substring(0, base.length() - 1) : base)
                + "/chat/completions");
        try {
            this.chatCompletionsUrl = chatCompletions.toURL();
        } catch (MalformedURLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("upstream baseUrl " + redacted(baseUrl) + " is not a URL: " + e.getMessage(), e);
        }
        this.display = redacted(baseUrl);
    }

    /** The URL without userinfo, for the log and the event stream (never the client). */
    static String redacted(URI url) {
        return url.getScheme() + "://" + url.getHost() + (url.getPort() >= 0 ? ":" + url.getPort() : "")
                + (url.getRawPath() == null ? "" : url.getRawPath());
    }

    int index() {
        return index;
    }

    URI chatCompletions() {
        return chatCompletions;
    }

    URL chatCompletionsUrl() {
        return chatCompletionsUrl;
    }

    private final java.util.Map<String, URL> beside = new java.util.concurrent.ConcurrentHashMap<>();

    /** {@link #besideChat}, parsed once per path. */
    URL url(String path) {
        return beside.computeIfAbsent(path, this::besideChat);
    }

    /** {@code baseUrl + path} (e.g. "/embeddings"), beside {@code baseUrl + /chat/completions}. */
    URL besideChat(String path) {
        String chat = chatCompletions.toString();
        String base = chat.substring(0, chat.length() - "/chat/completions".length());
        try {
            return URI.create(base + path).toURL();
        } catch (MalformedURLException | IllegalArgumentException e) {
            throw new IllegalArgumentException("upstream " + display + path + " is not a URL: " + e.getMessage(), e);
        }
    }

    /** The endpoint as logs and events name it: its base URL without credentials. */
    String display() {
        return display;
    }

    synchronized int outstanding() {
        return outstanding;
    }

    synchronized Health health() {
        return health;
    }

    /** Takes the endpoint for a normal request when it is UP. */
    synchronized boolean acquireIfUp() {
        if (health != Health.UP) {
            return false;
        }
        outstanding++;
        return true;
    }

    /** Takes the endpoint as the one half-open probe when its ejection has run out. */
    synchronized boolean acquireProbe(long nowNanos) {
        if (health != Health.EJECTED || nowNanos - ejectedUntilNanos < 0) {
            return false;
        }
        health = Health.HALF_OPEN;
        outstanding++;
        return true;
    }

    synchronized Transition succeeded() {
        outstanding--;
        consecutiveFailures = 0;
        if (health == Health.HALF_OPEN) {
            health = Health.UP;
            return Transition.READMITTED;
        }
        return Transition.NONE;
    }

    synchronized Transition failed(int ejectAfter, long ejectNanos, long nowNanos) {
        outstanding--;
        consecutiveFailures++;
        if (health == Health.HALF_OPEN || health == Health.UP && consecutiveFailures >= ejectAfter) {
            health = Health.EJECTED;
            ejectedUntilNanos = nowNanos + ejectNanos;
            return Transition.EJECTED;
        }
        return Transition.NONE;
    }

    /** The request ended without telling anything about the endpoint (the client went away). */
    synchronized void released() {
        outstanding--;
        if (health == Health.HALF_OPEN) {
            health = Health.EJECTED; // the probe is void; the next request due may probe again
        }
    }
}
