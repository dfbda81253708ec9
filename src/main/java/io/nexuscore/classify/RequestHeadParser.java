package io.nexuscore.classify;

import java.util.Arrays;
import java.util.Optional;

/**
 * Reads a request head from the raw TCP payload of the segment that starts it, exactly as the
 * kernel classifier does (the head scan of nexus_head.bpf.h and score_body in nexus_score.bpf.h); a parity test keeps the two equal.
 * It fixes what {@link Scorer}'s javadoc leaves to the reader of raw bytes:
 *
 * <pre>
 * window          the first HEAD_WINDOW (1024) payload bytes; nothing after them is read
 * request head    the window starts with 3 to 7 bytes 'A'..'Z' followed by a space (a method
 *                 token); otherwise (or with fewer than 4 bytes) there is no verdict
 * request line    bytes before the first CR or LF; the whole window when it has neither
 * Content-Length  a header line starting (right after an LF) with "content-length:" (ASCII
 *                 case-insensitive, i.e. byte | 0x20), optional spaces/tabs, then decimal digits
 *                 ended by any non-digit; the first such header wins; no digits = ignored;
 *                 digits running to the end of the window = ignored; values saturate at 2^40
 * end of head     the first "\r\n\r\n" (bare "\n\n" does not end a head)
 * body length     Content-Length when present, else payload bytes after the end of head in
 *                 this segment (payload = the full segment, beyond the window), else 0
 * prompt estimate {@link PromptEstimate} over the body bytes after the end of head in the window, at
 *                 most BODY_WINDOW of them (none
 *                 when the end of head is not in the window)
 * </pre>
 *
 * A Content-Length header after the end of the head is body, never read. The body length of a
 * request whose body spans several segments and has no Content-Length is what the first segment
 * holds: such a verdict fails {@link KernelVerdict#belongsTo} and the Java scorer decides.
 */
public final class RequestHeadParser {

    /** HEAD_WINDOW in nexus_shared.h. */
    public static final int HEAD_WINDOW = 1024;
    /** CONTENT_LENGTH_MAX in nexus_shared.h. */
    public static final long CONTENT_LENGTH_MAX = 1L << 40;

    private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private RequestHeadParser() {
    }

    /** What the kernel reads from a head: the request line and the body length it scores. */
    public record HeadFacts(byte[] requestLine, long bodyLength, boolean contentLengthPresent, PromptEstimate estimate) {

        public int score(Scorer scorer) {
            return scorer.score(requestLine, estimate);
        }

        public int requestLineHash() {
            return Scorer.requestLineHash(requestLine);
        }
    }

    public static Optional<HeadFacts> parse(byte[] payload) {
        int window = Math.min(payload.length, HEAD_WINDOW);
        if (window < 4 || !startsRequest(payload, window)) {
            return Optional.empty();
        }

        int lineEnd = -1;
        int state = 0; // 0 none, 1 matching the name, 2 before digits, 3 in digits
        int namePos = 0;
        long contentLength = 0;
        boolean contentLengthFound = false;
        int headEnd = -1;
        int tail = 0;
        for (int i = 0; i < window; i++) {
            int c = payload[i] & 0xff;
            if (lineEnd < 0 && c != '\r' && c != '\n') {
                tail = (tail << 8) | c;
                continue;
            }
            if (lineEnd < 0) {
                lineEnd = i;
            }
            if (state == 1) {
                if ((c | 0x20) != CONTENT_LENGTH[namePos]) {
                    state = 0;
                } else if (++namePos == CONTENT_LENGTH.length) {
                    state = 2;
                }
            } else if (state == 2) {
                if (c >= '0' && c <= '9') {
                    contentLength = c - '0';
                    state = 3;
                } else if (c != ' ' && c != '\t') {
                    state = 0;
                }
            } else if (state == 3) {
                if (c >= '0' && c <= '9') {
                    contentLength = Math.min(CONTENT_LENGTH_MAX, contentLength * 10 + (c - '0'));
                } else {
                    contentLengthFound = true; // the first one decides; the scan goes on to the end of head
                    state = 0;
                }
            }
            if (c == '\n') {
                state = contentLengthFound ? 0 : 1;
                namePos = 0;
            }
            tail = (tail << 8) | c;
            if (tail == 0x0d0a0d0a) {
                headEnd = i + 1;
                break;
            }
        }

        byte[] requestLine = Arrays.copyOf(payload, lineEnd < 0 ? window : lineEnd);
        long bodyLength = contentLengthFound ? contentLength : headEnd >= 0 ? payload.length - headEnd : 0;
        PromptEstimate estimate = headEnd >= 0 ? PromptEstimate.scan(payload, headEnd, window, bodyLength)
                : PromptEstimate.fromLength(bodyLength);
        return Optional.of(new HeadFacts(requestLine, bodyLength, contentLengthFound, estimate));
    }

    private static boolean startsRequest(byte[] b, int window) {
        for (int i = 0; i < 8 && i < window; i++) {
            if (b[i] == ' ') {
                return i >= 3;
            }
            if (b[i] < 'A' || b[i] > 'Z') {
                return false;
            }
        }
        return false;
    }
}
