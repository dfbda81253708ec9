package io.nexuscore.dataplane;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nexuscore.http.ProblemException;
import io.vertx.core.http.HttpMethod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EndpointTest {

    @Test
    void routesTheOpenAiPathsAndTasks() {
        assertEquals(Endpoint.Kind.CHAT, Endpoint.match(HttpMethod.POST, "/v1/chat/completions").kind());
        assertEquals(Endpoint.Kind.COMPLETION, Endpoint.match(HttpMethod.POST, "/v1/completions").kind());
        assertEquals(Endpoint.Kind.MODELS, Endpoint.match(HttpMethod.GET, "/v1/models").kind());
        Endpoint task = Endpoint.match(HttpMethod.POST, "/v1/tasks/refactor");
        assertEquals(Endpoint.Kind.TASK, task.kind());
        assertEquals("refactor", task.task());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/", "/v1", "/v1/tasks/", "/v1/tasks/a/b", "/v1/tasks/%2e%2e", "/v1/chat/completions/"})
    void unknownPathsAre404(String path) {
        assertEquals(404, assertThrows(ProblemException.class, () -> Endpoint.match(HttpMethod.POST, path))
                .problem().status());
    }

    /** The published list is what match serves: each listed operation matches, no other method on its path does. */
    @Test
    void theOperationsListIsExactlyWhatMatchServes() {
        for (String operation : Endpoint.OPERATIONS) {
            String[] parts = operation.split(" ");
            String path = parts[1].replace("{task}", "summarize");
            Endpoint.match(HttpMethod.valueOf(parts[0]), path);
            for (HttpMethod other : HttpMethod.values()) {
                boolean listed = Endpoint.OPERATIONS.contains(other.name() + " " + parts[1]);
                if (!listed) {
                    assertEquals(405, assertThrows(ProblemException.class, () -> Endpoint.match(other, path),
                            other + " " + path).problem().status());
                }
            }
        }
    }

    @Test
    void wrongMethodIs405NamingTheAllowedOnes() {
        ProblemException e = assertThrows(ProblemException.class,
                () -> Endpoint.match(HttpMethod.DELETE, "/v1/tasks/summarize"));
        assertEquals(405, e.problem().status());
        assertEquals("POST", e.problem().headers().get("Allow"));
    }
}
