package io.nexuscore.bench;

import io.nexuscore.classify.PromptEstimate;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.misroute.Misroute;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The accuracy side of the classifier's cost curve, offline: for each body window (the body bytes
 * the prompt scan may read; the rest is extrapolated from Content-Length at the rate seen) the
 * strict, banded and gross misroute rates of the Java twin over the corpora, against the same truth
 * as {@link RoutingEval} (cl100k_base count plus the keyword bonus). The bodies are the chat
 * requests RoutingEval sends; the kernel scores the same bytes (ParityTest), so these are the
 * router's figures for a one-message chat at unit gain. The cost side is bench/kernel-bench.sh.
 *
 * <pre>java -cp ... io.nexuscore.bench.SampleCurve --corpora NAME=FILE[,...] [--windows 64,128,...] [--band-percent 20]</pre>
 */
public final class SampleCurve {

    private static final byte[] REQUEST_LINE = "POST /v1/chat/completions HTTP/1.1".getBytes(StandardCharsets.ISO_8859_1);

    private static boolean SDK_ORDER;

    private SampleCurve() {
    }

    public static void main(String[] args) throws Exception {
        Args a = Args.parse(args);
        Map<String, List<String>> corpora = RoutingEval.corpora(a.value("corpora", ""), a.intValue("limit", 0));
        double band = a.intValue("band-percent", 20) / 100.0;
        SDK_ORDER = "sdk".equals(a.value("order", "eval"));
        Scorer scorer = new Scorer(ScoreWeights.DEFAULT);
        Thresholds thresholds = Thresholds.DEFAULT;
        String[] windows = a.value("windows", "64,96,128,192,256,384,512,768,1024").split(",");

        System.out.printf(Locale.ROOT, "%-24s", "body window (bytes)");
        for (String w : windows) {
            System.out.printf(Locale.ROOT, " %17s", w);
        }
        System.out.printf(Locale.ROOT, "%n%-24s", "corpus (prompts)");
        for (int i = 0; i < windows.length; i++) {
            System.out.printf(Locale.ROOT, " %17s", "strict/band/gross");
        }
        System.out.println();
        long[][] all = new long[windows.length][4];
        for (Map.Entry<String, List<String>> corpus : corpora.entrySet()) {
            System.out.printf(Locale.ROOT, "%-24s", corpus.getKey() + " (" + corpus.getValue().size() + ")");
            for (int w = 0; w < windows.length; w++) {
                long[] counts = evaluate(corpus.getValue(), Integer.parseInt(windows[w].trim()), scorer, thresholds, band);
                for (int k = 0; k < 4; k++) {
                    all[w][k] += counts[k];
                }
                System.out.printf(Locale.ROOT, " %17s", figures(counts));
            }
            System.out.println();
        }
        System.out.printf(Locale.ROOT, "%-24s", "all");
        for (long[] counts : all) {
            System.out.printf(Locale.ROOT, " %17s", figures(counts));
        }
        System.out.println();
    }

    /** prompts, strict, banded, gross. */
    private static long[] evaluate(List<String> prompts, int window, Scorer scorer, Thresholds thresholds, double band) {
        long[] counts = new long[4];
        for (String prompt : prompts) {
            JsonArray messages = new JsonArray().add(new JsonObject().put("role", "user").put("content", prompt));
            // RoutingEval's order (model first), or the official SDKs' (messages first: ~40 bytes follow the prompt)
            JsonObject request = SDK_ORDER
                    ? new JsonObject().put("messages", messages).put("model", "gpt-4o-mini").put("max_tokens", 16)
                    : new JsonObject().put("model", "nexus").put("max_tokens", 16).put("messages", messages);
            byte[] body = request.encode().getBytes(StandardCharsets.UTF_8);
            PromptEstimate estimate = PromptEstimate.scan(body, 0, body.length, body.length, window);
            Tier assigned = thresholds.tierFor(scorer.score(REQUEST_LINE, estimate));
            int trueScore = RoutingEval.trueScore(prompt, RoutingEval.CL100K.countTokensOrdinary(prompt), ScoreWeights.DEFAULT);
            Misroute m = Misroute.judge(assigned, thresholds.tierFor(trueScore), trueScore, thresholds, band);
            counts[0]++;
            counts[1] += m.strict() ? 1 : 0;
            counts[2] += m.banded() ? 1 : 0;
            counts[3] += m.gross() ? 1 : 0;
        }
        return counts;
    }

    private static String figures(long[] counts) {
        return String.format(Locale.ROOT, "%.1f/%.1f/%.1f", 100.0 * counts[1] / counts[0], 100.0 * counts[2] / counts[0],
                100.0 * counts[3] / counts[0]);
    }
}
