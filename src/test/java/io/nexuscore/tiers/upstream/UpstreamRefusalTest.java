package io.nexuscore.tiers.upstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class UpstreamRefusalTest {

    @Test
    void theClientGetsTheOpenAiMessageOnly() {
        assertEquals("max_tokens is too large", UpstreamRefusal.clientMessage(Buffer.buffer(
                "{\"error\":{\"message\":\"max_tokens is too large\",\"type\":\"invalid_request_error\",\"param\":\"x\"}}")));
        assertEquals("model overloaded", UpstreamRefusal.clientMessage(Buffer.buffer("{\"error\":\"model overloaded\"}")),
                "llama.cpp and others send the message as the error itself");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "not json", "[1,2]", "\"text\"", "{\"error\":{\"message\":42}}", "{\"error\":{}}",
            "{\"error\":{\"message\":\"  \"}}", "{\"detail\":\"FastAPI style\"}", "{\"error\":{\"message\":\"cut"})
    void aBodyWithoutAMessageGivesNone(String body) {
        assertNull(UpstreamRefusal.clientMessage(Buffer.buffer(body)), body);
    }

    @Test
    void messagesAndExcerptsAreOneLineOfBoundedLength() {
        String forged = "bad\r\n2026-12-03 WARN control plane token is abc\u2028\u0000" + "y".repeat(1000);
        String message = UpstreamRefusal.clientMessage(Buffer.buffer("{\"error\":{\"message\":\""
                + forged.replace("\r", "\\r").replace("\n", "\\n").replace("\u0000", "\\u0000") + "\"}}"));
        assertTrue(message.startsWith("bad  2026-12-03 WARN"), message);
        assertEquals(UpstreamRefusal.MAX_MESSAGE_CHARS + 3, message.length());
        assertTrue(message.chars().noneMatch(c -> Character.isISOControl(c) || c == '\u2028'), message);
        String excerpt = UpstreamRefusal.excerpt(Buffer.buffer(forged));
        assertEquals(UpstreamRefusal.MAX_EXCERPT_CHARS + 3, excerpt.length());
        assertTrue(excerpt.chars().noneMatch(Character::isISOControl), excerpt);
        assertEquals("ab...", UpstreamRefusal.printable("ab\uD83D\uDE00", 3), "never half a surrogate pair");
    }

    @ParameterizedTest
    @CsvSource(nullValues = "null", value = {"7,7", " 120 ,120", "0,0", "99999,3600", "999999999999,null",
            "-1,null", "1.5,null", "'Wed, 21 Oct 2015 07:28:00 GMT',null", "'',null", "null,null"})
    void retryAfterIsWholeSecondsWithinAnHour(String header, String expected) {
        assertEquals(expected, UpstreamRefusal.retryAfter(header));
    }

    @Test
    void onlyTheClientsOwnFaultsArePassedOn() {
        for (int status : new int[] {400, 413, 422, 429}) {
            assertTrue(UpstreamRefusal.passedOn(status), Integer.toString(status));
        }
        for (int status : new int[] {401, 403, 404, 405, 408, 409, 500, 502, 503}) {
            assertTrue(!UpstreamRefusal.passedOn(status), Integer.toString(status));
        }
    }
}
