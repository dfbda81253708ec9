package io.nexuscore.bench;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.Misroute;
import io.nexuscore.tiers.AssessmentPolicy;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The routing evaluation behind bench/routing-eval.sh: sends every prompt of the given corpora
 * through a running router as an OpenAI chat request (one user message) and judges the router's
 * assignment (X-NX-Assigned-Tier) against an independent truth: the prompt's cl100k_base count
 * from jtokkit plus the scorer's keyword bonus (re-implemented here), against the thresholds in force
 * (GET /thresholds). Prints per corpus the strict, banded and gross misroute rates, the confusion
 * matrix, and how often the router's observed tier (X-NX-Tier, the guest's verdict) and token count
 * (X-NX-Tokens) equal that truth, and how many requests the kernel verdict decided (X-NX-Route-Source).
 * <p>
 * The clients: {@code one-write} (default) writes each request's head and body with one write() on a
 * fresh connection, as curl and wrk do, so the body shares the head's segment and the kernel
 * estimate decides; {@code jdk} is java.net.http.HttpClient, which writes the body after the head
 * (its own segment), so the kernel verdict is blind and the data plane's Java twin decides.
 * {@code openai-python}, {@code urllib}, {@code requests} and {@code go} are processes of their own
 * ({@link ScriptClient}).
 *
 * <pre>
 * java -cp ... io.nexuscore.bench.RoutingEval --corpora NAME=FILE.jsonl[,NAME=FILE.jsonl...]
 *     [--url http://127.0.0.1:8080] [--control-url http://127.0.0.1:8081] [--device lo] [--band-percent 20]
 *     [--concurrency 4] [--limit 0] [--client one-write|jdk|openai-python|urllib|requests|go] [--tools 0] [--content string|parts] [--system TEXT] [--non-ascii raw|escaped]
 *     [--turns 1] [--api chat|completions|responses|messages]
 * </pre>
 * {@code --api responses} / {@code --api messages} send each conversation as an OpenAI Responses
 * request (instructions, input) or an Anthropic Messages request (system, messages); the truth is the
 * same text, which the router translates to the same chat.
 * {@code --api completions} sends each prompt to the legacy {@code /v1/completions} as its {@code prompt}
 * string (with {@code --turns N}, the conversation's contents joined by line breaks); the other
 * shape options apply to chat requests only.
 * {@code --turns N} sends each prompt as the last message of an N-message conversation: the N-1 prompts
 * before it in the same corpus (wrapping around) come first, alternately as user and assistant
 * messages, as a multi-turn chat client resends its history. The truth counts every message's
 * content joined by line breaks, as the guests join messages.
 * {@code --non-ascii escaped} writes every non-ASCII character as a backslash-u escape (UTF-16 units,
 * pairs for emoji), as Python's json.dumps does by default.
 * {@code --system TEXT} puts a system message with TEXT before each prompt, as most chat clients do;
 * the truth is then the count of both contents joined by a line break, as the guests join messages.
 * {@code --content parts} writes each message's content as a list of parts ({@code [{"type":"text",
 * "text":...}]}, as vision-capable clients and the Responses-style SDKs do) instead of a string.
 * {@code --tools N} sends every prompt as a function-calling request: N tool definitions (of
 * {@link #TOOL_NAMES}, the OpenAI shape: name, description, JSON-schema parameters) after the
 * messages, as the OpenAI SDKs order them. The truth is still the prompt's own count: the guests,
 * and therefore the misroute figures, count the messages' contents only.
 * Each corpus line is a JSON object with a string {@code prompt}. Loopback only. Exit code 0 when
 * every prompt was answered, 1 otherwise.
 */
public final class RoutingEval {

    static final Encoding CL100K = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
    static final String[] KEYWORDS = {"sum", "ref", "gen", "ana"};

    /** The tools {@code --tools} sends, in order: the kinds a function-calling assistant declares. */
    static final String[] TOOL_NAMES = {"get_weather", "search_web", "run_sql_query", "send_email",
        "create_calendar_event", "read_file", "calculate", "translate_text"};

    private RoutingEval() {
    }

    /** {@code count} tool definitions (at most {@link #TOOL_NAMES}'s length). */
    static JsonArray tools(int count) {
        JsonArray tools = new JsonArray();
        for (int i = 0; i < Math.min(count, TOOL_NAMES.length); i++) {
            String name = TOOL_NAMES[i];
            tools.add(new JsonObject().put("type", "function").put("function", new JsonObject()
                    .put("name", name)
                    .put("description", "Call " + name.replace('_', ' ') + " for the user when the question needs it;"
                            + " returns a JSON object with the result, or an error message explaining what went wrong.")
                    .put("parameters", new JsonObject().put("type", "object")
                            .put("properties", new JsonObject()
                                    .put("input", new JsonObject().put("type", "string")
                                            .put("description", "What to " + name.replace('_', ' ') + " with, in plain words"))
                                    .put("limit", new JsonObject().put("type", "integer").put("minimum", 1)
                                            .put("maximum", 100).put("description", "How many results at most")))
                            .put("required", new JsonArray().add("input")))));
        }
        return tools;
    }

    /** One corpus's figures. */
    static final class Tally {
        final String name;
        final long[][] confusion = new long[3][3];
        final AtomicLong errors = new AtomicLong();
        long prompts;
        long strict;
        long banded;
        long gross;
        long observedAgrees;
        long tokensAgree;
        long routerStrict;
        long kernelDecided;

        Tally(String name) {
            this.name = name;
        }

        synchronized void add(Tier assigned, Tier truth, int trueScore, Tier observed, int routerTokens, int trueTokens,
                              String routerMisroute, String routeSource, Thresholds thresholds, double band) {
            prompts++;
            kernelDecided += "kernel".equals(routeSource) ? 1 : 0;
            confusion[assigned.wire()][truth.wire()]++;
            Misroute m = Misroute.judge(assigned, truth, trueScore, thresholds, band);
            strict += m.strict() ? 1 : 0;
            banded += m.banded() ? 1 : 0;
            gross += m.gross() ? 1 : 0;
            observedAgrees += observed == truth ? 1 : 0;
            tokensAgree += routerTokens == trueTokens ? 1 : 0;
            routerStrict += routerMisroute.contains("strict") ? 1 : 0;
        }
    }

    /** {@code json} with every non-ASCII char as a backslash-u escape (they only occur inside strings). */
    static String escapeNonAscii(String json) {
        StringBuilder out = new StringBuilder(json.length() + 64);
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (c < 0x80) {
                out.append(c);
            } else {
                out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
            }
        }
        return out.toString();
    }

    /** The truth for one prompt: its cl100k count plus the keyword bonus of its first bytes (task "chat" has none). */
    static int trueScore(String prompt, int tokens, ScoreWeights w) {
        byte[] utf8 = prompt.getBytes(StandardCharsets.UTF_8);
        int scanned = Math.min(utf8.length, AssessmentPolicy.KEYWORD_SCAN_BYTES);
        String head = new String(utf8, 0, scanned, StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT);
        int[] weights = {w.sum(), w.ref(), w.gen(), w.ana()};
        long score = tokens;
        for (int k = 0; k < KEYWORDS.length; k++) {
            if (head.contains(KEYWORDS[k])) {
                score += weights[k];
            }
        }
        return (int) Math.min(Scorer.MAX_SCORE, score);
    }

    public static void main(String[] args) throws Exception {
        Args a = Args.parse(args);
        URI url = loopback(a.value("url", "http://127.0.0.1:8080"));
        URI control = loopback(a.value("control-url", "http://127.0.0.1:8081"));
        double band = a.intValue("band-percent", 20) / 100.0;
        int concurrency = a.intValue("concurrency", 4);
        int limit = a.intValue("limit", 0);
        String clientName = a.value("client", "one-write");
        boolean oneWrite = clientName.equals("one-write");
        JsonArray tools = tools(a.intValue("tools", 0));
        boolean parts = "parts".equals(a.value("content", "string"));
        String system = a.value("system", "");
        boolean escape = "escaped".equals(a.value("non-ascii", "raw"));
        int turns = Math.max(1, a.intValue("turns", 1));
        String api = a.value("api", "chat");
        if (!List.of("chat", "completions", "responses", "messages").contains(api)) {
            throw new IllegalArgumentException("--api must be chat, completions, responses or messages, got " + api);
        }
        boolean completions = "completions".equals(api);
        if (!a.value("tools", "0").equals("0") && !"chat".equals(api)) {
            throw new IllegalArgumentException("--tools applies to --api chat only (the router refuses tools on " + api + ")");
        }
        Map<String, List<String>> corpora = corpora(a.value("corpora", ""), limit);
        ScoreWeights weights = ScoreWeights.DEFAULT;

        // HTTP/1.1 as OpenAI clients speak it (the JDK client would otherwise try an h2c upgrade).
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        Thresholds before = thresholds(http, control);
        System.out.printf(Locale.ROOT, "routing-eval: %s, thresholds nano_max %d small_max %d, band %.0f %%,"
                        + " truth = jtokkit cl100k_base + keyword bonus (first %d bytes)%n",
                url, before.nanoMax(), before.smallMax(), band * 100, AssessmentPolicy.KEYWORD_SCAN_BYTES);
        Poster poster = oneWrite ? OneWriteClient::post : clientName.equals("jdk") ? jdkPost(http) : new ScriptClient(clientName, url);
        System.out.println("client: " + (oneWrite ? "one-write (head and body in one segment)"
                : clientName.equals("jdk") ? "jdk HttpClient (body in its own segment)"
                : ScriptClient.describe(clientName))
                + (tools.isEmpty() ? "" : ", " + tools.size() + " tool definitions after the messages ("
                + tools.encode().length() + " bytes)") + (parts ? ", content as a list of text parts" : "")
                + (system.isEmpty() ? "" : ", system message \"" + system + "\" first")
                + (escape ? ", non-ASCII written as \\u escapes" : "")
                + (turns == 1 ? "" : ", " + turns + "-message conversations (earlier prompts of the corpus as history)")
                + (completions ? ", legacy /v1/completions with the prompt string" : "")
                + ("responses".equals(api) ? ", OpenAI Responses API (/v1/responses: instructions and input)" : "")
                + ("messages".equals(api) ? ", Anthropic Messages API (/v1/messages: system and messages)" : ""));

        // The XDP program's per-packet cost over the whole evaluation (the traffic of a real client).
        Optional<XdpCostWindow.Reading> kernelBefore = XdpCostWindow.read(http, control, a.value("device", "lo"));
        List<Tally> tallies = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(concurrency);
        try {
            for (Map.Entry<String, List<String>> corpus : corpora.entrySet()) {
                Tally tally = new Tally(corpus.getKey());
                tallies.add(tally);
                List<Future<?>> sent = new ArrayList<>();
                List<String> prompts = corpus.getValue();
                for (int i = 0; i < prompts.size(); i++) {
                    List<String> conversation = conversation(prompts, i, turns);
                    sent.add(pool.submit(() -> evaluate(poster, url,
                            conversation, api, tools, parts, system, escape, before, weights, band, tally)));
                }
                for (Future<?> f : sent) {
                    f.get();
                }
            }
        } finally {
            pool.shutdown();
            if (poster instanceof ScriptClient script) {
                pool.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
                script.close();
            }
        }
        Thresholds after = thresholds(http, control);
        if (!after.equals(before)) {
            System.out.printf(Locale.ROOT, "WARNING: the thresholds moved during the run (%d/%d -> %d/%d; the adaptive"
                    + " loop?): figures are judged against the first%n", before.nanoMax(), before.smallMax(),
                    after.nanoMax(), after.smallMax());
        }
        Optional<XdpCostWindow.Reading> kernelAfter = XdpCostWindow.read(http, control, a.value("device", "lo"));
        print(tallies);
        if (kernelBefore.isPresent() && kernelAfter.isPresent()) {
            System.out.println();
            System.out.println(XdpCostWindow.describe(kernelBefore.get(), kernelAfter.get()));
        }
        System.exit(tallies.stream().allMatch(t -> t.errors.get() == 0) ? 0 : 1);
    }

    /** Posts a JSON body to a path; answers the status and the response headers (names lower-cased). */
    @FunctionalInterface
    interface Poster {
        OneWriteClient.Answer post(URI url, String path, String json) throws IOException, InterruptedException;
    }

    private static Poster jdkPost(HttpClient http) {
        return (url, path, json) -> {
            HttpRequest request = HttpRequest.newBuilder(url.resolve(path))
                    .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json)).build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            Map<String, String> headers = new java.util.HashMap<>();
            response.headers().map().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), v.get(0)));
            return new OneWriteClient.Answer(response.statusCode(), headers);
        };
    }

    /** Prompt {@code i} with the {@code turns - 1} prompts before it (wrapping around), oldest first. */
    static List<String> conversation(List<String> prompts, int i, int turns) {
        List<String> conversation = new ArrayList<>();
        for (int back = Math.min(turns, prompts.size()) - 1; back >= 0; back--) {
            conversation.add(prompts.get(Math.floorMod(i - back, prompts.size())));
        }
        return conversation;
    }

    /** @param conversation the messages' contents, oldest first; the last is the user's prompt */
    private static void evaluate(Poster poster, URI url, List<String> conversation, String api, JsonArray tools,
                                 boolean parts, String system, boolean escape, Thresholds thresholds, ScoreWeights weights,
                                 double band, Tally tally) {
        String prompt = conversation.get(conversation.size() - 1);
        boolean completions = "completions".equals(api);
        // The Responses and Messages APIs carry the system text in a field of its own.
        boolean systemField = "responses".equals(api) || "messages".equals(api);
        List<JsonObject> messages = new ArrayList<>();
        if (!system.isEmpty() && !systemField) {
            messages.add(new JsonObject().put("role", "system").put("content", system));
        }
        for (int m = 0; m < conversation.size(); m++) {
            String text = conversation.get(m);
            String partType = "responses".equals(api) ? "input_text" : "text";
            Object content = parts ? new JsonArray().add(new JsonObject().put("type", partType).put("text", text)) : text;
            // Counted back from the last message, which is the user's.
            String role = (conversation.size() - 1 - m) % 2 == 0 ? "user" : "assistant";
            messages.add(new JsonObject().put("role", role).put("content", content));
        }
        String contents = String.join("\n", conversation);
        String joined = system.isEmpty() ? contents : system + "\n" + contents; // what the guests count
        JsonObject request = new JsonObject().put("model", "nexus");
        String path;
        switch (api) {
            case "completions" -> {
                request.put("max_tokens", 16).put("prompt", joined);
                path = "/v1/completions";
            }
            case "responses" -> {
                if (!system.isEmpty()) {
                    request.put("instructions", system);
                }
                // One plain turn is a string input, as most Responses clients send it.
                request.put("input", messages.size() == 1 && !parts ? (Object) prompt : new JsonArray(messages))
                        .put("max_output_tokens", 16);
                path = "/v1/responses";
            }
            case "messages" -> {
                request.put("max_tokens", 16);
                if (!system.isEmpty()) {
                    request.put("system", system);
                }
                request.put("messages", messages);
                path = "/v1/messages";
            }
            default -> {
                request.put("max_tokens", 16).put("messages", messages);
                path = "/v1/chat/completions";
            }
        }
        if (!tools.isEmpty() && !completions) {
            request.put("tools", tools);
        }
        String body = escape ? escapeNonAscii(request.encode()) : request.encode();
        try {
            OneWriteClient.Answer response = poster.post(url, path, body);
            String assigned = response.header("x-nx-assigned-tier");
            String observed = response.header("x-nx-tier");
            if (response.status() != 200 || assigned == null || observed == null) {
                tally.errors.incrementAndGet();
                System.err.println("HTTP " + response.status() + " (assigned " + assigned + ", observed " + observed
                        + ") for: " + abbreviate(prompt));
                return;
            }
            int tokens = CL100K.countTokensOrdinary(joined);
            int score = trueScore(joined, tokens, weights);
            String routerTokens = response.header("x-nx-tokens");
            tally.add(Tier.fromLabel(assigned), thresholds.tierFor(score), score, Tier.fromLabel(observed),
                    routerTokens == null ? -1 : Integer.parseInt(routerTokens), tokens,
                    java.util.Objects.requireNonNullElse(response.header("x-nx-misroute"), ""),
                    response.header("x-nx-route-source"), thresholds, band);
        } catch (IOException e) {
            tally.errors.incrementAndGet();
            System.err.println(e + " for: " + abbreviate(prompt));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            tally.errors.incrementAndGet();
        }
    }

    private static void print(List<Tally> tallies) {
        System.out.printf(Locale.ROOT, "%-22s %7s %6s %8s %8s %8s %15s %13s %14s %15s%n", "corpus", "prompts", "errors",
                "strict", "banded", "gross", "observed=truth", "tokens=truth", "router strict", "kernel decided");
        for (Tally t : tallies) {
            System.out.printf(Locale.ROOT, "%-22s %7d %6d %7.2f%% %7.2f%% %7.2f%% %14.2f%% %12.2f%% %13.2f%% %14.2f%%%n",
                    t.name, t.prompts, t.errors.get(), pct(t.strict, t.prompts), pct(t.banded, t.prompts),
                    pct(t.gross, t.prompts), pct(t.observedAgrees, t.prompts), pct(t.tokensAgree, t.prompts),
                    pct(t.routerStrict, t.prompts), pct(t.kernelDecided, t.prompts));
        }
        for (Tally t : tallies) {
            System.out.printf(Locale.ROOT, "%n%s: confusion (rows: assigned tier, columns: true tier)%n", t.name);
            System.out.printf(Locale.ROOT, "  %-8s %7s %7s %7s%n", "", "nano", "small", "large");
            for (Tier assigned : Tier.values()) {
                long[] row = t.confusion[assigned.wire()];
                System.out.printf(Locale.ROOT, "  %-8s %7d %7d %7d%n", assigned.label(), row[0], row[1], row[2]);
            }
        }
    }

    private static double pct(long n, long of) {
        return of == 0 ? 0.0 : 100.0 * n / of;
    }

    private static Thresholds thresholds(HttpClient http, URI control) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(control.resolve("/thresholds"))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + control.resolve("/thresholds") + ": HTTP " + r.statusCode() + " " + r.body());
        }
        JsonObject json = new JsonObject(r.body());
        return new Thresholds(json.getInteger("nano_max"), json.getInteger("small_max"));
    }

    /** name=file pairs, comma-separated, in order; each file's {@code prompt} strings (the first {@code limit} when > 0). */
    static Map<String, List<String>> corpora(String spec, int limit) throws IOException {
        if (spec.isBlank()) {
            throw new IllegalArgumentException("--corpora NAME=FILE.jsonl[,NAME=FILE.jsonl...] is required");
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String pair : spec.split(",")) {
            String[] nf = pair.split("=", 2);
            if (nf.length != 2) {
                throw new IllegalArgumentException("--corpora: expected NAME=FILE, got '" + pair + "'");
            }
            List<String> prompts = new ArrayList<>();
            int line = 0;
            for (String l : Files.readAllLines(Path.of(nf[1]), StandardCharsets.UTF_8)) {
                line++;
                if (l.isBlank()) {
                    continue;
                }
                Object prompt = new JsonObject(l).getValue("prompt");
                if (!(prompt instanceof String s)) {
                    throw new IllegalArgumentException(nf[1] + ":" + line + ": no string \"prompt\"");
                }
                prompts.add(s);
                if (limit > 0 && prompts.size() >= limit) {
                    break;
                }
            }
            out.put(nf[0], prompts);
        }
        return out;
    }

    private static URI loopback(String spec) {
        URI uri = URI.create(spec);
        String host = uri.getHost();
        if (!("127.0.0.1".equals(host) || "localhost".equals(host) || "[::1]".equals(host) || "::1".equals(host))) {
            throw new IllegalArgumentException("the evaluation runs over loopback only, got " + spec);
        }
        return uri;
    }

    private static String abbreviate(String prompt) {
        String one = prompt.replaceAll("\\s+", " ");
        return one.length() <= 80 ? one : one.substring(0, 77) + "...";
    }
}
