package io.nexuscore.dataplane;

import io.nexuscore.http.ProblemException;
import io.nexuscore.http.Problems;
import io.vertx.core.http.HttpMethod;
import java.util.List;

/**
 * The data plane's routes. Few and fixed, so a switch is clearer (and cheaper per request) than a
 * router: 404 and 405 (with Allow) fall out of the same lookup.
 *
 * @param kind which API shape the request uses
 * @param task the task name (from /v1/tasks/{task}, or "chat" / "completion")
 */
public record Endpoint(Kind kind, String task) {

    public enum Kind {
        CHAT, COMPLETION, TASK, MODELS,
        /** OpenAI Responses API: translated to a chat for the tier, the answer rendered back (dataplane/apis). */
        RESPONSES,
        /** Anthropic Messages API: translated to a chat for the tier, the answer rendered back (dataplane/apis). */
        MESSAGES,
        /** Embeddings: not a generation, not scored; forwarded to the configured embeddings upstream. */
        EMBEDDINGS;

        /** The request is another API's shape, turned into a chat for the tier and its answer turned back. */
        public boolean translated() {
            return this == RESPONSES || this == MESSAGES;
        }
    }

    static final String TASKS_PREFIX = "/v1/tasks/";
    private static final List<String> POST_ONLY = List.of("POST");
    private static final List<String> GET_ONLY = List.of("GET", "HEAD");

    /**
     * Every operation {@link #match} serves, as "METHOD /path" with {@code {task}} for the task
     * segment. openapi.yaml lists exactly these (OpenApiContractTest) and EndpointTest checks each
     * one matches and that no other method does.
     */
    public static final List<String> OPERATIONS = List.of(
            "POST /v1/chat/completions", "POST /v1/completions", "POST " + TASKS_PREFIX + "{task}",
            "GET /v1/models", "HEAD /v1/models", "POST /v1/responses", "POST /v1/messages", "POST /v1/embeddings");

    private static final Endpoint CHAT = new Endpoint(Kind.CHAT, "chat");
    private static final Endpoint COMPLETION = new Endpoint(Kind.COMPLETION, "completion");
    private static final Endpoint MODELS = new Endpoint(Kind.MODELS, "models");
    private static final Endpoint RESPONSES = new Endpoint(Kind.RESPONSES, "responses");
    private static final Endpoint MESSAGES = new Endpoint(Kind.MESSAGES, "messages");
    private static final Endpoint EMBEDDINGS = new Endpoint(Kind.EMBEDDINGS, "embeddings");

    /** The endpoint for a method and path, or a 404/405 problem. */
    static Endpoint match(HttpMethod method, String path) {
        Endpoint endpoint = byPath(path);
        List<String> allowed = endpoint.kind == Kind.MODELS ? GET_ONLY : POST_ONLY;
        if (!allowed.contains(method.name())) {
            throw new ProblemException(Problems.methodNotAllowed(method.name(), path, allowed));
        }
        return endpoint;
    }

    private static Endpoint byPath(String path) {
        switch (path) {
            case "/v1/chat/completions":
                return CHAT;
            case "/v1/completions":
                return COMPLETION;
            case "/v1/models":
                return MODELS;
            case "/v1/responses":
                return RESPONSES;
            case "/v1/messages":
                return MESSAGES;
            case "/v1/embeddings":
                return EMBEDDINGS;
            default:
                if (path.startsWith(TASKS_PREFIX)) {
                    String task = path.substring(TASKS_PREFIX.length());
                    if (isTaskName(task)) {
                        return new Endpoint(Kind.TASK, task);
                    }
                }
                throw new ProblemException(Problems.notFound(path));
        }
    }

    /** A task name is one non-empty path segment of URL-safe characters. */
    private static boolean isTaskName(String task) {
        if (task.isEmpty() || task.length() > 64) {
            return false;
        }
        for (int i = 0; i < task.length(); i++) {
            char c = task.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '_' || c == '.';
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
