package io.nexuscore;

/** Wires the features together and starts the router. */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        System.err.println("nexuscore: not wired yet");
        System.exit(2);
    }
}
