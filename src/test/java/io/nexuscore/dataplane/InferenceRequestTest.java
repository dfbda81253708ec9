package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.http.ProblemException;
import io.nexuscore.tiers.TierRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
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

    @ParameterizedTest
    @ValueSource(strings = {
        "{}",
        "{\"messages\":[]}",
        "{\"messages\":[{\"content\":\"no role\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":5}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":1.5}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":\"yes\"}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"simulate_ms\":-1}"
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
}
