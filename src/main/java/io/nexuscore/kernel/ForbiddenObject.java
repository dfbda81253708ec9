package io.nexuscore.kernel;

/** A reload object that breaks a rule of {@link ReloadObjects}; {@link #rule()} names it. */
public final class ForbiddenObject extends RuntimeException {

    private final String rule;

    ForbiddenObject(String rule, String detail) {
        super(rule + ": " + detail, null, false, false);
        this.rule = rule;
    }

    public String rule() {
        return rule;
    }
}
