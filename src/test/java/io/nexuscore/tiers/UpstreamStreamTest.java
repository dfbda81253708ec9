package io.nexuscore.tiers;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UpstreamStreamTest {

    @ParameterizedTest
    @CsvSource(nullValues = "null", value = {
            "text/event-stream,text/event-stream",
            "text/event-stream; charset=utf-8,text/event-stream; charset=utf-8",
            "Text/Event-Stream,Text/Event-Stream",
            "application/json,application/json",
            "application/json;charset=UTF-8,application/json;charset=UTF-8",
            "text/html,text/event-stream",
            "text/html; charset=utf-8,text/event-stream",
            "application/javascript,text/event-stream",
            "image/svg+xml,text/event-stream",
            "'',text/event-stream",
            "null,text/event-stream",
    })
    void theClientGetsAnEventStreamOrJsonNeverWhatElseTheUpstreamSays(String upstream, String client) {
        assertEquals(client, new UpstreamStream(upstream, null, () -> { }).clientContentType());
    }
}
