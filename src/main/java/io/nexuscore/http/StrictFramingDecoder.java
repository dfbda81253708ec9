package io.nexuscore.http;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpVersion;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.impl.HttpServerConnection;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Vert.x's request decoder with RFC 9112's framing rules enforced before a body is read.
 *
 * <p>Why: Netty reads {@code Transfer-Encoding: gzip} as "no body" (the bytes after the head become
 * the next request: the classic smuggling shape), {@code chunked, gzip} as chunked, and drops a
 * {@code Content-Length} that comes beside {@code Transfer-Encoding: chunked} and keeps the
 * connection open. A front proxy that frames such a request the other way would let one client's
 * bytes be read as another request here. RFC 9112 §6.1 and §6.3 say: a transfer coding the server
 * does not know → 501; chunked not the last coding, chunked twice, or a Transfer-Encoding in an
 * HTTP/1.0 request → 400; Content-Length beside Transfer-Encoding → may be refused, and the
 * connection must be closed either way. Each is refused here, at the head, so the decoder
 * discards the rest of the connection's input (nothing after the head is ever read as a request)
 * and the invalid-request handler answers and closes.
 *
 * <p>The hook is {@link #isContentAlwaysEmpty}: the decoder asks it once per head, after the
 * headers are read and before it picks the body framing; an exception there fails the head. The
 * class extends Vert.x's own decoder (an {@code impl} class, so Vert.x's header interning and
 * limits stay as they are); a Vert.x upgrade that changes it shows in StrictFramingDecoderTest.
 */
public final class StrictFramingDecoder extends VertxHttpRequestDecoder {

    /** The name Vert.x gives its decoder in each connection's pipeline. */
    public static final String DECODER = "httpDecoder";

    /** A head whose body framing is refused, with the status RFC 9112 gives it. */
    public static final class RefusedFraming extends IllegalArgumentException {
        private final int status;

        RefusedFraming(int status, String message) {
            super(message);
            this.status = status;
        }

        public int status() {
            return status;
        }
    }

    StrictFramingDecoder(HttpServerOptions options) {
        super(options);
    }

    /**
     * Swaps an HTTP/1.x server connection's decoder for this one, built from the server's own
     * options (so the same limits). It must run before the first byte is decoded: from the
     * connection handler of a server with h2c off, which Vert.x calls at accept (with h2c on it calls
     * it after protocol detection, when the first request is already half decoded). Other
     * connections: nothing.
     */
    public static void install(HttpConnection connection, HttpServerOptions options) {
        if (connection instanceof HttpServerConnection server
                && server.channelHandlerContext().pipeline().get(DECODER) != null) {
            server.channelHandlerContext().pipeline().replace(DECODER, DECODER, new StrictFramingDecoder(options));
        }
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpMessage message) {
        check(message);
        return super.isContentAlwaysEmpty(message);
    }

    /** Throws {@link RefusedFraming} when the head's body framing is one RFC 9112 refuses. */
    static void check(HttpMessage message) {
        if (!message.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)) {
            return; // the common case, without the list getAll would allocate
        }
        List<String> lines = message.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING);
        if (message.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
            throw new RefusedFraming(400, "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1)");
        }
        if (message.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
            throw new RefusedFraming(400, "both Content-Length and Transfer-Encoding: the body's length is ambiguous "
                    + "(RFC 9112 §6.3); send one of them");
        }
        List<String> codings = codings(lines);
        if (codings.isEmpty() || codings.contains("")) {
            throw new RefusedFraming(400, "an empty transfer coding in Transfer-Encoding");
        }
        if (!codings.get(codings.size() - 1).equals("chunked")) {
            throw new RefusedFraming(400, "chunked is not the last transfer coding, so the body's length cannot be "
                    + "determined (RFC 9112 §6.3)");
        }
        if (codings.indexOf("chunked") != codings.size() - 1) {
            throw new RefusedFraming(400, "chunked applied more than once (RFC 9112 §7)");
        }
        if (codings.size() > 1) {
            throw new RefusedFraming(501, "transfer coding '" + Problems.clientToken(codings.get(0), 32)
                    + "' is not supported; send the body with Transfer-Encoding: chunked or Content-Length");
        }
    }

    /** The codings of every Transfer-Encoding line in order, lower case, parameters dropped. */
    private static List<String> codings(List<String> lines) {
        List<String> codings = new ArrayList<>();
        for (String line : lines) {
            for (String coding : line.split(",", -1)) {
                int parameters = coding.indexOf(';');
                codings.add((parameters < 0 ? coding : coding.substring(0, parameters)).trim().toLowerCase(Locale.ROOT));
            }
        }
        return codings;
    }
}
