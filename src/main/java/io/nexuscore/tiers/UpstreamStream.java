package io.nexuscore.tiers;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.streams.ReadStream;
import java.util.Locale;

/**
 * An upstream's streaming answer, head received, body not yet consumed.
 *
 * @param contentType the upstream's Content-Type as it sent it (text/event-stream for OpenAI servers)
 * @param body        the event stream, paused: the consumer resumes it by piping it somewhere
 * @param cancel      abandons the exchange (the client went away): frees the upstream connection
 * @param nativeShape the events are already the client's API's (an upstream that speaks it): passed
 *                    through as they are, neither summarized nor translated
 */
public record UpstreamStream(String contentType, ReadStream<Buffer> body, Runnable cancel, boolean nativeShape) {

    public UpstreamStream(String contentType, ReadStream<Buffer> body, Runnable cancel) {
        this(contentType, body, cancel, false);
    }

    private static final String EVENT_STREAM = "text/event-stream";

    /**
     * The Content-Type the client gets: the upstream's when it is an event stream or JSON (a server
     * that ignored {@code stream: true}), else {@code text/event-stream}. An upstream is not trusted
     * to choose what a client, a browser perhaps, makes of the bytes (text/html, say).
     */
    public String clientContentType() {
        if (contentType == null) {
            return EVENT_STREAM;
        }
        int parameters = contentType.indexOf(';');
        String media = (parameters < 0 ? contentType : contentType.substring(0, parameters)).trim()
                .toLowerCase(Locale.ROOT);
        return media.equals(EVENT_STREAM) || media.equals("application/json") ? contentType : EVENT_STREAM;
    }
}
