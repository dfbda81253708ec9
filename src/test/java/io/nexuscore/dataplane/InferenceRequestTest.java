package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.http.ProblemException;
import io.nexuscore.tiers.ChatFields;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class InferenceRequestTest {

    private static final Endpoint CHAT = Endpoint.match(HttpMethod.POST, "/v1/chat/completions");
    private static final Endpoint TASK = Endpoint.match(HttpMethod.POST, "/v1/tasks/generate");

    private static InferenceRequest parse(Endpoint endpoint, String json) {
        return InferenceRequest.parse(endpoint, Buffer.buffer(json), true);
    }

    @Test
    void chatMessagesFlattenInOrderWithContentParts() {
        InferenceRequest r = parse(CHAT, """
                {"model":"gpt-4o","stream":true,"max_tokens":7,"messages":[
                  {"role":"system","content":"be brief"},
                  {"role":"user","content":[{"type":"text","text":"hi "},{"type":"text","text":"there"}]}]}""");
        assertEquals("be brief\nhi there", r.work().prompt());
        assertEquals("chat", r.work().task());
        assertEquals(7, r.work().maxTokens());
        assertTrue(r.stream());
    }

    @Test
    void simulationExtensionsMapToTheTierRequest() {
        InferenceRequest r = parse(TASK, """
                {"prompt":"p","simulate_ms":15,"simulate_alloc_bytes":1048576,"simulate_spin":true}""");
        assertEquals(new TierRequest.Simulation(15, 1 << 20, true), r.work().simulation());
        assertEquals("generate", r.work().task());
        assertFalse(r.stream());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "{", "[1,2]", "\"text\"", "{\"messages\": }"})
    void notAJsonObjectIsMalformedJson(String body) {
        ProblemException e = assertThrows(ProblemException.class, () -> parse(CHAT, body));
        assertEquals("malformed-json", e.problem().slug());
    }

    /** A 400's detail repeats a bad value's first characters and its length, not the value itself. */
    @ParameterizedTest
    @ValueSource(strings = {"stream", "stream_options", "max_tokens"})
    void aHugeBadValueIsNotEchoedWhole(String field) {
        String huge = "[" + "1,".repeat(500_000) + "1]";
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"" + field + "\":" + huge + "}";
        ProblemException e = assertThrows(ProblemException.class, () -> parse(CHAT, body));
        String detail = e.problem().detail();
        assertTrue(detail.length() < 300, detail.length() + " characters: " + detail.substring(0, 120));
        assertTrue(detail.contains("[1,1,1") && detail.contains("(1000003 characters)"), detail);
    }

    @Test
    void nestingPastTheParsersLimitIsMalformedJsonEvenInAFieldTheRouterSkips() {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"deep\":"
                + "[".repeat(2000) + "]".repeat(2000) + "}";
        ProblemException e = assertThrows(ProblemException.class, () -> parse(CHAT, body));
        assertEquals("malformed-json", e.problem().slug());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{}",
        "{\"messages\":[]}",
        "{\"messages\":[{\"content\":\"no role\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":5}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":1.5}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":\"yes\"}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"simulate_ms\":-1}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":1e400}"
    })
    void wrongShapesAreInvalidRequests(String body) {
        ProblemException e = assertThrows(ProblemException.class, () -> parse(CHAT, body));
        assertEquals("invalid-request", e.problem().slug());
        assertEquals(400, e.problem().status());
    }

    @Test
    void testHooksAreRejectedNamingTheFieldsWhenOff() {
        ProblemException e = assertThrows(ProblemException.class, () -> InferenceRequest.parse(TASK,
                Buffer.buffer("{\"prompt\":\"hi\",\"simulate_ms\":1500,\"simulate_spin\":true}"), false));
        assertEquals("invalid-request", e.problem().slug());
        assertTrue(e.problem().detail().contains("simulate_ms, simulate_spin"), e.problem().detail());
        assertFalse(InferenceRequest.parse(TASK, Buffer.buffer("{\"prompt\":\"hi\"}"), false).simulated());
    }

    private static final Endpoint COMPLETION = Endpoint.match(HttpMethod.POST, "/v1/completions");

    /** What a parse came to: the request, or the problem's status and detail. */
    private static Object outcome(Supplier<?> parse) {
        try {
            return parse.get();
        } catch (ProblemException e) {
            return e.problem().status() + " " + e.problem().slug() + ": " + e.problem().detail();
        }
    }

    @Test
    void theStreamingPassTakesTheCommonRequestsWhole() {
        List<String> common = List.of(
                "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}]}",
                "{\"messages\":[{\"role\":\"system\",\"content\":\"be \\\"brief\\\"\\n\"},{\"role\":\"user\",\"content\":null,"
                        + "\"name\":{\"x\":[1,2]}}],\"max_tokens\":64,\"stream\":true,"
                        + "\"stream_options\":{\"include_usage\":true},\"temperature\":0.2}",
                " { \"stream\" : false , \"messages\" : [ { \"content\" : \"\\u00e9t\\u00e9\" , \"role\" : \"user\" } ] } ");
        for (String body : common) {
            StreamingRequestParser.Parsed fast = StreamingRequestParser.parse(CHAT, Buffer.buffer(body), false);
            assertNotNull(fast, body);
            assertEquals(InferenceRequest.parseTree(CHAT, Buffer.buffer(body), false), fast.request(), body);
            assertEquals(ChatFields.locate(Buffer.buffer(body)), fast.chatFields(), body);
        }
        assertEquals("été", StreamingRequestParser.parse(CHAT, Buffer.buffer(common.get(2)), false).request().work().prompt());
        // The second body's fields, where a forward splices: the values' bytes as the client wrote them.
        String second = common.get(1);
        ChatFields at = StreamingRequestParser.parse(CHAT, Buffer.buffer(second), false).chatFields();
        assertEquals("true", second.substring(at.stream().from(), at.stream().to()));
        assertEquals("{\"include_usage\":true}", second.substring(at.streamOptions().from(), at.streamOptions().to()));
        assertNull(at.model());
        assertEquals("{", second.substring(at.inside() - 1, at.inside()));
        assertNotNull(StreamingRequestParser.parse(TASK, Buffer.buffer("{\"prompt\":\"p\",\"simulate_ms\":3}"), true));
        assertNotNull(StreamingRequestParser.parse(COMPLETION, Buffer.buffer("{\"prompt\":\"p\",\"model\":7}"), false));
    }

    /**
     * A body in UTF-16 has no byte offsets (Jackson reads it as characters): the streaming pass
     * declines it rather than hand on spans at -1, and the tree reads the request.
     */
    @Test
    void aBodyInUtf16IsLeftToTheTree() {
        Buffer body = Buffer.buffer("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
                .getBytes(java.nio.charset.StandardCharsets.UTF_16LE));
        assertNull(StreamingRequestParser.parse(CHAT, body, false));
        assertNull(ChatFields.locate(body));
        assertEquals("hi", InferenceRequest.parseTree(CHAT, body, false).work().prompt());
    }

    /**
     * The streaming pass against the tree, on bodies drawn from every shape each field can take
     * (right, wrong, null, repeated, nested, out of range) and a few broken documents: the same
     * request or the same problem, for every endpoint kind and with test hooks on and off.
     */
    @Test
    void theStreamingPassAndTheTreeAgreeOnEveryShape() {
        List<String> messages = List.of(
                "[{\"role\":\"user\",\"content\":\"hi\"}]",
                "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":null},{\"role\":\"user\"}]",
                "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"p\"},{\"text\":3},7]}]",
                "[{\"role\":\"user\",\"content\":\"x\",\"content\":\"y\"}]",
                "[{\"role\":\"user\",\"role\":5,\"content\":\"x\"}]",
                "[{\"role\":5,\"content\":\"x\"}]", "[{\"content\":\"x\"}]", "[{\"role\":\"u\",\"content\":{}}]",
                "[]", "[1]", "[null]", "{}", "\"text\"", "null", "7");
        List<String> prompts = List.of("\"p\"", "[\"a\",\"b\"]", "[\"a\",1]", "null", "3", "{\"p\":1}");
        List<String> integers = List.of("0", "7", "2147483647", "2147483648", "-1", "1.0", "1.5", "1e3",
                "99999999999999999999", "null", "\"7\"", "true", "[]");
        List<String> booleans = List.of("true", "false", "null", "\"true\"", "1", "{}");
        List<String> options = List.of("{\"include_usage\":true}", "{\"include_usage\":false,\"x\":[1]}",
                "{\"include_usage\":\"y\"}", "{\"include_usage\":true,\"include_usage\":false}", "null", "[]", "true");
        List<String> models = List.of("\"m\"", "null", "5", "{\"a\":\"b\"}", "[\"m\"]");
        Random random = new Random(20261203);
        List<String> bodies = new ArrayList<>(List.of("", "{", "[1]", "{\"messages\":[{\"role\":\"u\",\"content\":\"x\"}]} x",
                "{\"messages\":[{\"role\":\"u\",\"content\":\"x\"}]}{}", "{\"prompt\":\"p\"", "{\"prompt\":\"\\ud800\"}",
                // hostile: past Jackson's nesting limit inside a skipped field, a count past double's range
                "{\"prompt\":\"p\",\"messages\":[{\"role\":\"u\",\"content\":\"x\"}],\"deep\":" + "[".repeat(2000) + "]".repeat(2000) + "}",
                "{\"prompt\":\"p\",\"messages\":[{\"role\":\"u\",\"content\":\"x\"}],\"max_tokens\":1e400}"));
        for (int i = 0; i < 4000; i++) {
            List<String> fields = new ArrayList<>();
            maybe(random, fields, "messages", messages, 0.8);
            maybe(random, fields, "prompt", prompts, 0.5);
            maybe(random, fields, "max_tokens", integers, 0.3);
            maybe(random, fields, "simulate_ms", integers, 0.1);
            maybe(random, fields, "simulate_alloc_bytes", integers, 0.1);
            maybe(random, fields, "simulate_spin", booleans, 0.1);
            maybe(random, fields, "stream", booleans, 0.3);
            maybe(random, fields, "stream_options", options, 0.2);
            maybe(random, fields, "model", models, 0.5);
            maybe(random, fields, "temperature", List.of("0.5", "[{\"deep\":[[]]}]"), 0.2);
            // what the guard reads in the same pass: counts, a case variant of a spliced key, unknown fields
            maybe(random, fields, "n", integers, 0.2);
            maybe(random, fields, "best_of", integers, 0.1);
            maybe(random, fields, "max_completion_tokens", integers, 0.1);
            maybe(random, fields, "MODEL", models, 0.05);
            maybe(random, fields, "not_a_field", booleans, 0.1);
            if (!fields.isEmpty() && random.nextDouble() < 0.1) {
                fields.add(fields.get(random.nextInt(fields.size()))); // a repeated field
            }
            Collections.shuffle(fields, random);
            bodies.add("{" + String.join(",", fields) + "}");
        }
        int taken = 0;
        int located = 0;
        int guarded = 0;
        RequestGuard guard = new RequestGuard(io.nexuscore.config.RequestLimits.defaults());
        for (String body : bodies) {
            for (Endpoint endpoint : List.of(CHAT, COMPLETION, TASK)) {
                for (boolean hooks : List.of(true, false)) {
                    Object tree = outcome(() -> InferenceRequest.parseTree(endpoint, Buffer.buffer(body), hooks));
                    Object both = outcome(() -> InferenceRequest.parse(endpoint, Buffer.buffer(body), hooks));
                    // parse() also hands a chat request's body on for upstream tiers (compared apart, below),
                    // with where its rewritable fields stand when the streaming pass took it: exactly
                    // where an upstream tier's own search finds them.
                    Buffer forwarded = both instanceof InferenceRequest r ? r.work().chatBody() : null;
                    if (both instanceof InferenceRequest r && r.work().chatFields() != null) {
                        assertEquals(ChatFields.locate(Buffer.buffer(body)), r.work().chatFields(), body);
                        located++;
                    }
                    if (both instanceof InferenceRequest r) {
                        both = new InferenceRequest(r.work().withChatBody(null), r.stream(), r.streamUsage(), r.model());
                    }
                    assertEquals(tree, both, () -> endpoint.kind() + " hooks=" + hooks + " " + body);
                    boolean carries = both instanceof InferenceRequest r && endpoint.kind() == Endpoint.Kind.CHAT && !r.simulated();
                    assertEquals(carries ? Buffer.buffer(body) : null, forwarded, () -> endpoint.kind() + " " + body);
                    taken += StreamingRequestParser.parse(endpoint, Buffer.buffer(body), hooks) != null ? 1 : 0;
                    // The guard's demand read in the request's one pass, when that pass took it: what its own pass reads.
                    RequestGuard.Fields read = guard.fields(endpoint);
                    outcome(() -> InferenceRequest.parse(endpoint, Buffer.buffer(body), hooks, read));
                    if (read.demand() != null) {
                        assertEquals(outcome(() -> guard.inspect(endpoint, Buffer.buffer(body))), read.demand(),
                                () -> endpoint.kind() + " " + body);
                        guarded++;
                    }
                }
            }
        }
        assertTrue(taken > 500, "the streaming pass took only " + taken + " of the generated requests");
        assertTrue(located > 100, "fields located for only " + located + " chats");
        assertTrue(guarded > 500, "the guard's fields were read in the one pass for only " + guarded + " requests");
    }

    private static void maybe(Random random, List<String> fields, String name, List<String> values, double p) {
        if (random.nextDouble() < p) {
            fields.add("\"" + name + "\":" + values.get(random.nextInt(values.size())));
        }
    }
}
