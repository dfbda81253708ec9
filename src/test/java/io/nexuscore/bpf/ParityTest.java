package io.nexuscore.bpf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.classify.FourTuple;
import io.nexuscore.classify.KernelVerdict;
import io.nexuscore.classify.RequestHeadParser;
import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Scorer;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.config.ScoringConfig;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Parity: for thousands of generated request heads, the kernel's verdict (XDP, via
 * BPF_PROG_TEST_RUN) equals RequestHeadParser + Scorer in Java, with non-default weights and
 * thresholds so that the load-time settings are exercised too.
 */
class ParityTest {

    private static final int PORT = 8080;
    private static final int REQUESTS = 3000;
    private static final ScoringConfig SCORING = new ScoringConfig(new Thresholds(40, 90), new ScoreWeights(7, 31, 64, 3));

    private static KernelDataPath kernel;

    @BeforeAll
    static void load() {
        KernelTestSupport.requireKernel();
        kernel = KernelTestSupport.loadForTestRun(SCORING, Set.of(PORT));
    }

    @AfterAll
    static void unload() {
        KernelTestSupport.dispose(kernel);
    }

    @Test
    void kernelVerdictEqualsJavaScorer() {
        Random random = new Random(20261129);
        RequestGenerator generator = new RequestGenerator(random);
        Scorer scorer = new Scorer(SCORING.weights());
        int withVerdict = 0;
        for (int i = 0; i < REQUESTS; i++) {
            byte[] payload = generator.next();
            int srcPort = 10000 + i;
            kernel.program(KernelDataPath.XDP_PROGRAM)
                    .testRun(Packets.tcp(Packets.CLIENT, srcPort, PORT, Packets.TCP_ACK_PSH, payload), null, 1);

            FourTuple tuple = new FourTuple(SharedStructs.inet4(Packets.CLIENT), srcPort, SharedStructs.inet4(Packets.ROUTER), PORT);
            Optional<KernelVerdict> kernelVerdict = kernel.verdicts().lookup(tuple);
            Optional<KernelVerdict> javaVerdict = RequestHeadParser.parse(payload).map(head -> {
                int score = head.score(scorer);
                return new KernelVerdict(score, SCORING.thresholds().tierFor(score),
                        KernelVerdict.check(head.requestLineHash(), head.bodyLength()), head.estimate().blind());
            });
            assertEquals(javaVerdict, kernelVerdict, () -> "request #" + srcPort + ":\n"
                    + new String(payload, StandardCharsets.ISO_8859_1));
            if (kernelVerdict.isPresent()) {
                withVerdict++;
            }
        }
        // The generator must mostly produce scoreable heads, or the parity would prove little.
        assertTrue(withVerdict > REQUESTS * 3 / 4, "heads with a verdict: " + withVerdict);
    }
}
