package io.nexuscore.classify;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The raw-head rules in Java alone (the kernel side is ClassifierTestRunTest and ParityTest). */
class RequestHeadParserTest {

    private static RequestHeadParser.HeadFacts parse(String payload) {
        return RequestHeadParser.parse(payload.getBytes(StandardCharsets.ISO_8859_1)).orElseThrow();
    }

    @Test
    void contentLengthDecidesTheBodyLength() {
        RequestHeadParser.HeadFacts head = parse("POST /sum HTTP/1.1\r\nContent-Length: 400\r\n\r\nabc");
        assertEquals(400, head.bodyLength());
        assertTrue(head.contentLengthPresent());
        assertArrayEquals("POST /sum HTTP/1.1".getBytes(StandardCharsets.US_ASCII), head.requestLine());
        assertEquals(79 + 10, head.score(new Scorer(ScoreWeights.DEFAULT)), "no prompt string: 79 tokens from the length");
        assertTrue(head.estimate().blind());
    }

    @Test
    void withoutContentLengthTheBodyIsWhatFollowsTheHead() {
        assertEquals(3, parse("POST / HTTP/1.1\r\nHost: a\r\n\r\nabc").bodyLength());
        assertEquals(0, parse("POST / HTTP/1.1\r\nHost: a\r\n").bodyLength(), "end of head not in the segment");
        assertFalse(parse("POST / HTTP/1.1\r\nContent-Length: 12").contentLengthPresent(), "digits cut off");
    }

    @Test
    void onlyMethodTokensStartAHead() {
        assertTrue(RequestHeadParser.parse("PUT /x HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII)).isPresent());
        assertFalse(RequestHeadParser.parse("Put /x HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII)).isPresent());
        assertFalse(RequestHeadParser.parse("GE /x".getBytes(StandardCharsets.US_ASCII)).isPresent());
        assertFalse(RequestHeadParser.parse("GET".getBytes(StandardCharsets.US_ASCII)).isPresent());
        assertFalse(RequestHeadParser.parse("HTTP/1.1 200 OK\r\n\r\n".getBytes(StandardCharsets.US_ASCII)).isPresent());
    }

    @Test
    void requestLineWithoutEndIsTheWholeWindow() {
        String line = "GET /" + "a".repeat(2000);
        assertEquals(RequestHeadParser.HEAD_WINDOW, parse(line).requestLine().length);
    }
}
