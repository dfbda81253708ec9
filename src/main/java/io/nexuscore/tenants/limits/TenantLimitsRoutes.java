package io.nexuscore.tenants.limits;

import io.nexuscore.http.JsonBodies;
import io.nexuscore.http.ProblemException;
import io.nexuscore.http.ProblemType;
import io.nexuscore.tenants.TenantId;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * The control plane's tenant-limit routes: {@code PUT/GET/DELETE /tenants/{id}/limits} and
 * {@code GET /tenants/{id}/usage}. Writes save the store (worker threads) and nudge the fleet; every
 * route needs the control token (usage names what a tenant does).
 */
public final class TenantLimitsRoutes {

    private static final Set<String> JSON_TYPES = Set.of("application/json");

    private final LimitGate gate;
    private final Runnable changedHere;

    private TenantLimitsRoutes(LimitGate gate, Runnable changedHere) {
        this.gate = gate;
        this.changedHere = changedHere;
    }

    /**
     * Adds the routes to {@code router}.
     *
     * @param token       the control plane's bearer-token check
     * @param body        its body handler (size-limited)
     * @param changedHere tells the fleet a limit changed here (sync now)
     */
    public static void mount(Router router, Handler<RoutingContext> token, Handler<RoutingContext> body, LimitGate gate,
                             Runnable changedHere) {
        TenantLimitsRoutes routes = new TenantLimitsRoutes(gate, changedHere);
        router.get("/tenants/:id/limits").handler(token).handler(routes::get);
        router.put("/tenants/:id/limits").handler(body).handler(token).handler(routes::put);
        router.delete("/tenants/:id/limits").handler(token).handler(routes::delete);
        router.get("/tenants/:id/usage").handler(token).handler(routes::usage);
    }

    /** The limits in force for the tenant: its own or the default, and this router's share of them. */
    private void get(RoutingContext ctx) {
        String id = tenantId(ctx);
        json(ctx, 200, view(id));
    }

    private JsonObject view(String id) {
        boolean own = gate.store().of(id).isPresent();
        TenantLimits limits = gate.limitsOf(id);
        int members = gate.share().members();
        return new JsonObject().put("id", id).put("source", own ? "tenant" : "default")
                .put("limits", limits.toJson()).put("fleet_members", members)
                .put("enforced_here", limits.share(members).toJson());
    }

    private void put(RoutingContext ctx) {
        String id = tenantId(ctx);
        JsonObject json = JsonBodies.object(ctx, false, JSON_TYPES).orElseThrow();
        TenantLimits limits;
        try {
            limits = TenantLimits.fromJson(json);
        } catch (TenantLimits.Invalid e) {
            throw new ProblemException(ProblemType.INVALID_REQUEST, e.getMessage(), e.field);
        }
        blocking(ctx, () -> gate.store().put(id, limits)).onSuccess(created -> {
            changedHere.run();
            json(ctx, 200, view(id));
        });
    }

    private void delete(RoutingContext ctx) {
        String id = tenantId(ctx);
        blocking(ctx, () -> gate.store().delete(id)).onSuccess(existed -> {
            if (existed) {
                changedHere.run();
                ctx.response().setStatusCode(204).end();
            } else {
                ctx.fail(new ProblemException(ProblemType.NOT_FOUND, "tenant '" + id + "' has no limits of its own"));
            }
        });
    }

    /** The tenant's usage on this router; zeros for a tenant it has not seen. */
    private void usage(RoutingContext ctx) {
        String id = tenantId(ctx);
        JsonObject usage = gate.usage().toJson(id).orElseGet(gate.usage()::empty);
        json(ctx, 200, usage.put("id", id));
    }

    private static String tenantId(RoutingContext ctx) {
        String id = ctx.pathParam("id");
        if (!TenantId.valid(id)) {
            throw new ProblemException(ProblemType.INVALID_VALUE, "tenant id must be " + TenantId.RULE, "id");
        }
        return id;
    }

    private static <T> Future<T> blocking(RoutingContext ctx, Callable<T> work) {
        return ctx.vertx().executeBlocking(work, false).onFailure(ctx::fail);
    }

    private static void json(RoutingContext ctx, int status, JsonObject body) {
        ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body.encode());
    }
}
