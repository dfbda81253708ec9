package io.nexuscore.control;

import io.nexuscore.adapt.AdaptiveJson;
import io.nexuscore.kernel.maps.AdaptiveSettings;
import io.nexuscore.kernel.maps.NotInKernelMode;
import io.nexuscore.classify.ThresholdState;
import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code /thresholds} and {@code /adaptive}: the tier boundaries and the loop that moves nano_max,
 * read and patched (RFC 7396 merge patches). A change made here is announced to the fleet.
 */
final class ThresholdRoutes {

    static final Set<String> PATCH_TYPES = Set.of("application/merge-patch+json", "application/json");

    private final ThresholdKeeper keeper;
    private final ControlPorts ports;
    private final ControlReplies replies;

    ThresholdRoutes(ThresholdKeeper keeper, ControlPorts ports, ControlReplies replies) {
        this.keeper = keeper;
        this.ports = ports;
        this.replies = replies;
    }

    void getThresholds(RoutingContext ctx) {
        replies.blocking(ctx, keeper::refresh).onSuccess(t -> ControlReplies.json(ctx, 200, ThresholdKeeper.toJson(t)));
    }

    void patchThresholds(RoutingContext ctx) {
        JsonObject patch = JsonBodies.object(ctx, false, PATCH_TYPES).orElseThrow();
        JsonBodies.allowOnly(patch, Set.of("nano_max", "small_max"));
        ThresholdKeeper.Patch p = new ThresholdKeeper.Patch(
                JsonBodies.score(patch, "nano_max"), JsonBodies.score(patch, "small_max"));
        replies.blocking(ctx, () -> {
            try {
                ThresholdState written = keeper.apply(p);
                if (p.nanoMax().isPresent()) {
                    raiseBackCeilingFollows(p.nanoMax().getAsInt());
                }
                return written;
            } catch (ThresholdKeeper.OrderViolation e) {
                throw new ProblemException(ProblemType.INVALID_VALUE, e.getMessage(), e.field);
            }
        }).onSuccess(t -> {
            ports.fleet().changedHere();
            ControlReplies.json(ctx, 200, ThresholdKeeper.toJson(t));
        });
    }

    /**
     * The adaptive loop raises nano_max back up to its ceiling, the operator's value: after a PATCH of
     * nano_max that is the new value (a loop configured to only lower, ceiling 0, stays so).
     */
    private void raiseBackCeilingFollows(int nanoMax) {
        try {
            AdaptiveSettings settings = ports.adaptive().status().settings();
            if (settings.ceiling() != 0 && settings.ceiling() != nanoMax) {
                ports.adaptive().configure(settings.withCeiling(nanoMax));
            }
        } catch (NotInKernelMode e) {
            // user space: no loop, no ceiling
        }
    }

    void getAdaptive(RoutingContext ctx) {
        replies.blocking(ctx, () -> inKernelMode(ports.adaptive()::status))
                .onSuccess(s -> ControlReplies.json(ctx, 200, AdaptiveJson.toJson(s)));
    }

    void patchAdaptive(RoutingContext ctx) {
        JsonObject patch = JsonBodies.object(ctx, false, PATCH_TYPES).orElseThrow();
        AdaptiveJson.Patch p = AdaptiveJson.parse(patch);
        replies.blocking(ctx, () -> inKernelMode(() -> {
            ports.adaptive().configure(p.mergeInto(ports.adaptive().status().settings()));
            return ports.adaptive().status();
        })).onSuccess(s -> {
            ports.fleet().changedHere();
            ControlReplies.json(ctx, 200, AdaptiveJson.toJson(s));
        });
    }

    private static <T> T inKernelMode(Callable<T> work) throws Exception {
        try {
            return work.call();
        } catch (NotInKernelMode e) {
            throw new ProblemException(ProblemType.NOT_IN_KERNEL_MODE, e.getMessage());
        }
    }
}
