package io.nexuscore.config;

import io.nexuscore.classify.ScoreWeights;
import io.nexuscore.classify.Thresholds;
import java.util.Set;

/** Initial thresholds (the live ones sit in the kernel map) and keyword weights. */
public record ScoringConfig(Thresholds thresholds, ScoreWeights weights) {

    static ScoringConfig from(Json json) {
        json.allowOnly(Set.of("nanoMax", "smallMax", "weights"));
        Json w = json.section("weights");
        w.allowOnly(Set.of("sum", "ref", "gen", "ana"));
        ScoreWeights d = ScoreWeights.DEFAULT;
        try {
            return new ScoringConfig(
                    new Thresholds(
                            json.integer("nanoMax", Thresholds.DEFAULT.nanoMax(), 0, 255),
                            json.integer("smallMax", Thresholds.DEFAULT.smallMax(), 0, 255)),
                    new ScoreWeights(
                            w.integer("sum", d.sum(), 0, 255),
                            w.integer("ref", d.ref(), 0, 255),
                            w.integer("gen", d.gen(), 0, 255),
                            w.integer("ana", d.ana(), 0, 255)));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("scoring: " + e.getMessage(), e);
        }
    }
}
