package io.nexuscore.tenants;

import java.util.regex.Pattern;

/** What a tenant id may be, wherever one comes in: the control plane's path, the fleet's document. */
public final class TenantId {

    /** For error messages: the rule {@link #valid} checks. */
    public static final String RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";

    private static final Pattern ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    private TenantId() {
    }

    public static boolean valid(String id) {
        return id != null && ID.matcher(id).matches();
    }
}
