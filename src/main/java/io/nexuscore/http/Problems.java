package io.nexuscore.http;

import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import java.util.Collection;

/** Problems whose detail or headers both listeners phrase the same way. */
public final class Problems {

    private Problems() {
    }

    public static Problem malformedHttp(int status, String detail) {
        return new Problem(ProblemType.MALFORMED_HTTP, status, detail);
    }

    /**
     * The answer to a request head the decoder refused (both listeners): a framing RFC 9112 refuses
     * with its status, a request line too long 414, headers too large 431, anything else 400, the
     * decoder's complaint in the detail.
     */
    public static Problem undecodable(Throwable cause) {
        if (cause instanceof StrictFramingDecoder.RefusedFraming refused) {
            return malformedHttp(refused.status(), "the request's body framing is refused: " + refused.getMessage());
        }
        int status = cause instanceof TooLongHttpLineException ? 414
                : cause instanceof TooLongHttpHeaderException ? 431 : 400;
        return malformedHttp(status, cause instanceof TooLongFrameException || cause == null
                ? "the request head could not be parsed"
                : "the request head could not be parsed: " + cause.getMessage());
    }

    public static Problem malformedJson(String detail) {
        return ProblemType.MALFORMED_JSON.problem(detail);
    }

    public static Problem invalidRequest(String detail) {
        return ProblemType.INVALID_REQUEST.problem(detail);
    }

    public static Problem bodyTooLarge(long limit) {
        return ProblemType.BODY_TOO_LARGE.problem("request bodies are limited to " + limit + " bytes");
    }

    public static Problem notFound(String path) {
        return ProblemType.NOT_FOUND.problem("no resource at " + path);
    }

    public static Problem methodNotAllowed(String method, String path, Collection<String> allowed) {
        return ProblemType.METHOD_NOT_ALLOWED.problem(method + " is not allowed on " + path)
                .withHeader("Allow", String.join(", ", allowed));
    }

    public static Problem internal(String detail) {
        return ProblemType.INTERNAL.problem(detail);
    }

    /**
     * A client's header token fit for a problem's detail: at most {@code max} characters, printable
     * ASCII only (anything else as '?'), so an echoed value can neither be long nor carry control bytes.
     */
    public static String clientToken(String token, int max) {
        StringBuilder out = new StringBuilder(Math.min(token.length(), max));
        for (int i = 0; i < token.length() && out.length() < max; i++) {
            char c = token.charAt(i);
            out.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return out.toString();
    }
}
