package io.nexuscore.config;

/** A configuration value is missing or invalid; the message names the field. */
public final class ConfigException extends RuntimeException {

    public ConfigException(String message) {
        super(message);
    }

    public ConfigException(String message, Throwable cause) {
        super(message, cause);
    }
}
