package io.nexuscore.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.classify.Thresholds;
import io.nexuscore.classify.Tier;
import io.nexuscore.net.Ipv4Prefix;
import io.nexuscore.tenants.TenantPolicies.TenantPolicy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The replicated map compares encoded documents: equal documents must encode to equal text. */
class PolicyDocTest {

    @Test
    void decodeThenEncodeGivesTheSameTextWhateverTheInsertionOrder() {
        Map<String, TenantPolicy> tenants = new LinkedHashMap<>();
        tenants.put("zeta", new TenantPolicy(Ipv4Prefix.parse("10.2.0.0/16"), Tier.LARGE));
        tenants.put("acme", new TenantPolicy(Ipv4Prefix.parse("10.1.0.0/16"), Tier.SMALL));
        PolicyContent content = PolicyContent.of(new Thresholds(44, 120), tenants,
                Map.of("acme", List.of("sha256:" + "0f".repeat(32))), Optional.of(AdaptiveSettings.DEFAULT.withCeiling(44)));
        PolicyDoc doc = new PolicyDoc(12, "10.0.0.1:5701", PolicyDoc.CAUSE_API, 1_700_000_000_000L, 5L, content);

        String text = doc.encode();
        assertEquals(doc, PolicyDoc.decode(text));
        assertEquals(text, PolicyDoc.decode(text).encode());
        assertTrue(text.indexOf("\"acme\"") < text.indexOf("\"zeta\""), text);
    }

    @Test
    void lastWriterIsTheHigherVersionThenTheLaterWrite() {
        PolicyContent c = PolicyContent.of(Thresholds.DEFAULT, Map.of(), Map.of(), Optional.empty());
        PolicyDoc v2 = new PolicyDoc(2, "a", "api", 500, 0, c);
        PolicyDoc v3early = new PolicyDoc(3, "b", "api", 100, 0, c);
        PolicyDoc v3late = new PolicyDoc(3, "a", "api", 200, 0, c);
        assertTrue(v3early.newerThan(v2));
        assertTrue(v3late.newerThan(v3early));
    }

    @Test
    void aTenantMovedOntoAPrefixTakesItFromItsFormerOwner() {
        Ipv4Prefix p = Ipv4Prefix.parse("10.9.0.0/16");
        PolicyContent before = PolicyContent.of(Thresholds.DEFAULT, Map.of("old", new TenantPolicy(p, Tier.SMALL)),
                Map.of(), Optional.empty());
        PolicyContent moved = PolicyContent.of(Thresholds.DEFAULT, Map.of("new", new TenantPolicy(p, Tier.LARGE)),
                Map.of(), Optional.empty());
        PolicyContent fleet = PolicyContent.of(new Thresholds(30, 130), Map.of("old", new TenantPolicy(p, Tier.SMALL)),
                Map.of(), Optional.empty());
        PolicyContent merged = fleet.with(before.deltaTo(moved));
        assertEquals(Map.of("new", new TenantPolicy(p, Tier.LARGE)), merged.tenants());
        assertEquals(new Thresholds(30, 130), merged.thresholds());
    }
}
