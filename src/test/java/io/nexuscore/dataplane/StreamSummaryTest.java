package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** The rewrite of an upstream's event stream, fed in arbitrary pieces as the network delivers them. */
class StreamSummaryTest {

    private static final Resolution ASSIGNED = new Resolution(Tier.NANO, 12, RouteSource.USER, Thresholds.DEFAULT, 0);
    private static final String CHUNK = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
            + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
    private static final String USAGE = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
            + "\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":10,\"total_tokens\":110}}\n\n";
    private static final String DONE = "data: [DONE]\n\n";

    /** Feeds the stream one byte at a time: no event may depend on arriving whole. */
    private static String byteByByte(StreamSummary summary, String stream) {
        StringBuilder out = new StringBuilder();
        for (byte b : stream.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            out.append(summary.feed(Buffer.buffer(new byte[] {b})).toString());
        }
        return out.append(summary.finish().toString()).toString();
    }

    @Test
    void withoutUsageTheStreamPassesUnchanged() {
        String stream = ": keep-alive\n\n" + CHUNK + CHUNK + DONE;
        StreamSummary summary = new StreamSummary(ASSIGNED, true);
        assertEquals(stream, byteByByte(summary, stream));
        assertTrue(summary.reply().isEmpty());
    }

    @Test
    void theUsageChunkBecomesTheSummaryBeforeDone() {
        StreamSummary summary = new StreamSummary(ASSIGNED, true);
        String out = byteByByte(summary, CHUNK + USAGE + DONE);
        String[] events = out.split("\n\n");
        assertEquals(3, events.length, out);
        assertEquals(CHUNK.trim(), events[0]);
        JsonObject last = new JsonObject(events[1].substring(6));
        assertEquals(110, last.getJsonObject("usage").getInteger("total_tokens"));
        assertEquals(new JsonObject().put("assigned_tier", "nano").put("score", 12).put("route_source", "user")
                .put("observed_tier", "small").put("observed_score", 110), last.getJsonObject("nexuscore"));
        assertEquals("c", last.getString("id"));
        assertEquals("data: [DONE]", events[2]);
        assertEquals(Tier.SMALL, summary.reply().orElseThrow().observedTier());
    }

    @Test
    void usageRidingOnAChunkWithChoicesIsPassedAndStillSummarized() {
        String withChoices = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
                + "\"choices\":[{\"index\":0,\"delta\":{}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\r\n\r\n";
        StreamSummary summary = new StreamSummary(ASSIGNED, true);
        String out = byteByByte(summary, withChoices + "data: [DONE]\r\n\r\n");
        assertTrue(out.startsWith(withChoices), out);
        assertTrue(out.contains("\"observed_tier\":\"nano\""), out);
        assertTrue(out.endsWith("data: [DONE]\r\n\r\n"), out);
    }

    /** The usage-only chunk was held back for the summary: a stream that ends without [DONE] still gets it. */
    @Test
    void aStreamThatEndsWithoutDoneStillEndsWithTheSummary() {
        StreamSummary summary = new StreamSummary(ASSIGNED, true);
        String out = byteByByte(summary, CHUNK + USAGE);
        String[] events = out.split("\n\n");
        assertEquals(2, events.length, out);
        assertEquals(CHUNK.trim(), events[0]);
        JsonObject last = new JsonObject(events[1].substring(6));
        assertEquals(110, last.getJsonObject("usage").getInteger("total_tokens"));
        assertEquals("small", last.getJsonObject("nexuscore").getString("observed_tier"));
    }

    /** The summary never follows a [DONE] that already carried it, and comes before an unterminated tail. */
    @Test
    void theSummaryIsWrittenOnceAndBeforeAnUnterminatedTail() {
        StreamSummary done = new StreamSummary(ASSIGNED, true);
        String withDone = byteByByte(done, CHUNK + USAGE + DONE);
        assertEquals(1, withDone.split("\"usage\"", -1).length - 1, withDone);

        StreamSummary cut = new StreamSummary(ASSIGNED, true);
        String out = byteByByte(cut, CHUNK + USAGE + "data: {\"partial");
        assertTrue(out.endsWith("\n\ndata: {\"partial"), out);
        assertTrue(out.indexOf("\"nexuscore\"") < out.indexOf("data: {\"partial"), out);
    }

    /** A client that did not ask for usage never sees a chunk with empty choices; the usage still counts. */
    @Test
    void withoutTheClientAskingTheUsageChunkIsDroppedAndNoSummaryIsAdded() {
        StreamSummary summary = new StreamSummary(ASSIGNED, false);
        String out = byteByByte(summary, CHUNK + USAGE + DONE);
        assertEquals(CHUNK + DONE, out);
        assertEquals(Tier.SMALL, summary.reply().orElseThrow().observedTier());
    }

    /**
     * An upstream that never ends its event (broken or hostile) must not make the router hold its
     * stream: past {@link StreamSummary#MAX_HELD_BYTES} the held bytes are passed on as they are.
     */
    @Test
    void anEventThatNeverEndsIsPassedOnInsteadOfHeld() {
        StreamSummary summary = new StreamSummary(ASSIGNED, true);
        byte[] piece = "x".repeat(64 * 1024).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String start = "data: {\"content\":\"";
        long passed = summary.feed(Buffer.buffer(start)).length();
        int fed = start.length();
        for (int i = 0; i < 64; i++) { // 4 MiB in one unterminated event
            passed += summary.feed(Buffer.buffer(piece)).length();
            fed += piece.length;
            assertTrue(summary.held() <= StreamSummary.MAX_HELD_BYTES, "held " + summary.held() + " bytes");
        }
        assertEquals(fed, passed + summary.held(), "every byte is passed on or held, none lost or doubled");
        String after = summary.feed(Buffer.buffer("\"}\n\n" + CHUNK + DONE)).toString() + summary.finish();
        assertTrue(after.endsWith(CHUNK + DONE), "the events after it are read as usual: " + after.substring(Math.max(0, after.length() - 300)));
    }

    /** Token counts of the wrong type or sign are the upstream's fault: no assessment, no exception. */
    @Test
    void usageWithCountsThatAreNoCountsIsNotAnAssessment() {
        for (String counts : new String[] {"\"prompt_tokens\":\"100\",\"completion_tokens\":1",
                "\"prompt_tokens\":-5,\"completion_tokens\":1", "\"prompt_tokens\":1,\"completion_tokens\":[1]",
                "\"prompt_tokens\":1,\"completion_tokens\":{\"n\":1}"}) {
            StreamSummary summary = new StreamSummary(ASSIGNED, true);
            String usage = "data: {\"id\":\"c\",\"choices\":[],\"usage\":{" + counts + "}}\n\n";
            String out = byteByByte(summary, CHUNK + usage + DONE);
            assertTrue(summary.reply().isEmpty(), counts);
            assertTrue(out.startsWith(CHUNK) && out.endsWith(DONE), out);
        }
    }

    /** Counts past int's range are at most Integer.MAX_VALUE, never wrapped (the non-streamed path's rule). */
    @Test
    void usageCountsPastIntsRangeSaturate() {
        StreamSummary summary = new StreamSummary(ASSIGNED, true);
        byteByByte(summary, "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":4294967297,"
                + "\"completion_tokens\":1e400}}\n\n" + DONE);
        assertEquals(Integer.MAX_VALUE, summary.reply().orElseThrow().promptTokens());
        assertEquals(Integer.MAX_VALUE, summary.reply().orElseThrow().completionTokens());
        assertEquals(Tier.LARGE, summary.reply().orElseThrow().observedTier());
    }

    /** The first reason a chunk names is the answer's (traces); the nulls before it are not parsed for it. */
    @Test
    void theFirstFinishReasonNamedIsTheAnswers() {
        String toolCall = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
                + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\": \"tool_calls\"}]}\n\n";
        String later = toolCall.replace("tool_calls", "stop");
        String withNull = CHUNK.replace("}}]}", "},\"finish_reason\":null}]}");
        StreamSummary summary = new StreamSummary(ASSIGNED, false);
        String out = byteByByte(summary, withNull + toolCall + later + USAGE + DONE);
        assertEquals(withNull + toolCall + later + DONE, out, "the chunks pass as they came, the usage-only one dropped");
        assertEquals("tool_calls", summary.reply().orElseThrow().answer().finishReason());
        assertEquals(null, summary.reply().orElseThrow().answer().body());

        StreamSummary none = new StreamSummary(ASSIGNED, false);
        byteByByte(none, withNull + USAGE + DONE);
        assertEquals(null, none.reply().orElseThrow().answer().finishReason(), "null is no reason");
    }
}
